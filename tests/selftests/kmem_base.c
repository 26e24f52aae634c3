// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_base: what the cgroup-v1 memory controller of 6.1 already does with
 * kernel memory, and what the series must keep.  These tests pass on the
 * unpatched base kernel and on every kernel of the series (they are not in
 * tests/manifest).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

#define NFILES 5000

FIXTURE(cg) {
	char cg[KMEM_PATH_MAX];
	char dir[KMEM_PATH_MAX];
};

FIXTURE_SETUP(cg)
{
	ASSERT_EQ(0, kcg_create_unique(self->cg, sizeof(self->cg), NULL, "base"));
	ASSERT_EQ(0, make_tmpdir(self->dir, sizeof(self->dir), "kmem-base"));
}

FIXTURE_TEARDOWN(cg)
{
	remove_tree(self->dir);
	kcg_remove(self->cg);
}

/*
 * What NFILES empty tmpfs files cost: one dentry and one shmem inode each,
 * sized from /proc/slabinfo rather than from one observed run.
 */
static long files_cost(struct __test_metadata *_metadata)
{
	long dentry = slab_objsize("dentry");
	long inode = slab_objsize("shmem_inode_cache");

	ASSERT_GT(dentry, 0);
	ASSERT_GT(inode, 0);
	return NFILES * (dentry + inode);
}

/* A task that creates files in a child memcg raises its kmem usage. */
TEST_F(cg, usage_rises_with_files)
{
	uint64_t before = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	long cost = files_cost(_metadata);
	uint64_t after;

	ASSERT_NE(UINT64_MAX, before);
	ASSERT_EQ(0, kcg_make_files(self->cg, self->dir, NFILES));
	after = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	TH_LOG("kmem usage %llu -> %llu, objects cost %ld",
	       (unsigned long long)before, (unsigned long long)after, cost);
	/* Every object is charged: at least half the object bytes... */
	ASSERT_GE(after - before, (uint64_t)cost / 2);
	/* ...and not wildly more (slab pages, stock, the task's own). */
	ASSERT_LE(after - before, (uint64_t)cost * 4 + 4 * KMEM_MIB);
}

/* With the default mode kernel memory is part of memory.usage_in_bytes. */
TEST_F(cg, kmem_in_memory_usage)
{
	uint64_t mem0 = kcg_u64(self->cg, "memory.usage_in_bytes");
	uint64_t kmem0 = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	uint64_t mem1, kmem1;

	ASSERT_EQ(0, kcg_make_files(self->cg, self->dir, NFILES));
	mem1 = kcg_u64(self->cg, "memory.usage_in_bytes");
	kmem1 = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	TH_LOG("memory %llu -> %llu, kmem %llu -> %llu",
	       (unsigned long long)mem0, (unsigned long long)mem1,
	       (unsigned long long)kmem0, (unsigned long long)kmem1);
	ASSERT_GE(mem1, kmem1);
	ASSERT_GE(mem1 - mem0, (kmem1 - kmem0) / 2);
}

/* No limit was set, so nothing failed. */
TEST_F(cg, failcnt_zero)
{
	ASSERT_EQ(0, kcg_make_files(self->cg, self->dir, NFILES));
	ASSERT_EQ(0, kcg_u64(self->cg, "memory.kmem.failcnt"));
}

/* A cgroup whose objects outlive its tasks can still be removed. */
TEST_F(cg, rmdir_with_charged_objects)
{
	ASSERT_EQ(0, kcg_make_files(self->cg, self->dir, NFILES));
	ASSERT_GT(kcg_u64(self->cg, "memory.kmem.usage_in_bytes"), 0);
	ASSERT_EQ(0, kcg_remove(self->cg));
	ASSERT_EQ(0, access(self->cg, F_OK) == 0);
}

static int pages_fn(void *arg)
{
	return kt_cmd("pages %ld 0 KERNEL|ACCOUNT", (long)arg) ? 1 : 0;
}

