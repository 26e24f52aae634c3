// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_fault: fault injection aimed at the series' own work.  Runs on the debug kernel only (ci/kernels), which has
 * CONFIG_FAIL_FUNCTION, CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC.
 *
 * x86_64 has no stack-trace filter for failslab (Kconfig: !X86_64), and a
 * per-cgroup cache is created by a worker, not by the allocating task, so
 * the series opens four of its functions to fail_function
 * (ALLOW_ERROR_INJECTION), and the tests make exactly those fail:
 *
 *   memcg_cache_name()                   the copy's name (NULL)
 *   memcg_kmem_cache_init_child()        the copy's creation, after its
 *                                        kmem_cache is allocated (-ENOMEM)
 *   memcg_kmem_cache_create_work_alloc() the deferred-work item (NULL)
 *   memcg_charge_slab()                  the charge of a copy's slab
 *                                        (-ENOMEM)
 *
 * For the first three, the allocation that asked for the copy must still be
 * served (from the original cache, counted in kernel_bypassed_memory), no
 * copy may appear while the fault is on, and one must appear at the next
 * allocation once it is off.  A failed charge must fail the allocation with
 * ENOMEM and leave the counters as they were.  Last, failslab and
 * fail_page_alloc fail random allocations of a task in a cgroup (files,
 * the module's cache): every failure is an error return, the counters come
 * back.  Leaks show in the kmemleak scan at the end of the run, crashes and
 * warnings in the kernel log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

#define FF "/sys/kernel/debug/fail_function"
#define TIMES 100000L
/* retval is parsed as an unsigned 64-bit number: -ENOMEM as such. */
#define ENOMEM_RETVAL "0xfffffffffffffff4"

static int put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static long get_long(const char *path)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = strtol(buf, NULL, 0);
		fclose(f);
	}
	return v;
}

/* A file of /sys/kernel/debug/ATTR/ (failslab, fail_page_alloc). */
static int set_attr(const char *attr, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s", attr, file);
	return put(path, val);
}

static long get_attr(const char *attr, const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s", attr, file);
	return get_long(path);
}

/*
 * Aim fail_function at FUNC with RETVAL; every call fails (TIMES budget), in
 * any task: its handler runs in int3 context, where a task filter never
 * matches.
 */
static int inject(const char *func, const char *retval)
{
	char path[256], t[32];
	int ret;

	put(FF "/inject", "");
	ret = put(FF "/inject", func);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), FF "/%s/retval", func);
	snprintf(t, sizeof(t), "%ld", TIMES);
	return put(path, retval) ?: put(FF "/probability", "100") ?: put(FF "/interval", "1") ?:
	       put(FF "/times", t) ?: put(FF "/verbose", "0") ?:
	       put(FF "/task-filter", "N");
}

/* Stop injecting; returns how many failures were injected. */
static long uninject(void)
{
	long left = get_long(FF "/times");

	put(FF "/inject", "");
	return left < 0 ? -1 : TIMES - left;
}

/* Lines of the list of copies that start with NAME. */
static int lines_of(const char *name)
{
	char line[1024];
	FILE *f = slabinfo_open_copies();
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, name, strlen(name));
	fclose(f);
	return n;
}

static int wait_lines(const char *name, int want, int secs)
{
	int i;

	for (i = 0; i < secs * 10 * kmem_scale(); i++) {
		if (lines_of(name) == want)
			return 0;
		usleep(100 * 1000);
	}
	return -1;
}

static int cmd_fn(void *arg)
{
	int ret = kt_cmd("%s", (const char *)arg);

	return ret ? -ret : 0;
}

/* The module's cache is made per test: any copy of it is this cgroup's. */
#define COPY "kmem_test_cache("

FIXTURE(cg) {
	char cg[KMEM_PATH_MAX];
};

