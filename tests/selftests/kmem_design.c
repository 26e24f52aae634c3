// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_design: the slab accounting design is the one the command line chose
 * (patch 5/10).  Booted with cgroup.memory=kmemcaches, all slab is accounted
 * through per-cgroup copies of the caches; without it the series accounts
 * slab as 6.1 does: only SLAB_ACCOUNT caches and __GFP_ACCOUNT allocations,
 * per object, no copies, memory.kmem.slabinfo empty, no
 * kernel_bypassed_memory in memory.stat.  Each test reads /proc/cmdline and
 * checks the behaviour of the design it names, so the same binary runs on
 * both kinds of boot (ci/kernels: series and series-objects).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

#define NOBJ 2048
#define OBJSIZE 512

/* Did the command line ask for per-memcg caches (cgroup.memory=...kmemcaches...)? */
static int kmemcaches_chosen(void)
{
	char buf[4096], *tok, *save = NULL;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		char *opt, *osave = NULL;

		if (strncmp(tok, "cgroup.memory=", 14))
			continue;
		for (opt = strtok_r(tok + 14, ",", &osave); opt; opt = strtok_r(NULL, ",", &osave))
			if (!strcmp(opt, "kmemcaches"))
				return 1;
	}
	return 0;
}

FIXTURE(cg) {
	char cg[KMEM_PATH_MAX];
	int caches;
};

FIXTURE_SETUP(cg)
{
	self->caches = kmemcaches_chosen();
	TH_LOG("design: %s", self->caches ? "per-memcg caches (cgroup.memory=kmemcaches)" :
	       "per-object (6.1, the default)");
	ASSERT_EQ(0, kcg_create_unique(self->cg, sizeof(self->cg), NULL, "design"));
}

FIXTURE_TEARDOWN(cg)
{
	kt_cmd("free");
	kt_cmd("cache_destroy");
	kcg_remove(self->cg);
}

/*
 * NOBJ objects of a new cache, made by a task of the cgroup, the first one
 * alone (with per-memcg caches it asks for the copy, and a moment later the
 * copy serves the rest).  Returns the growth of the kmem counter.
 */
static int64_t charged_for_cache(struct __test_metadata *_metadata,
				 const char *cg, const char *cflags)
{
	char cmd[64];
	uint64_t before, after;

	snprintf(cmd, sizeof(cmd), "cache_create %d %s", OBJSIZE, cflags);
	if (kt_cmd("%s", cmd) || kcg_run(cg, kt_cmd_fn, "cache_alloc 1 KERNEL"))
		return -1;
	usleep(200000 * kmem_scale());
	before = kcg_u64(cg, KUSAGE);
	snprintf(cmd, sizeof(cmd), "cache_alloc %d KERNEL", NOBJ);
	if (kcg_run(cg, kt_cmd_fn, cmd))
		return -1;
	after = kcg_u64(cg, KUSAGE);
	TH_LOG("%s cache: kmem %llu -> %llu", cflags, (unsigned long long)before,
	       (unsigned long long)after);
	return (int64_t)(after - before);
}

/* A cache without SLAB_ACCOUNT: charged only with per-memcg caches. */
TEST_F(cg, unflagged_cache_follows_boot_choice)
{
	int64_t grew;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	grew = charged_for_cache(_metadata, self->cg, "0");
	ASSERT_GE(grew, 0);
	if (self->caches) {
		EXPECT_GE(grew, NOBJ * OBJSIZE * 9 / 10);
	} else {
		EXPECT_LT(grew, 64 * KMEM_PAGE);
	}
}

/* A SLAB_ACCOUNT cache is charged in both designs: nothing 6.1 charges is lost. */
TEST_F(cg, accounted_cache_charged_in_both)
{
	int64_t grew;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	grew = charged_for_cache(_metadata, self->cg, "ACCOUNT");
	EXPECT_GE(grew, NOBJ * OBJSIZE * 9 / 10);
}

/*
 * The files of the design: memory.kmem.slabinfo lists the cgroup's copies,
 * memory.stat has kernel_bypassed_memory; without per-memcg caches the file
 * is empty and the line absent, as in 6.1.
 */
TEST_F(cg, slabinfo_and_stat_follow_boot_choice)
{
	char buf[8192];
	ssize_t n;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	ASSERT_EQ(0, kt_cmd("cache_create %d 0", OBJSIZE));
	ASSERT_EQ(0, kcg_run(self->cg, kt_cmd_fn, "cache_alloc 1 KERNEL"));
	usleep(200000 * kmem_scale());
	ASSERT_EQ(0, kcg_run(self->cg, kt_cmd_fn, "cache_alloc 64 KERNEL"));
	n = kcg_read(self->cg, "memory.kmem.slabinfo", buf, sizeof(buf));
	ASSERT_GE(n, 0);
	TH_LOG("memory.kmem.slabinfo: %zd bytes", n);
	if (self->caches) {
		EXPECT_NE(NULL, strstr(buf, "kmem_test_cache("));
		EXPECT_NE(UINT64_MAX, kcg_stat(self->cg, "kernel_bypassed_memory"));
	} else {
		EXPECT_EQ(0, n);
		EXPECT_EQ(UINT64_MAX, kcg_stat(self->cg, "kernel_bypassed_memory"));
		EXPECT_EQ(UINT64_MAX, kcg_stat(self->cg, "total_kernel_bypassed_memory"));
	}
}

TEST_HARNESS_MAIN
