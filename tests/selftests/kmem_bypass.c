// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_bypass: memory that should have been charged but was not is counted
 * (patch 7/10, "memcg: Count slab allocations that bypass the charge").  The first
 * allocations from a cache in a cgroup are served by the root cache while
 * the cgroup's copy is created: kernel_bypassed_memory counts their bytes,
 * total_kernel_bypassed_memory of the parent includes them, and freeing
 * them later underflows nothing (the run's kernel-log check).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

FIXTURE(tree) {
	char parent[KMEM_PATH_MAX];
	char child[KMEM_PATH_MAX];
};

FIXTURE_SETUP(tree)
{
	/* SKIP in a setup does not stop the test (6.1's harness): assert. */
	ASSERT_TRUE(kt_present());
	ASSERT_EQ(0, kcg_create_unique(self->parent, sizeof(self->parent), NULL, "bypass"));
	ASSERT_EQ(0, kcg_create(self->child, sizeof(self->child), self->parent, "c"));
}

FIXTURE_TEARDOWN(tree)
{
	kt_cmd("free");
	kt_cmd("cache_destroy");
	kcg_remove(self->child);
	kcg_remove(self->parent);
}

/* memory.stat is flushed every 2 s or so: poll for KEY >= MIN. */
static uint64_t stat_at_least(const char *cg, const char *key, uint64_t min)
{
	uint64_t v = UINT64_MAX;
	int i;

	for (i = 0; i < 50; i++) {
		v = kcg_stat(cg, key);
		if (v != UINT64_MAX && v >= min)
			break;
		usleep(100 * 1000);
	}
	return v;
}

TEST_F_TIMEOUT(tree, first_allocations_counted, 60)
{
	uint64_t own0, own, total, after_free;

	/*
	 * Warm up: the first allocations of the cgroup's tasks (fork, the
	 * module's file) are bypassed too; let their caches be created.
	 */
	ASSERT_EQ(0, kcg_run(self->child, kt_cmd_fn, "free"));
	sleep(3);
	own0 = kcg_stat(self->child, "kernel_bypassed_memory");
	ASSERT_NE(UINT64_MAX, own0);
	/* A fresh cache: the cgroup has no copy of it yet. */
	ASSERT_EQ(0, kt_cmd("cache_create 512 0"));
	ASSERT_EQ(0, kcg_run(self->child, kt_cmd_fn, "cache_alloc 4 ATOMIC"));
	own = stat_at_least(self->child, "kernel_bypassed_memory", own0 + 512);
	total = stat_at_least(self->parent, "total_kernel_bypassed_memory", own);
	TH_LOG("child %llu -> %llu, parent total %llu", (unsigned long long)own0,
	       (unsigned long long)own, (unsigned long long)total);
	/* At least the first object; not everything the task allocated. */
	EXPECT_GE(own - own0, 512);
	EXPECT_LE(own - own0, 64 * 1024);
	EXPECT_GE(total, own);
	/* Freeing what was never charged changes nothing and warns nowhere. */
	ASSERT_EQ(0, kt_cmd("free"));
	sleep(3);
	after_free = kcg_stat(self->child, "kernel_bypassed_memory");
	EXPECT_GE(after_free, own);
}

TEST_HARNESS_MAIN