/* Both fixtures: fail_function and the module, a cgroup, the module's cache. */
static void fault_setup(struct __test_metadata *_metadata, char *cg, size_t len)
{
	ASSERT_EQ(0, access(FF "/inject", W_OK)) TH_LOG("no fail_function in debugfs");
	ASSERT_TRUE(kt_present());
	ASSERT_EQ(0, kcg_create_unique(cg, len, NULL, "fault"));
	ASSERT_EQ(0, kt_cmd("cache_create 192 0"));
}

FIXTURE_SETUP(cg)
{
	fault_setup(_metadata, self->cg, sizeof(self->cg));
}

FIXTURE_TEARDOWN(cg)
{
	uninject();
	put("/sys/kernel/debug/failslab/probability", "0");
	put("/sys/kernel/debug/fail_page_alloc/probability", "0");
	kt_cmd("free");
	kt_cmd("cache_destroy");
	kcg_remove(self->cg);
}

/*
 * Creation fails at FUNC: the allocations are served, bypassed, no copy
 * appears; once the fault is off, the next allocation gets its copy.
 */
static void creation_fails(struct __test_metadata *_metadata, const char *cg,
			   const char *func, const char *retval)
{
	uint64_t by0, by1;
	long injected;

	by0 = kcg_stat(cg, "kernel_bypassed_memory");
	ASSERT_NE(UINT64_MAX, by0);
	ASSERT_EQ(0, inject(func, retval));
	/* Several rounds: each asks for the copy again once the last failed. */
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, kcg_run(cg, cmd_fn, "cache_alloc 20 KERNEL"));
		usleep(200 * 1000);
	}
	EXPECT_EQ(0, lines_of(COPY));
	injected = uninject();
	by1 = kcg_stat(cg, "kernel_bypassed_memory");
	TH_LOG("%s failed %ld times; 100 objects served from the original cache, "
	       "kernel_bypassed_memory %llu -> %llu", func, injected,
	       (unsigned long long)by0, (unsigned long long)by1);
	EXPECT_LT(0, injected);
	EXPECT_LE(by0 + 100 * 192, by1);
	/* Fault off: the copy comes. */
	ASSERT_EQ(0, kcg_run(cg, cmd_fn, "cache_alloc 1 KERNEL"));
	EXPECT_EQ(0, wait_lines(COPY, 1, 5));
	ASSERT_EQ(0, kcg_run(cg, cmd_fn, "cache_alloc 20 KERNEL"));
	EXPECT_EQ(0, kt_cmd("free"));
}

/* The three steps of a copy's creation, each made to fail in turn. */
FIXTURE(create) {
	char cg[KMEM_PATH_MAX];
};

FIXTURE_VARIANT(create) {
	const char *func;	/* the ALLOW_ERROR_INJECTION function */
	const char *retval;	/* what it returns when it fails */
};

FIXTURE_VARIANT_ADD(create, name_allocation) {
	.func = "memcg_cache_name", .retval = "0",
};

FIXTURE_VARIANT_ADD(create, cache_init) {
	.func = "memcg_kmem_cache_init_child", .retval = ENOMEM_RETVAL,
};

FIXTURE_VARIANT_ADD(create, deferred_work_item) {
	.func = "memcg_kmem_cache_create_work_alloc", .retval = "0",
};

FIXTURE_SETUP(create)
{
	fault_setup(_metadata, self->cg, sizeof(self->cg));
}

FIXTURE_TEARDOWN(create)
{
	uninject();
	kt_cmd("free");
	kt_cmd("cache_destroy");
	kcg_remove(self->cg);
}

TEST_F(create, step_fails)
{
	creation_fails(_metadata, self->cg, variant->func, variant->retval);
}

/*
 * A copy exists; charging its new slabs fails: ENOMEM, counters unchanged.
 * fail_function's handler runs in the kprobe's int3 context, where the
 * task filter never matches (in_task() is false there): the fault is on for
 * every task for the few seconds of the command, and nothing else charges
 * a copy's slab meanwhile (the other tasks of the guest are in the root).
 */
