// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_mode: memory.kmem.independent_kmem_limit and memory.kmem.limit_in_bytes
 * (patch 1/10, "memcg: Kernel memory accounting infrastructure").
 * The contract tested here: memory.rst 2.7 (patch 10/10).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

#define UNLIMITED 9223372036854771712ULL

FIXTURE(cg) {
	char cg[KMEM_PATH_MAX];
	char child[KMEM_PATH_MAX];
	char dir[KMEM_PATH_MAX];
};

FIXTURE_SETUP(cg)
{
	self->child[0] = '\0';
	ASSERT_EQ(0, kcg_create_unique(self->cg, sizeof(self->cg), NULL, "mode"));
	ASSERT_EQ(0, make_tmpdir(self->dir, sizeof(self->dir), "kmem-mode"));
}

FIXTURE_TEARDOWN(cg)
{
	remove_tree(self->dir);
	if (self->child[0])
		kcg_remove(self->child);
	kcg_remove(self->cg);
}

/* Create files until an error; exit status: 0 = stopped by ENOMEM/ENOSPC. */
static int files_until_fail_fn(void *arg)
{
	long n;
	int err;

	n = make_files(arg, 200000, &err);
	printf("# made %ld files, stopped by errno %d (%s)\n", n, err, strerror(err));
	fflush(stdout);
	if (n == 200000)
		return 2;
	return (err == ENOMEM || err == ENOSPC) ? 0 : 3;
}

static int nothing_fn(void *arg)
{
	return 0;
}

TEST_F(cg, default_zero)
{
	ASSERT_EQ(0, kcg_u64(self->cg, MODE));
}

TEST_F(cg, accepts_0_and_1)
{
	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(1, kcg_u64(self->cg, MODE));
	ASSERT_EQ(0, kcg_write(self->cg, MODE, "0\n"));
	ASSERT_EQ(0, kcg_u64(self->cg, MODE));
	ASSERT_EQ(0, kcg_write(self->cg, MODE, " 1 \n"));
	ASSERT_EQ(1, kcg_u64(self->cg, MODE));
	/* Writing the current value is a no-op that succeeds. */
	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
}

TEST_F(cg, rejects_bad_values)
{
	/* (A zero-length write(2) never reaches the file: "\n" is "empty".) */
	static const char *const bad[] = { "2", "-1", "abc", "\n", " ", "1x", "0 1", "10",
					   "01x", "99999999999999999999" };
	unsigned int i;

	ASSERT_EQ(0, kcg_u64(self->cg, MODE));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		TH_LOG("writing '%s'", bad[i]);
		EXPECT_EQ(-EINVAL, kcg_write(self->cg, MODE, bad[i]));
		EXPECT_EQ(0, kcg_u64(self->cg, MODE));
	}
}

TEST(root_rejects_writes)
{
	ASSERT_EQ(0, kcg_u64(NULL, MODE));
	EXPECT_EQ(-EINVAL, kcg_write(NULL, MODE, "1"));
	EXPECT_EQ(-EINVAL, kcg_write(NULL, MODE, "0"));
	EXPECT_EQ(0, kcg_u64(NULL, MODE));
}

TEST_F(cg, busy_with_kmem)
{
	ASSERT_EQ(0, kcg_make_files(self->cg, self->dir, 2000));
	ASSERT_GT(kcg_u64(self->cg, KUSAGE), 0);
	EXPECT_EQ(-EBUSY, kcg_write(self->cg, MODE, "1"));
	EXPECT_EQ(0, kcg_u64(self->cg, MODE));
}

TEST_F(cg, busy_with_child)
{
	ASSERT_EQ(0, kcg_create(self->child, sizeof(self->child), self->cg, "child"));
	EXPECT_EQ(-EBUSY, kcg_write(self->cg, MODE, "1"));
	EXPECT_EQ(0, kcg_u64(self->cg, MODE));
}

/*
 * Once the child is gone the mode can change: a removed child no longer
 * counts, though its memcg structures (charged to this cgroup at mkdir)
 * keep kmem charged until the kernel frees it, shortly after.
 */
