// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_root_off: without CONFIG_MEMCG_KMEM_ACCT_ROOT the root cgroup's
 * memory.kmem.usage_in_bytes is what 6.1 shows: the kernel memory charged
 * to the cgroups below it, nothing of the root's own tasks.  Runs on the
 * base kernel and on the series built without the option (ci/kernels).
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

TEST_F_TIMEOUT(root, task_allocations_not_counted, 60)
{
	long dentry = slab_objsize("dentry");
	uint64_t before, after;

	ASSERT_GT(dentry, 0);
	before = root_kmem_settled();
	ASSERT_EQ(0, root_lookups(20000));
	after = root_kmem_settled();
	TH_LOG("root kmem %llu -> %llu for 20000 dentries of %ld bytes",
	       (unsigned long long)before, (unsigned long long)after, dentry);
	EXPECT_LT(after, before + 20000ULL * dentry / 4);
	EXPECT_LT(after, meminfo_slab() / 2);
	drop_caches(2);
}

TEST_HARNESS_MAIN