TEST_F(cg, slab_charge_fails)
{
	uint64_t k0, k1, k2;
	long injected;
	int ret;

	ASSERT_EQ(0, kcg_run(self->cg, cmd_fn, "cache_alloc 1 KERNEL"));
	ASSERT_EQ(0, wait_lines(COPY, 1, 5));
	ASSERT_EQ(0, kcg_run(self->cg, cmd_fn, "cache_alloc 1 KERNEL"));
	k0 = kcg_u64(self->cg, KUSAGE);
	ASSERT_EQ(0, inject("memcg_charge_slab", ENOMEM_RETVAL));
	/* 2000 objects of 192 bytes need new slabs: the first new one fails. */
	ret = kcg_run(self->cg, cmd_fn, "cache_alloc 2000 KERNEL");
	injected = uninject();
	k1 = kcg_u64(self->cg, KUSAGE);
	TH_LOG("charge failed %ld times; the command exited %d; kmem %llu -> %llu",
	       injected, ret, (unsigned long long)k0, (unsigned long long)k1);
	EXPECT_EQ(ENOMEM, ret);
	EXPECT_LT(0, injected);
	/* What was allocated before the failure stays charged, nothing more. */
	EXPECT_EQ(0, kt_cmd("free"));
	drop_caches(2);
	k2 = kcg_wait_at_most(self->cg, KUSAGE, k0, 10);
	EXPECT_LE(k2, k0);
	/* Fault off: the same command succeeds. */
	EXPECT_EQ(0, kcg_run(self->cg, cmd_fn, "cache_alloc 2000 KERNEL"));
	EXPECT_EQ(0, kt_cmd("free"));
}

static int files_failing_fn(void *arg)
{
	int err, fails = 0;
	long n;

	if (put("/proc/self/make-it-fail", "1"))
		return 99;
	n = make_files(arg, 1000, &err);
	if (n < 1000)
		fails++;
	for (int i = 0; i < 20; i++)
		if (kt_cmd("cache_alloc 50 KERNEL"))
			fails++;
	printf("# made %ld files (stopped by %s), %d failed commands\n", n,
	       n < 1000 ? strerror(err) : "nothing", fails);
	return 0;
}

/* failslab and fail_page_alloc on one task in the cgroup: errors, no more. */
TEST_F(cg, failslab_and_fail_page_alloc_in_cgroup)
{
	static const char *const attrs[] = { "failslab", "fail_page_alloc" };
	char dir[KMEM_PATH_MAX];
	long left[2];
	uint64_t k;
	int i;

	ASSERT_EQ(0, make_tmpdir(dir, sizeof(dir), "kmem-fault"));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, set_attr(attrs[i], "task-filter", "Y"));
		ASSERT_EQ(0, set_attr(attrs[i], "ignore-gfp-wait", "N"));
		ASSERT_EQ(0, set_attr(attrs[i], "verbose", "0"));
		ASSERT_EQ(0, set_attr(attrs[i], "interval", "1"));
		ASSERT_EQ(0, set_attr(attrs[i], "times", "1000"));
		ASSERT_EQ(0, set_attr(attrs[i], "probability", "5"));
	}
	ASSERT_EQ(0, put("/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N"));
	EXPECT_EQ(0, kcg_run(self->cg, files_failing_fn, dir));
	for (i = 0; i < 2; i++) {
		set_attr(attrs[i], "probability", "0");
		left[i] = get_attr(attrs[i], "times");
	}
	TH_LOG("injected: failslab %ld, fail_page_alloc %ld", 1000 - left[0], 1000 - left[1]);
	EXPECT_LT(0, 1000 - left[0]);
	remove_tree(dir);
	EXPECT_EQ(0, kt_cmd("free"));
	drop_caches(2);
	k = kcg_wait_at_most(self->cg, KUSAGE, 512 * 1024, 20);
	TH_LOG("kmem after freeing: %llu", (unsigned long long)k);
	EXPECT_LE(k, 512 * 1024);
}

TEST_HARNESS_MAIN