/* __GFP_ACCOUNT pages from the test module are charged to the cgroup. */
TEST_F(cg, module_account_pages)
{
	const long n = 256;
	uint64_t before, after, freed;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	before = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	ASSERT_EQ(0, kcg_run(self->cg, pages_fn, (void *)n));
	after = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	ASSERT_EQ(0, kt_cmd("free"));
	freed = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	TH_LOG("kmem %llu -> %llu -> %llu", (unsigned long long)before,
	       (unsigned long long)after, (unsigned long long)freed);
	ASSERT_GE(after - before, (uint64_t)n * KMEM_PAGE);
	ASSERT_LE(after - before, (uint64_t)n * KMEM_PAGE + KMEM_MIB);
	ASSERT_LE(freed, before + KMEM_MIB / 4);
}

/*
 * Remote charging from interrupt context (set_active_memcg() in a timer,
 * __GFP_ACCOUNT): 6.1 charges the named cgroup, and so must the series
 * (it once served such allocations from the original cache, uncharged).
 * The cgroup's kmalloc-2k copy is made first, from a task.
 */
TEST_F(cg, interrupt_remote_charge)
{
	uint64_t before, after;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	ASSERT_EQ(0, kcg_run(self->cg, kt_cmd_fn, "kmalloc 4 2048 KERNEL|ACCOUNT"));
	usleep(500 * 1000);
	ASSERT_EQ(0, kcg_run(self->cg, kt_cmd_fn, "kmalloc 4 2048 KERNEL|ACCOUNT"));
	before = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	ASSERT_EQ(0, kcg_run(self->cg, kt_cmd_fn, "atomic_remote 512 2048"));
	after = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	TH_LOG("kmem %llu -> %llu for 512 x 2 KiB allocated in a timer",
	       (unsigned long long)before, (unsigned long long)after);
	ASSERT_EQ(0, kt_cmd("free"));
	EXPECT_GE(after - before, 512 * 2048 / 2);
}

/*
 * A task of the root cgroup that charges another cgroup (set_active_memcg(),
 * as the kernel does for a remote charge) charges that cgroup: the root
 * cgroup's allocations may skip the lookup of a cgroup to charge only when
 * they charge nobody.
 */
TEST_F(cg, remote_charge_by_root_task_charged)
{
	uint64_t before, after;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	ASSERT_EQ(0, kcg_run(self->cg, kt_cmd_fn, "remote_hold"));
	before = kcg_u64(self->cg, KUSAGE);
	ASSERT_EQ(0, kcg_run(memcg_mount(), kt_cmd_fn,
			     "remote_kmalloc 512 1024 KERNEL|ACCOUNT"));
	after = kcg_u64(self->cg, KUSAGE);
	TH_LOG("kmem %llu -> %llu for 512 x 1 KiB charged to it by a root task",
	       (unsigned long long)before, (unsigned long long)after);
	ASSERT_EQ(0, kt_cmd("free"));
	EXPECT_GE(after - before, 512 * 1024 * 9 / 10);
}

/*
 * What 6.1 charges per object is charged whichever cache serves it:
 * __GFP_ACCOUNT allocations that must not fail (__GFP_NOFAIL, which the
 * series serves from the original cache) and those of a SLAB_ACCOUNT cache
 * made before the cgroup's copy of it exists (the first ones, with
 * per-memcg caches).  Both were served uncharged by the series once.
 */
TEST_F(cg, accounted_without_a_copy_charged)
{
	uint64_t before, after;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	before = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	ASSERT_EQ(0, kcg_run(self->cg, kt_cmd_fn, "kmalloc 512 1024 KERNEL|ACCOUNT|NOFAIL"));
	after = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	TH_LOG("kmem %llu -> %llu for 512 x 1 KiB __GFP_NOFAIL|__GFP_ACCOUNT",
	       (unsigned long long)before, (unsigned long long)after);
	EXPECT_GE(after - before, 512 * 1024 * 9 / 10);
	ASSERT_EQ(0, kt_cmd("free"));

	/*
	 * A fresh SLAB_ACCOUNT cache: its first object comes before the copy.
	 * A page-sized object: a cgroup's per-cpu stock of charged bytes
	 * holds at most a page, so the counter must grow by one at least.
	 */
	ASSERT_EQ(0, kt_cmd("cache_create %ld ACCOUNT", KMEM_PAGE));
	before = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	ASSERT_EQ(0, kcg_run(self->cg, kt_cmd_fn, "cache_alloc 1 KERNEL"));
	after = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	TH_LOG("kmem %llu -> %llu for the first object of a SLAB_ACCOUNT cache",
	       (unsigned long long)before, (unsigned long long)after);
	EXPECT_GE(after - before, KMEM_PAGE);
	EXPECT_EQ(0, kt_cmd("cache_destroy"));
}