TEST_F(cg, mode_changes_after_child_removed)
{
	int i, ret = -1;

	ASSERT_EQ(0, kcg_create(self->child, sizeof(self->child), self->cg, "child"));
	ASSERT_EQ(0, kcg_remove(self->child));
	self->child[0] = '\0';
	for (i = 0; i < 100; i++) {
		ret = kcg_write(self->cg, MODE, "1");
		if (ret != -EBUSY)
			break;
		usleep(100 * 1000);
	}
	TH_LOG("mode write after %d tries: %d, kmem usage %llu", i + 1, ret,
	       (unsigned long long)kcg_u64(self->cg, KUSAGE));
	EXPECT_EQ(0, ret);
	EXPECT_EQ(1, kcg_u64(self->cg, MODE));
}

/* Mode 1 covers a whole subtree: inherited, and a child cannot leave it. */
TEST_F(cg, inherited_by_children)
{
	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(0, kcg_create(self->child, sizeof(self->child), self->cg, "child"));
	EXPECT_EQ(1, kcg_u64(self->child, MODE));
	EXPECT_EQ(-EINVAL, kcg_write(self->child, MODE, "0"));
	EXPECT_EQ(1, kcg_u64(self->child, MODE));
}

/* Mode 0 is 6.1's ABI: limit writes are accepted and change nothing. */
TEST_F(cg, mode0_limit_write_ignored)
{
	ASSERT_EQ(0, kcg_u64(self->cg, MODE));
	EXPECT_EQ(0, kcg_write(self->cg, KLIMIT, "16M"));
	EXPECT_EQ(UNLIMITED, kcg_u64(self->cg, KLIMIT));
	EXPECT_EQ(0, kcg_write(self->cg, KLIMIT, "-1"));
	EXPECT_EQ(UNLIMITED, kcg_u64(self->cg, KLIMIT));
	EXPECT_EQ(0, kcg_u64(self->cg, MODE));
}

/*
 * Mode 1 takes kernel memory out of the memory counter: under a mode-0
 * parent, whose memory.limit_in_bytes would no longer hold it, a cgroup
 * cannot switch to it.  Under the root, or a mode-1 parent, it can.
 */
TEST_F(cg, mode1_refused_under_mode0_parent)
{
	char top[KMEM_PATH_MAX];

	ASSERT_EQ(0, kcg_create(self->child, sizeof(self->child), self->cg, "child"));
	ASSERT_EQ(0, kcg_u64(self->cg, MODE));
	EXPECT_EQ(-EINVAL, kcg_write(self->child, MODE, "1"));
	EXPECT_EQ(0, kcg_u64(self->child, MODE));
	/*
	 * A child of the root may (a fresh one: the parent stays EBUSY for a
	 * moment after its child's rmdir, see mode_changes_after_child_removed).
	 */
	ASSERT_EQ(0, kcg_create_unique(top, sizeof(top), NULL, "mode-top"));
	EXPECT_EQ(0, kcg_write(top, MODE, "1"));
	EXPECT_EQ(1, kcg_u64(top, MODE));
	kcg_remove(top);
}

TEST_F(cg, mode1_limit_settable)
{
	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "64M"));
	EXPECT_EQ(64ULL << 20, kcg_u64(self->cg, KLIMIT));
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "1000000"));
	EXPECT_EQ(1000000ULL / KMEM_PAGE * KMEM_PAGE, kcg_u64(self->cg, KLIMIT));
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "-1"));
	EXPECT_EQ(UNLIMITED, kcg_u64(self->cg, KLIMIT));
	EXPECT_EQ(-EINVAL, kcg_write(self->cg, KLIMIT, "lots"));
	EXPECT_EQ(UNLIMITED, kcg_u64(self->cg, KLIMIT));
	/* Back to mode 0: the limit goes with it. */
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "64M"));
	ASSERT_EQ(0, kcg_write(self->cg, MODE, "0"));
	EXPECT_EQ(UNLIMITED, kcg_u64(self->cg, KLIMIT));
}

