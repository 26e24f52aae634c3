// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_scale: the per-cgroup caches (patches 5/10 and 6/10) with hundreds
 * of cgroups: what their copies cost and who is charged for it, the size
 * of /proc/slabinfo, and a cache's destruction behind a backlog of copy
 * creations.
 *
 * These measure rather than race: the debug boot with KASAN leaves them
 * out (ci/kernels), the other boots, the debug SLAB one included, run them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

FIXTURE(cg) {
	char cg[KMEM_PATH_MAX];
	char dir[KMEM_PATH_MAX];
};

FIXTURE_SETUP(cg)
{
	ASSERT_EQ(0, kcg_create_unique(self->cg, sizeof(self->cg), NULL, "scale"));
	ASSERT_EQ(0, make_tmpdir(self->dir, sizeof(self->dir), "kmem-scale"));
}

FIXTURE_TEARDOWN(cg)
{
	kt_cmd("cache_destroy");
	remove_tree(self->dir);
	kcg_remove(self->cg);
}

#define MANY 1000

/* Lines of /proc/slabinfo. */
static int proc_slabinfo_lines(void)
{
	char line[1024];
	FILE *f = fopen("/proc/slabinfo", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

/* A short task: one file, a pipe. */
static int touch_fn(void *arg)
{
	char path[KMEM_PATH_MAX + 32];
	int fd, p[2];

	snprintf(path, sizeof(path), "%s/t%d", (const char *)arg, getpid());
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return 1;
	close(fd);
	if (pipe(p))
		return 1;
	close(p[0]);
	close(p[1]);
	return 0;
}

/*
 * 1,000 cgroups, each with copies of a few caches: /proc/slabinfo stays
 * the size it was (the copies are folded into their original's line, as
 * mainline 3.8-5.8 did; the OOM report's slab list uses the same folding),
 * and slabtop still reads it.  Not a feature test: 6.1 has no copies and
 * passes too.
 */
TEST_F_TIMEOUT(cg, proc_slabinfo_bounded_with_many_cgroups, 600)
{
	char child[KMEM_PATH_MAX], gone[KMEM_PATH_MAX + 32], name[32];
	/* Fewer on a slow (debug) kernel. */
	int many = MANY / kmem_scale() > 100 ? MANY / kmem_scale() : 100;
	int i, lines0, lines1, copies = 0, rc;

	lines0 = proc_slabinfo_lines();
	ASSERT_GT(lines0, 2);
	for (i = 0; i < many; i++) {
		snprintf(name, sizeof(name), "many%d", i);
		ASSERT_EQ(0, kcg_create(child, sizeof(child), self->cg, name));
		ASSERT_EQ(0, kcg_run(child, touch_fn, self->dir));
	}
	/* On the series, wait until the copies are made (by a worker). */
	for (i = 0; i < 100 * kmem_scale(); i++) {
		copies = slabinfo_copies(":many", 0, 0);
		if (!access("/sys/kernel/debug/memcg_slabinfo", R_OK) ? copies >= many : 1)
			break;
		usleep(100 * 1000);
	}
	lines1 = proc_slabinfo_lines();
	rc = system("slabtop -o > /tmp/kmem-slabtop.out 2>&1");
	TH_LOG("%d cgroups, %d copies listed apart; /proc/slabinfo %d lines before, %d after; "
	       "slabtop -o: status %d", many, copies, lines0, lines1, rc);
	EXPECT_EQ(0, rc);
	EXPECT_LE(lines1, lines0 + 20);
	for (i = 0; i < many; i++) {
		snprintf(gone, sizeof(gone), "%s/many%d", self->cg, i);
		EXPECT_EQ(0, kcg_remove(gone));
	}
}

/*
 * Slab and percpu memory in use, what is only cached released first, less
 * kmemleak's own objects (one per tracked allocation, charged to nobody by
 * design: a debug kernel's bookkeeping).
 */
static uint64_t slab_and_percpu(void)
{
	static const char *const debug[] = { "kmemleak_object", "kmemleak_scan_area" };
	uint64_t total, own = 0;
	struct slabline l;
	size_t i;

	slab_shrink_all();
	/* Folds the per-CPU vmstat deltas into the global counters. */
	kcg_write("/proc/sys/vm", "stat_refresh", "1");
	total = meminfo_bytes("Slab") + meminfo_bytes("Percpu");
	for (i = 0; i < sizeof(debug) / sizeof(debug[0]); i++) {
		if (!slab_line(debug[i], &l))
			own += (uint64_t)l.num_slabs * l.pagesperslab * KMEM_PAGE;
	}
	return total - own;
}

/*
 * A copy's own memory (its struct kmem_cache, per-node and per-CPU
 * structures, name, reference counter and, on SLUB, its sysfs directory)
 * is charged to the cgroup it was made for, so that a parent's limit bounds
 * what its children's copies cost.  Children are made first; then a task in
 * each touches some thirty caches, and the slab and percpu memory that
 * appears must be charged to the parent, but for a small margin per child
 * (the roots' xarray nodes of the children's ids, and list_lru heads, which
 * serve every cgroup).  Without the charge each copy leaves kilobytes
 * outside every limit.
 */
#define META_KIDS 200
#define META_MARGIN (8 * 1024)
TEST_F_TIMEOUT(cg, copy_metadata_charged_to_cgroup, 600)
{
	int kids = META_KIDS / kmem_scale() > 50 ? META_KIDS / kmem_scale() : 50;
	char child[KMEM_PATH_MAX + 32], name[32];
	uint64_t s0, s1, u0, u1;
	int i, copies = 0, prev = -1, stable = 0;
	long long grown, charged;

	for (i = 0; i < kids; i++) {
		snprintf(name, sizeof(name), "kmeta%d", i);
		ASSERT_EQ(0, kcg_create(child, sizeof(child), self->cg, name));
	}
	/*
	 * Start when the dead copies of earlier tests' cgroups are gone
	 * (thousands, from proc_slabinfo_bounded_with_many_cgroups: their
	 * release would be counted as negative growth), or stop going, and
	 * slab stays put (SLAB frees its arrays only every few seconds).
	 */
	for (i = 0, prev = -1; i < 120 * kmem_scale(); i++) {
		copies = slabinfo_copies(")dead", 0, 0);
		if (copies <= 0)
			break;
		stable = copies == prev ? stable + 1 : 0;
		if (stable >= 5)
			break;
		prev = copies;
		sleep(1);
	}
	TH_LOG("dead copies of earlier tests: %d after %d s", copies, i);
	copies = 0;
	prev = -1;
	stable = 0;
	s0 = s1 = slab_and_percpu();
	for (i = 0; i < 60 * kmem_scale(); i++) {
		sleep(1);
		s1 = slab_and_percpu();
		if (s1 < s0 + 256 * 1024 && s0 < s1 + 256 * 1024)
			break;
		s0 = s1;
	}
	s0 = s1;
	u0 = kcg_u64(self->cg, "memory.usage_in_bytes");
	ASSERT_NE(UINT64_MAX, u0);
	for (i = 0; i < kids; i++) {
		snprintf(child, sizeof(child), "%s/kmeta%d", self->cg, i);
		ASSERT_EQ(0, kcg_run(child, meta_fn, self->dir));
	}
	/* The copies are made by a worker: wait until their number settles. */
	for (i = 0; i < 600 * kmem_scale() && stable < 10; i++) {
		copies = slabinfo_copies(":kmeta", 0, 0);
		stable = copies == prev ? stable + 1 : 0;
		prev = copies;
		usleep(100 * 1000);
	}
	sleep(1);
	s1 = slab_and_percpu();
	u1 = kcg_u64(self->cg, "memory.usage_in_bytes");
	grown = (long long)(s1 - s0);
	charged = (long long)(u1 - u0);
	TH_LOG("%d cgroups, %d copies: slab+percpu grew %lld KiB, the parent was charged %lld KiB; "
	       "uncharged %lld B per cgroup, %lld B per copy (margin %d B per cgroup)",
	       kids, copies, grown / 1024, charged / 1024, (grown - charged) / kids,
	       copies ? (grown - charged) / copies : 0, META_MARGIN);
	/* The feature: each cgroup got copies. */
	EXPECT_GE(copies, 10 * kids);
	/* The copies' own memory is there to see, as the slab they keep. */
	EXPECT_GE(grown, (long long)copies * 1024);
	EXPECT_LE(grown - charged, (long long)kids * META_MARGIN);
	for (i = 0; i < kids; i++) {
		snprintf(child, sizeof(child), "%s/kmeta%d", self->cg, i);
		EXPECT_EQ(0, kcg_remove(child));
	}
}

/*
 * kmem_cache_destroy() of a cache no cgroup used waits for nothing of the
 * copies: not for the creations other caches' copies have queued (a
 * module unloading behind every cgroup's pending copies), nor for an RCU
 * barrier.  Hundreds of fresh cgroups ask for thousands of copies; while
 * the worker makes them, the module's cache is created and destroyed, and
 * that must take a fraction of the time the backlog takes.  Not a feature
 * test: 6.1 has no copies and passes too.
 */
#define BACKLOG_KIDS 300
TEST_F_TIMEOUT(cg, destroy_of_unused_cache_waits_for_no_creation, 300)
{
	int kids = BACKLOG_KIDS / kmem_scale() > 50 ? BACKLOG_KIDS / kmem_scale() : 50;
	char child[KMEM_PATH_MAX + 32], name[32];
	double t0, destroy, drained;
	int i, copies, prev = -1, stable = 0;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	for (i = 0; i < kids; i++) {
		snprintf(name, sizeof(name), "kback%d", i);
		ASSERT_EQ(0, kcg_create(child, sizeof(child), self->cg, name));
		ASSERT_EQ(0, kcg_run(child, meta_fn, self->dir));
	}
	t0 = now_ms();
	ASSERT_EQ(0, kt_cmd("cache_create 256 0"));
	ASSERT_EQ(0, kt_cmd("cache_destroy"));
	destroy = now_ms() - t0;
	copies = slabinfo_copies(":kback", 0, 0);
	for (i = 0; i < 600 * kmem_scale() && stable < 5; i++) {
		usleep(100 * 1000);
		copies = slabinfo_copies(":kback", 0, 0);
		stable = copies == prev ? stable + 1 : 0;
		prev = copies;
	}
	drained = now_ms() - t0 - 500;
	TH_LOG("%d cgroups, %d copies made in %.0f ms; create+destroy of an unused cache meanwhile: %.1f ms",
	       kids, copies, drained, destroy);
	EXPECT_LT(destroy, 100.0 * kmem_scale() + drained / 4);
	for (i = 0; i < kids; i++) {
		snprintf(child, sizeof(child), "%s/kback%d", self->cg, i);
		EXPECT_EQ(0, kcg_remove(child));
	}
}

TEST_HARNESS_MAIN