/*
 * list_lru (dentries, inodes: what memcg reclaim walks) files an object
 * under the cgroup it is charged to, whichever cache serves it: here
 * __GFP_NOFAIL|__GFP_ACCOUNT objects, which a kmemcaches boot serves from
 * the original cache and charges one by one.  Filed under no cgroup, they
 * would be charged to the cgroup yet out of its reclaim's reach.
 */
TEST_F(cg, charged_objects_on_their_cgroups_lru)
{
	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	ASSERT_EQ(0, kt_cmd("cache_create 64 0"));
	EXPECT_EQ(0, kcg_run(self->cg, kt_cmd_fn, "lru_owner 100 KERNEL|ACCOUNT|NOFAIL"));
	TH_LOG("lru_owned %lld of 100", kt_value("lru_owned"));
	EXPECT_EQ(100, kt_value("lru_owned"));
	EXPECT_EQ(0, kt_cmd("cache_destroy"));
}

/* Limits cannot be set on the root cgroup. */
TEST(root_kmem_limit_einval)
{
	EXPECT_EQ(-EINVAL, kcg_write(NULL, "memory.kmem.limit_in_bytes", "1G"));
}

/*
 * Failed lookups in sysfs leave negative dentries that are charged to the
 * cgroup (the workload kmem_reclaim relies on to have reclaimable kmem).
 */
TEST_F_TIMEOUT(cg, negative_sysfs_lookups_charged, 60)
{
	long dentry = slab_objsize("dentry");
	uint64_t before = kcg_u64(self->cg, "memory.kmem.usage_in_bytes"), after;
	char prefix[64];

	ASSERT_GT(dentry, 0);
	snprintf(prefix, sizeof(prefix), "base-nx%d", getpid());
	ASSERT_EQ(0, kcg_negative_lookups(self->cg, prefix, 20000));
	after = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	TH_LOG("kmem %llu -> %llu for 20000 lookups", (unsigned long long)before,
	       (unsigned long long)after);
	ASSERT_GE(after - before, (uint64_t)20000 * dentry / 2);
	/*
	 * They are reclaimable: dropping caches gives most of it back, once
	 * RCU has freed the dentries (and, with per-page accounting, their
	 * slabs are empty).
	 */
	ASSERT_EQ(0, drop_caches(2));
	ASSERT_LT(kcg_wait_at_most(self->cg, "memory.kmem.usage_in_bytes",
				  before + (after - before) / 2, 10),
		  before + (after - before) / 2);
}

/* Mode 0: after rmdir the parent accounts the child's objects once. */
TEST_F_TIMEOUT(cg, rmdir_charges_move_to_parent, 60)
{
	char child[KMEM_PATH_MAX];
	uint64_t k0, k1, k1_now, k2, k3;

	ASSERT_EQ(0, kcg_create(child, sizeof(child), self->cg, "child"));
	k0 = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	ASSERT_EQ(0, kcg_make_files(child, self->dir, NFILES));
	k1_now = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	k1 = kcg_u64_settled(self->cg, "memory.kmem.usage_in_bytes", 5);
	ASSERT_EQ(0, kcg_remove(child));
	k2 = kcg_u64(self->cg, "memory.kmem.usage_in_bytes");
	remove_tree(self->dir);
	k3 = kcg_wait_at_most(self->cg, "memory.kmem.usage_in_bytes", k0 + 256 * 1024, 10);
	TH_LOG("parent kmem %llu -> %llu (settled %llu) -> rmdir %llu -> freed %llu",
	       (unsigned long long)k0, (unsigned long long)k1_now,
	       (unsigned long long)k1, (unsigned long long)k2,
	       (unsigned long long)k3);
	ASSERT_GT(k1 - k0, (uint64_t)files_cost(_metadata) / 2);
	EXPECT_LE(k2 > k1 ? k2 - k1 : k1 - k2, 256 * 1024);
	EXPECT_LE(k3, k0 + 256 * 1024);
	EXPECT_LE(kcg_u64(self->cg, "memory.usage_in_bytes"), k1);
}