/* Mode 1: kernel memory shows in the kmem counter, not in memory.usage. */
TEST_F(cg, mode1_kmem_not_in_memory)
{
	uint64_t mem0, kmem0, mem1, kmem1;

	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	mem0 = kcg_u64(self->cg, "memory.usage_in_bytes");
	kmem0 = kcg_u64(self->cg, KUSAGE);
	ASSERT_EQ(0, kcg_make_files(self->cg, self->dir, 2000));
	mem1 = kcg_u64(self->cg, "memory.usage_in_bytes");
	kmem1 = kcg_u64(self->cg, KUSAGE);
	TH_LOG("memory %llu -> %llu, kmem %llu -> %llu",
	       (unsigned long long)mem0, (unsigned long long)mem1,
	       (unsigned long long)kmem0, (unsigned long long)kmem1);
	ASSERT_GE(kmem1 - kmem0, 2000 * 512);
	/* What memory.usage gained is the task's own user memory at most. */
	ASSERT_LT(mem1 - mem0, (kmem1 - kmem0) / 4);
}

/* Mode 1 with a small limit: allocations fail instead of passing it. */
TEST_F_TIMEOUT(cg, mode1_limit_enforced, 60)
{
	const uint64_t limit = 4 * KMEM_MIB;
	uint64_t usage, failcnt;

	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "4M"));
	ASSERT_EQ(0, kcg_run(self->cg, files_until_fail_fn, self->dir));
	usage = kcg_u64(self->cg, KUSAGE);
	failcnt = kcg_u64(self->cg, "memory.kmem.failcnt");
	TH_LOG("usage %llu, max %llu, failcnt %llu", (unsigned long long)usage,
	       (unsigned long long)kcg_u64(self->cg, "memory.kmem.max_usage_in_bytes"),
	       (unsigned long long)failcnt);
	EXPECT_LE(usage, limit);
	EXPECT_LE(kcg_u64(self->cg, "memory.kmem.max_usage_in_bytes"), limit);
	EXPECT_GT(failcnt, 0);
	/*
	 * Freeing the files makes the cgroup usable again (dentries and
	 * inodes are freed after a grace period, their slabs after that).
	 */
	remove_tree(self->dir);
	EXPECT_LT(kcg_wait_at_most(self->cg, KUSAGE, limit / 4, 10), limit / 2);
	EXPECT_EQ(0, kcg_run(self->cg, nothing_fn, NULL));
}

/*
 * Touch one byte every 2 MiB of an 8 GiB mapping: each touch needs a new
 * page table page (kernel memory, charged to the kmem counter in mode 1).
 */
static int pgtables_fn(void *arg)
{
	const size_t len = 8UL << 30, step = 2UL << 20;
	size_t off;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	for (off = 0; off < len; off += step)
		p[off] = 1;
	return 0;
}

/* pgtables_fn() in a new task of CG: its pid, or -1. */
static pid_t fork_pgtables(const char *cg)
{
	char pid_s[32];
	pid_t pid = fork();

	if (pid)
		return pid;
	snprintf(pid_s, sizeof(pid_s), "%d", getpid());
	if (kcg_write(cg, "cgroup.procs", pid_s))
		_exit(125);
	_exit(pgtables_fn(NULL));
}

/*
 * A page fault that cannot charge its page tables at the kmem limit must
 * not spin: without an OOM kill behind the limit, VM_FAULT_OOM is retried
 * forever.  The memcg OOM killer ends the task instead.
 */
TEST_F_TIMEOUT(cg, mode1_fault_at_limit_does_not_spin, 120)
{
	int status = 0, waited_ms = 0, limit_ms = 30000 * kmem_scale();
	pid_t pid;

	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "2M"));
	pid = fork_pgtables(self->cg);
	ASSERT_GE(pid, 0);
	while (waitpid(pid, &status, WNOHANG) == 0 && waited_ms < limit_ms) {
		usleep(100 * 1000);
		waited_ms += 100;
	}
	if (waited_ms >= limit_ms) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		TH_LOG("the task still ran after %d ms at the kmem limit: it spins", waited_ms);
	}
	TH_LOG("after %d ms: %s %d; kmem usage %llu, failcnt %llu", waited_ms,
	       WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
	       (unsigned long long)kcg_u64(self->cg, KUSAGE),
	       (unsigned long long)kcg_u64(self->cg, "memory.kmem.failcnt"));
	EXPECT_LT(waited_ms, limit_ms);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	EXPECT_GT(kcg_u64(self->cg, "memory.kmem.failcnt"), 0);
	/* A task being killed may charge past the limit on its way out. */
	EXPECT_LE(kcg_u64(self->cg, "memory.kmem.max_usage_in_bytes"),
		  2 * KMEM_MIB + 256 * 1024);
}

