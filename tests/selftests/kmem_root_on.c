// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_root_on: CONFIG_MEMCG_KMEM_ACCT_ROOT (patch 8/10).  Runs on the
 * kernels ci/kernels gives it to (the series built with ci/configs/
 * root.config, and the base kernel, where it must fail): the root cgroup's
 * memory.kmem.usage_in_bytes counts all slab no cgroup was charged for,
 * from boot on, and follows what root tasks allocate.
 */
#define _GNU_SOURCE
#include "kselftest_harness.h"
#include "kmem_root_common.h"

FIXTURE(root) {
	int unused;
};

FIXTURE_SETUP(root)
{
}

FIXTURE_TEARDOWN(root)
{
}

TEST_F(root, counts_unattributed_slab)
{
	uint64_t usage = root_kmem_settled(), slab = meminfo_slab();

	TH_LOG("root kmem usage %llu, Slab: %llu", (unsigned long long)usage,
	       (unsigned long long)slab);
	ASSERT_GT(slab, 0);
	/* Nearly all slab is the root's here: boot, kernel threads, init. */
	EXPECT_GE(usage, slab / 2);
}

TEST_F_TIMEOUT(root, follows_root_tasks, 60)
{
	long dentry = slab_objsize("dentry");
	uint64_t before, after;

	ASSERT_GT(dentry, 0);
	before = root_kmem_settled();
	ASSERT_EQ(0, root_lookups(20000));
	after = root_kmem_settled();
	TH_LOG("root kmem %llu -> %llu for 20000 dentries of %ld bytes",
	       (unsigned long long)before, (unsigned long long)after, dentry);
	EXPECT_GE(after, before + 20000ULL * dentry / 2);
	drop_caches(2);
}

TEST_HARNESS_MAIN
