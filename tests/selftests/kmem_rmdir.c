// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_rmdir: what happens to kernel memory when a cgroup is removed
 * (patch 2/10, "memcg: Uncharge all kmem when deleting a cgroup").
 *
 * The rule (memory.rst 2.7, patch 10/10): the removed cgroup's remaining kernel
 * memory moves to its parent, where it is counted exactly once, in the
 * counters of the mode it was charged in; freeing it later uncharges the
 * parent, and no counter underflows (the kernel-log check catches warnings).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

#define MUSAGE "memory.usage_in_bytes"
#define NFILES 3000
#define SLACK (256 * 1024)

FIXTURE(tree) {
	char parent[KMEM_PATH_MAX];
	char child[KMEM_PATH_MAX];
	char dir[KMEM_PATH_MAX];
};

FIXTURE_SETUP(tree)
{
	ASSERT_EQ(0, kcg_create_unique(self->parent, sizeof(self->parent), NULL, "rmdir"));
	ASSERT_EQ(0, make_tmpdir(self->dir, sizeof(self->dir), "kmem-rmdir"));
}

FIXTURE_TEARDOWN(tree)
{
	remove_tree(self->dir);
	kcg_remove(self->child);
	kcg_remove(self->parent);
}

static int64_t diff(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b);
}

/*
 * Mode 1: the child's kernel memory stays in the parent's kmem counter
 * (and out of its memory counter) after rmdir, and leaves it when freed.
 */
TEST_F_TIMEOUT(tree, mode1_charges_move_to_parent, 60)
{
	uint64_t k0, m0, k1, m1, k2, m2, k3, m3;

	ASSERT_EQ(0, kcg_write(self->parent, MODE, "1"));
	ASSERT_EQ(0, kcg_write(self->parent, "memory.kmem.limit_in_bytes", "256M"));
	ASSERT_EQ(0, kcg_create(self->child, sizeof(self->child), self->parent, "child"));
	k0 = kcg_u64(self->parent, KUSAGE);
	m0 = kcg_u64(self->parent, MUSAGE);
	ASSERT_EQ(0, kcg_make_files(self->child, self->dir, NFILES));
	k1 = kcg_u64_settled(self->parent, KUSAGE, 5);
	m1 = kcg_u64(self->parent, MUSAGE);
	ASSERT_EQ(0, kcg_remove(self->child));
	k2 = kcg_u64(self->parent, KUSAGE);
	m2 = kcg_u64(self->parent, MUSAGE);
	remove_tree(self->dir);
	k3 = kcg_wait_at_most(self->parent, KUSAGE, k0 + SLACK, 10);
	m3 = kcg_u64(self->parent, MUSAGE);
	TH_LOG("parent kmem %llu -> %llu -> rmdir %llu -> freed %llu",
	       (unsigned long long)k0, (unsigned long long)k1,
	       (unsigned long long)k2, (unsigned long long)k3);
	TH_LOG("parent memory %llu -> %llu -> rmdir %llu -> freed %llu",
	       (unsigned long long)m0, (unsigned long long)m1,
	       (unsigned long long)m2, (unsigned long long)m3);
	ASSERT_GT(diff(k1, k0), NFILES * 512);
	/* Counted once, still: rmdir neither drops nor doubles it. */
	EXPECT_LE(llabs(diff(k2, k1)), SLACK);
	/* Never in the memory counter. */
	EXPECT_LT(diff(m2, m0), diff(k1, k0) / 4);
	/* Freed: back to where the parent started. */
	EXPECT_LE(diff(k3, k0), SLACK);
	EXPECT_LE(k3, k1);
}

/*
 * memory.force_empty leaves only kernel memory in use, in mode 1 too, where
 * kernel memory is not part of the memory counter it empties.
 */
TEST_F(tree, mode1_force_empty_reclaims_kmem)
{
	char prefix[64];
	uint64_t before, after;

	ASSERT_EQ(0, kcg_write(self->parent, MODE, "1"));
	snprintf(prefix, sizeof(prefix), "fe-nx%d", getpid());
	ASSERT_EQ(0, kcg_negative_lookups(self->parent, prefix, 20000));
	before = kcg_u64(self->parent, KUSAGE);
	ASSERT_GT(before, 2 * KMEM_MIB);
	ASSERT_EQ(0, kcg_write(self->parent, "memory.force_empty", "0"));
	after = kcg_u64(self->parent, KUSAGE);
	TH_LOG("kmem %llu -> %llu after force_empty", (unsigned long long)before,
	       (unsigned long long)after);
	EXPECT_LT(after, before / 4);
}

TEST_HARNESS_MAIN