/*
 * A dying task is held to the kmem limit too: no OOM killer stands behind
 * it to take back what a task looping in the kernel without checking
 * signals charges, and the objects outlive the task.  The test module
 * sends its writer SIGKILL, then makes 64 MiB of accounted allocations in
 * a loop that stops only at the first failure.
 */
TEST_F_TIMEOUT(cg, mode1_dying_task_held_to_limit, 60)
{
	const uint64_t limit = 8 * KMEM_MIB;
	uint64_t usage, max;
	int ret, sig = 0;

	if (!kt_present())
		SKIP(return, "the kmem_test module is not loaded");
	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "8M"));
	ret = kcg_run_sig(self->cg, kt_cmd_fn, "dying 16384 4096 KERNEL|ACCOUNT", &sig);
	usage = kcg_u64(self->cg, KUSAGE);
	max = kcg_u64(self->cg, "memory.kmem.max_usage_in_bytes");
	TH_LOG("task: status %d signal %d; kmem usage %llu, max usage %llu, failcnt %llu",
	       ret, sig, (unsigned long long)usage, (unsigned long long)max,
	       (unsigned long long)kcg_u64(self->cg, "memory.kmem.failcnt"));
	ASSERT_EQ(0, kt_cmd("free"));
	EXPECT_EQ(SIGKILL, sig);
	EXPECT_LE(max, limit);
	EXPECT_GT(kcg_u64(self->cg, "memory.kmem.failcnt"), 0);
}

/*
 * With memory.oom_control's oom_kill_disable a fault at the kmem limit
 * waits (under_oom 1) instead of killing; raising the kmem limit must let
 * it go on, as raising memory.limit_in_bytes does for a fault at that one.
 * Without a wake-up the task would sleep until some unrelated uncharge.
 */
TEST_F_TIMEOUT(cg, mode1_oom_disabled_fault_goes_on_when_limit_raised, 120)
{
	int status = 0, waited_ms, limit_ms = 10000 * kmem_scale();
	char buf[256];
	pid_t pid;

	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "2M"));
	ASSERT_EQ(0, kcg_write(self->cg, "memory.oom_control", "1"));
	pid = fork_pgtables(self->cg);
	ASSERT_GE(pid, 0);
	/* The task reaches the limit and waits. */
	for (waited_ms = 0; waited_ms < limit_ms; waited_ms += 100) {
		if (kcg_read(self->cg, "memory.oom_control", buf, sizeof(buf)) > 0 &&
		    strstr(buf, "under_oom 1"))
			break;
		usleep(100 * 1000);
	}
	TH_LOG("under_oom after %d ms; kmem usage %llu", waited_ms,
	       (unsigned long long)kcg_u64(self->cg, KUSAGE));
	EXPECT_LT(waited_ms, limit_ms);
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "256M"));
	for (waited_ms = 0; waited_ms < limit_ms; waited_ms += 100) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(100 * 1000);
	}
	if (waited_ms >= limit_ms) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		TH_LOG("still waiting %d ms after the kmem limit was raised", waited_ms);
	}
	EXPECT_LT(waited_ms, limit_ms);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		TH_LOG("task: %s %d", WIFSIGNALED(status) ? "signal" : "exit",
		       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
}

struct mode_write {
	const char *cg;
	int ret;
	double ms;
};

static void *mode_write_fn(void *arg)
{
	struct mode_write *w = arg;
	double t = now_ms();

	w->ret = kcg_write(w->cg, MODE, "1");
	w->ms = now_ms() - t;
	return NULL;
}