/*
 * User space written for 6.1 writes memory.kmem.limit_in_bytes and expects
 * success: older container runtimes write 1, then -1, to turn kmem
 * accounting "on".  6.1 accepts such writes and ignores them; in mode 0
 * (the default) the series must do the same.
 */
TEST_F(cg, old_runtime_kmem_limit_writes)
{
	static const char *const writes[] = { "1", "-1", "64M", "0", "-1" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(writes); i++) {
		EXPECT_EQ(0, kcg_write(self->cg, "memory.kmem.limit_in_bytes", writes[i])) {
			TH_LOG("writing \"%s\" failed", writes[i]);
		}
		EXPECT_EQ(9223372036854771712ULL,
			  kcg_u64(self->cg, "memory.kmem.limit_in_bytes"));
	}
	/* Garbage is refused as 6.1 refuses it. */
	EXPECT_EQ(-EINVAL, kcg_write(self->cg, "memory.kmem.limit_in_bytes", "lots"));
}

/*
 * The writes above log 6.1's one-time warning, word for word: log
 * watchers and support scripts match it.  A log that has dropped every
 * such line (the ring buffer wrapped) cannot tell: SKIP.
 */
TEST_F(cg, kmem_limit_warning_as_6_1)
{
	static const char want[] = "kmem.limit_in_bytes is deprecated and will be removed. "
		"Writing any value to this file has no effect. Please report your usecase "
		"to linux-mm@kvack.org if you depend on this functionality.";
	static char rec[8192];
	int fd, seen = 0, exact = 0;
	ssize_t n;

	ASSERT_EQ(0, kcg_write(self->cg, "memory.kmem.limit_in_bytes", "-1"));
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		SKIP(return, "/dev/kmsg: %s", strerror(errno));
	/* One record per read(); EAGAIN at the end, EPIPE after an overrun. */
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		char *msg;

		if (n <= 0)
			continue;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg || !strstr(msg, "kmem.limit_in_bytes is deprecated"))
			continue;
		seen++;
		*strchrnul(msg, '\n') = '\0';
		if (!strcmp(msg + 1, want))
			exact++;
		else
			TH_LOG("logged: %s", msg + 1);
	}
	close(fd);
	if (!seen)
		SKIP(return, "no kmem.limit_in_bytes warning left in the kernel log");
	EXPECT_EQ(seen, exact);
}

static int many_files_fn(void *arg)
{
	int err;

	make_files(arg, 60000, &err);
	return 0;
}

/*
 * No configuration lets a cgroup's memory escape a limit an ancestor set: a
 * child under a parent limited by memory.limit_in_bytes stays within it,
 * whatever it writes to its own files (here: it asks for the independent
 * kmem limit, which would take its kernel memory out of the memory
 * counter).  60,000 empty files need about 60 MiB of dentries and inodes.
 */
TEST_F_TIMEOUT(cg, child_stays_within_parent_memory_limit, 120)
{
	const uint64_t limit = 16 * KMEM_MIB, slack = 2 * KMEM_MIB;
	char child[KMEM_PATH_MAX];
	uint64_t kmem, max_usage;
	int ret, sig;

	ASSERT_EQ(0, kcg_write(self->cg, "memory.limit_in_bytes", "16M"));
	ASSERT_EQ(0, kcg_create(child, sizeof(child), self->cg, "child"));
	ret = kcg_write(child, "memory.kmem.independent_kmem_limit", "1");
	TH_LOG("child's mode write: %s", ret ? strerror(-ret) : "accepted");
	ret = kcg_run_sig(child, many_files_fn, self->dir, &sig);
	kmem = kcg_u64(child, "memory.kmem.usage_in_bytes");
	max_usage = kcg_u64(self->cg, "memory.max_usage_in_bytes");
	TH_LOG("files task: exit %d signal %d; child kmem %llu, parent max usage %llu",
	       ret, sig, (unsigned long long)kmem, (unsigned long long)max_usage);
	remove_tree(self->dir);
	EXPECT_LE(max_usage, limit + slack);
	EXPECT_LE(kmem, limit + slack);
	kcg_remove(child);
}

TEST_HARNESS_MAIN
