// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_noaccount: __GFP_NOACCOUNT keeps an allocation out of memcg
 * accounting, overriding __GFP_ACCOUNT and SLAB_ACCOUNT (patch 4/10).
 * The kmem_test module makes the allocations from a task in the cgroup.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

#define N 256

FIXTURE(cg) {
	char cg[KMEM_PATH_MAX];
};

FIXTURE_SETUP(cg)
{
	/* SKIP in a setup does not stop the test (6.1's harness): assert. */
	ASSERT_TRUE(kt_present());
	ASSERT_EQ(0, kcg_create_unique(self->cg, sizeof(self->cg), NULL, "noacct"));
}

FIXTURE_TEARDOWN(cg)
{
	kt_cmd("free");
	kt_cmd("cache_destroy");
	kcg_remove(self->cg);
}

/*
 * kmem usage growth of the cgroup while it runs CMD.  CMD runs once first,
 * unmeasured, and is undone: with per-cgroup caches (patch 5) the first
 * allocations from a cache come before the cgroup's copy exists.
 */
static int64_t growth(struct __test_metadata *_metadata, const char *cg,
		      const char *cmd)
{
	uint64_t before, after;

	EXPECT_EQ(0, kcg_run(cg, kt_cmd_fn, (void *)cmd));
	EXPECT_EQ(0, kt_cmd("free"));
	usleep(500 * 1000);
	before = kcg_u64(cg, KUSAGE);

	EXPECT_EQ(0, kcg_run(cg, kt_cmd_fn, (void *)cmd));
	after = kcg_u64(cg, KUSAGE);
	TH_LOG("%s: kmem %llu -> %llu", cmd, (unsigned long long)before,
	       (unsigned long long)after);
	return (int64_t)(after - before);
}

TEST_F(cg, pages)
{
	EXPECT_GE(growth(_metadata, self->cg, "pages 256 0 KERNEL|ACCOUNT"),
		  256 * KMEM_PAGE);
	EXPECT_LT(growth(_metadata, self->cg, "pages 256 0 KERNEL|ACCOUNT|NOACCOUNT"),
		  32 * KMEM_PAGE);
}

TEST_F(cg, kmalloc)
{
	/* 1 MiB of 4 KiB objects either way. */
	EXPECT_GE(growth(_metadata, self->cg, "kmalloc 256 4096 KERNEL|ACCOUNT"),
		  256 * 4096 * 9 / 10);
	EXPECT_LT(growth(_metadata, self->cg, "kmalloc 256 4096 KERNEL|ACCOUNT|NOACCOUNT"),
		  32 * KMEM_PAGE);
}

TEST_F(cg, slab_account_cache)
{
	ASSERT_EQ(0, kt_cmd("cache_create 512 ACCOUNT"));
	EXPECT_GE(growth(_metadata, self->cg, "cache_alloc 2048 KERNEL"),
		  2048 * 512 * 9 / 10);
	EXPECT_LT(growth(_metadata, self->cg, "cache_alloc 2048 KERNEL|NOACCOUNT"),
		  32 * KMEM_PAGE);
}

/* The flag has a name in %pGg (and so in tracing's flag list). */
TEST(flag_name)
{
	char buf[512];
	int fd;
	ssize_t n;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	ASSERT_EQ(0, kt_cmd("kmalloc 1 64 KERNEL|NOACCOUNT"));
	fd = open("/sys/kernel/debug/kmem_test/ctl", O_RDONLY);
	ASSERT_GE(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_GT(n, 0);
	buf[n] = '\0';
	kt_cmd("free");
	TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "__GFP_NOACCOUNT"));
}

TEST_HARNESS_MAIN