/*
 * mkdir and rmdir take memcg_kmem_mode_mutex under cgroup_mutex, so a mode
 * write must not wait for anything long while it holds that mutex.  It
 * waits for the drains of the per-cpu charge stocks, work items on every
 * CPU: a real-time task that keeps CPU 1 (with kernel memory of the cgroup
 * in CPU 1's stock) makes that wait last as long as the task runs.  While
 * the write waits, mkdir and rmdir of an unrelated cgroup on CPU 0 must
 * complete; the CPU is given back only after they did (or after 3 s).
 */
TEST_F_TIMEOUT(cg, mode_write_wait_does_not_block_mkdir, 60)
{
	struct sched_param sp = { .sched_priority = 10 };
	struct mode_write w = { .cg = self->cg };
	char saved_rt[32] = "", other[KMEM_PATH_MAX], pid[32], ready;
	double pair_ms, t;
	volatile int *stop;
	time_t deadline;
	pthread_t th;
	int p[2], status, ret;
	pid_t child;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs: one held, one for mkdir");
	stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, stop);
	*stop = 0;
	ASSERT_LT(0, kcg_read("/proc/sys/kernel", "sched_rt_runtime_us", saved_rt,
			      sizeof(saved_rt)));
	ASSERT_EQ(0, set_cpu(0));
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, kcg_write("/proc/sys/kernel", "sched_rt_runtime_us", "-1"));
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		int q[2];

		snprintf(pid, sizeof(pid), "%d", getpid());
		/* Kernel memory charged on CPU 1 leaves the cgroup in its stock. */
		if (set_cpu(1) || kcg_write(self->cg, "cgroup.procs", pid) || pipe(q) ||
		    sched_setscheduler(0, SCHED_FIFO, &sp))
			_exit(1);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		deadline = time(NULL) + 3 * kmem_scale();
		while (!*stop && time(NULL) < deadline)
			;
		_exit(0);
	}
	close(p[1]);
	ret = read(p[0], &ready, 1);
	close(p[0]);
	ASSERT_EQ(1, ret);
	ASSERT_EQ(0, pthread_create(&th, NULL, mode_write_fn, &w));
	usleep(300 * 1000);
	t = now_ms();
	ret = kcg_create_unique(other, sizeof(other), NULL, "bystander");
	if (!ret)
		ret = kcg_remove(other);
	pair_ms = now_ms() - t;
	*stop = 1;
	pthread_join(th, NULL);
	waitpid(child, &status, 0);
	kcg_write("/proc/sys/kernel", "sched_rt_runtime_us", saved_rt);
	munmap((void *)stop, 4096);
	TH_LOG("mode write: %s after %.0f ms; mkdir+rmdir meanwhile %.1f ms",
	       w.ret ? strerror(-w.ret) : "success", w.ms, pair_ms);
	EXPECT_EQ(0, ret);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("CPU holder: status %#x", status);
	/* The write did wait for CPU 1 (else this shows nothing)... */
	EXPECT_GE(w.ms, 250);
	/* ...and mkdir/rmdir did not wait for the write. */
	EXPECT_LT(pair_ms, 1000 * kmem_scale());
}

/* A child's kernel memory is limited by its parent's kmem limit. */
TEST_F(cg, hierarchy_parent_limit)
{
	const uint64_t limit = 4 * KMEM_MIB;

	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "4M"));
	ASSERT_EQ(0, kcg_create(self->child, sizeof(self->child), self->cg, "child"));
	EXPECT_EQ(UNLIMITED, kcg_u64(self->child, KLIMIT));
	ASSERT_EQ(0, kcg_run(self->child, files_until_fail_fn, self->dir));
	EXPECT_LE(kcg_u64(self->cg, KUSAGE), limit);
	EXPECT_GT(kcg_u64(self->cg, "memory.kmem.failcnt"), 0);
	EXPECT_GT(kcg_u64(self->child, KUSAGE), limit / 2);
}

TEST_HARNESS_MAIN
