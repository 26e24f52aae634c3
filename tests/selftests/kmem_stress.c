// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_stress: bounded stress of the series (issue "Reliability").
 *
 * mixed_load_with_churn: for KMEM_STRESS_SECS (default 20) seconds, tasks
 *   hop between short-lived cgroups and allocate from shared caches (files,
 *   dentries, pipes, TCP over loopback, unix sockets, fork) while a task
 *   creates and removes those cgroups and another loads and unloads the
 *   kmem_churn module (its own cache, allocated from inside the cgroups).
 *   Afterwards: every task exited cleanly, the module's per-cgroup copies
 *   were seen and none is left, no copy of a removed cgroup outlives its
 *   objects by more than DEAD_SECS, and the parent's kmem counter is back to
 *   its starting value within MIXED_SLACK.
 * memcg_oom_in_mode0: a small memory.limit_in_bytes in mode 0 and tasks
 *   filling pipes (kmem pages): the memcg OOM killer kills tasks in the
 *   middle of kmem charges; the counters come back to zero.
 * kmem_limit_failures_in_mode1: a small kmem limit in mode 1: tasks see
 *   allocation failures (only the documented errnos), none dies but by
 *   the memcg OOM killer (a page fault at the limit), the counters come
 *   back to zero.
 * copy_creations_at_limit_do_not_stall_mkdir: tasks of cgroups at a kmem
 *   limit ask for copies there is no room for, again and again, while
 *   cgroups elsewhere are made and removed; mkdir and rmdir keep their pace.
 *
 * The kernel log is checked by the pipeline after the run (no splat, no
 * underflow warning); on the debug kernel that covers lockdep, KASAN,
 * sleeping in atomic context and kmemleak.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

#define USAGE "memory.usage_in_bytes"
#define SLACK (512 * 1024)
/* How long a removed cgroup's copies may hold freed objects (docs/design.rst). */
#define DEAD_SECS 120
/*
 * What the parent may keep after the mixed load: a slab or two of each copy
 * whose objects outlive their cgroup (vmap areas vmalloc frees lazily,
 * cached task stacks): 100 such copies were seen after 20 s of churn.
 */
#define MIXED_SLACK (1024 * 1024)
#define SLOTS 6
#define WORKERS 6
#define SLOT_MAX (KMEM_PATH_MAX + 32)

enum op { OP_FILES, OP_LOOKUPS, OP_PIPE, OP_TCP, OP_UNIX, OP_FORK, OP_MOVES, NR_OPS };
static const char *const op_names[NR_OPS] = {
	"files", "lookups", "pipes", "tcp", "unix", "forks", "moves",
};

/* What one hog of the mode-1 test met. */
struct errs {
	long expected, unexpected, tries;
	int last;
};

/* Shared between the test and its tasks (MAP_SHARED). */
struct shared {
	struct errs hog[4];
	volatile int stop;
	long ops[NR_OPS];
	long created, removed, loads, unloads, load_fails;
	volatile int made;	/* copy_storm: cgroups made so far */
	long errs[WORKERS + 2];
	char why[WORKERS + 2][128];
};

static struct shared *sh;

static int stress_secs(void)
{
	const char *s = getenv("KMEM_STRESS_SECS");
	int n = s ? atoi(s) : 0;

	return n > 0 ? n : 20;
}

static void failed(int who, const char *what)
{
	snprintf(sh->why[who], sizeof(sh->why[who]), "%s: %s", what, strerror(errno));
	__atomic_add_fetch(&sh->errs[who], 1, __ATOMIC_RELAXED);
}

static void count(enum op op, long n)
{
	__atomic_add_fetch(&sh->ops[op], n, __ATOMIC_RELAXED);
}

static int loopback_up(void)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0), ret = -1;

	if (s < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (!ioctl(s, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	return ret;
}

/* The workloads; each returns 0, or -1 with errno set. */
static int op_files(const char *dir, int n)
{
	char path[SLOT_MAX + 64];
	int i, fd;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (fd < 0)
			return -1;
		close(fd);
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		unlink(path);
	}
	return 0;
}

static int op_lookups(const char *dir, int n, unsigned int seed)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), "missing-%u", seed);
	return lookup_missing(dir, prefix, n, NULL) ? -1 : 0;
}

static int op_pipe(int rounds)
{
	int up[2], down[2], i, status;
	char buf[512];
	pid_t pid;

	if (pipe(up))
		return -1;
	if (pipe(down)) {
		close(up[0]);
		close(up[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(up[1]);
		close(down[0]);
		while (read(up[0], buf, sizeof(buf)) > 0)
			if (write(down[1], buf, sizeof(buf)) != sizeof(buf))
				_exit(1);
		_exit(0);
	}
	close(up[0]);
	close(down[1]);
	memset(buf, 'p', sizeof(buf));
	for (i = 0; i < rounds; i++) {
		if (write(up[1], buf, sizeof(buf)) != sizeof(buf) ||
		    read(down[0], buf, sizeof(buf)) != sizeof(buf))
			break;
	}
	close(up[1]);
	close(down[0]);
	waitpid(pid, &status, 0);
	if (i < rounds || !WIFEXITED(status) || WEXITSTATUS(status)) {
		errno = EPIPE;
		return -1;
	}
	return 0;
}

static int op_tcp(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l, c = -1, s = -1, ret = -1;
	static char buf[16384];
	ssize_t got = 0, n;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0)
		return -1;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		goto out;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
		goto out;
	s = accept(l, NULL, NULL);
	if (s < 0)
		goto out;
	memset(buf, 't', sizeof(buf));
	if (write(c, buf, sizeof(buf)) != sizeof(buf))
		goto out;
	while (got < (ssize_t)sizeof(buf) && (n = read(s, buf, sizeof(buf) - got)) > 0)
		got += n;
	ret = got == sizeof(buf) ? 0 : -1;
out:
	if (s >= 0)
		close(s);
	if (c >= 0)
		close(c);
	close(l);
	return ret;
}

static int op_unix(void)
{
	char buf[4096];
	int sv[2], ret = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -1;
	memset(buf, 'u', sizeof(buf));
	if (write(sv[0], buf, sizeof(buf)) != sizeof(buf) ||
	    read(sv[1], buf, sizeof(buf)) != sizeof(buf))
		ret = -1;
	close(sv[0]);
	close(sv[1]);
	return ret;
}

static int op_fork(int n)
{
	int i, status, ret = 0;
	pid_t pid;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return -1;
		if (!pid)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			ret = -1;
	}
	return ret;
}

static void slot_path(char *out, size_t len, const char *parent, int k)
{
	snprintf(out, len, "%s/st%dx%d", parent, (int)getpgrp(), k);
}

/* A worker: hop into a random slot (or stay in PARENT), work, hop back. */
static void worker(int id, const char *parent, const char *tmp)
{
	char slot[SLOT_MAX], pid[32], dir[SLOT_MAX];
	unsigned int seed = getpid();
	int r;

	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(dir, sizeof(dir), "%s/w%d", tmp, id);
	if (mkdir(dir, 0700))
		failed(id, "mkdir");
	while (!sh->stop) {
		slot_path(slot, sizeof(slot), parent, rand_r(&seed) % SLOTS);
		/* The slot may be gone or going: then stay in the parent. */
		if (!kcg_write(slot, "cgroup.procs", pid))
			count(OP_MOVES, 1);
		switch ((enum op)(rand_r(&seed) % OP_MOVES)) {
		case OP_FILES:
			r = op_files(dir, 50);
			count(OP_FILES, 50);
			break;
		case OP_LOOKUPS:
			r = op_lookups(dir, 100, rand_r(&seed));
			count(OP_LOOKUPS, 100);
			break;
		case OP_PIPE:
			r = op_pipe(32);
			count(OP_PIPE, 1);
			break;
		case OP_TCP:
			r = op_tcp();
			count(OP_TCP, 1);
			break;
		case OP_UNIX:
			r = op_unix();
			count(OP_UNIX, 1);
			break;
		default:
			r = op_fork(3);
			count(OP_FORK, 3);
			break;
		}
		if (r)
			failed(id, "workload");
		if (kcg_write(parent, "cgroup.procs", pid))
			failed(id, "back to the parent");
	}
	remove_tree(dir);
	_exit(sh->errs[id] ? 1 : 0);
}

/* Creates missing slots and removes present ones, round after round. */
static void churner(int id, const char *parent)
{
	char slot[SLOT_MAX];
	int k;

	while (!sh->stop) {
		for (k = 0; k < SLOTS && !sh->stop; k++) {
			slot_path(slot, sizeof(slot), parent, k);
			if (!mkdir(slot, 0755)) {
				__atomic_add_fetch(&sh->created, 1, __ATOMIC_RELAXED);
			} else if (errno != EEXIST) {
				failed(id, "mkdir cgroup");
			} else if (!rmdir(slot)) {
				__atomic_add_fetch(&sh->removed, 1, __ATOMIC_RELAXED);
			} else if (errno != EBUSY) {
				failed(id, "rmdir cgroup");
			}
			usleep(20 * 1000);
		}
	}
	_exit(sh->errs[id] ? 1 : 0);
}

/* The module next to the binary's folder: <dir>/bin/kmem_stress -> <dir>. */
static int churn_module(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -1;
	exe[n] = '\0';
	snprintf(out, len, "%s/kmem_churn.ko", dirname(dirname(exe)));
	return access(out, R_OK);
}

static int load_in(const char *cg, const char *ko)
{
	char pid[32];
	pid_t p = fork();
	int status, fd;

	if (p < 0)
		return -1;
	if (!p) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (kcg_write(cg, "cgroup.procs", pid))
			_exit(2);	/* slot gone: not a load */
		fd = open(ko, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || syscall(SYS_finit_module, fd, "", 0))
			_exit(errno == EEXIST ? 3 : 1);
		_exit(0);
	}
	if (waitpid(p, &status, 0) != p || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int unload(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!syscall(SYS_delete_module, "kmem_churn", O_NONBLOCK))
			return 0;
		if (errno == ENOENT)
			return 0;
		usleep(10 * 1000);
	}
	return -1;
}

static int caches_with(const char *needle, int show)
{
	return slabinfo_copies(needle, 0, show);
}

static struct shared *shared_map(void)
{
	void *p = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

FIXTURE(stress) {
	char cg[KMEM_PATH_MAX];
	char tmp[KMEM_PATH_MAX];
};

FIXTURE_SETUP(stress)
{
	sh = shared_map();
	ASSERT_NE(NULL, sh);
	/* A process group of our own: slot names carry its id. */
	setpgid(0, 0);
	ASSERT_EQ(0, kcg_create_unique(self->cg, sizeof(self->cg), NULL, "stress"));
	ASSERT_EQ(0, make_tmpdir(self->tmp, sizeof(self->tmp), "kmem-stress"));
}

FIXTURE_TEARDOWN(stress)
{
	char slot[SLOT_MAX];
	int k;

	for (k = 0; k < SLOTS; k++) {
		slot_path(slot, sizeof(slot), self->cg, k);
		rmdir(slot);
	}
	remove_tree(self->tmp);
	kcg_remove(self->cg);
	munmap(sh, sizeof(*sh));
}

#define STORM 500
#define STORM_ROUNDS 3
#define STORM_SECS 40

static void storm_path(char *out, size_t len, const char *parent, int k)
{
	snprintf(out, len, "%s/sm%dx%d", parent, (int)getpgrp(), k);
}

/* A task in a fresh cgroup touches a few caches (copies to create). */
static int storm_touch(void *arg)
{
	char path[KMEM_PATH_MAX + 32];
	struct stat st;
	int fd, p[2];

	snprintf(path, sizeof(path), "%s/f%d", (const char *)arg, getpid());
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
	unlink(path);
	if (!pipe(p)) {
		close(p[0]);
		close(p[1]);
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "/sys/kernel/sm-nx-%d", getpid());
	stat(path, &st);
	return 0;
}

/*
 * SLUB: writes dentry's min_partial back, and asks it to shrink, again and
 * again; each write walks every copy (taking slab_mutex per copy, and
 * cpus_read_lock() for each shrink) while copies come and go.
 */
static void storm_tuner_slub(void)
{
	const char *dir = "/sys/kernel/slab/dentry";
	char val[32];
	uint64_t mp;

	while (!sh->stop) {
		mp = kcg_u64(dir, "min_partial");
		snprintf(val, sizeof(val), "%llu", (unsigned long long)mp);
		if (mp != UINT64_MAX)
			kcg_write(dir, "min_partial", val);
		kcg_write(dir, "shrink", "1");
		usleep(500 * 1000);
	}
	_exit(0);
}

/*
 * Writes dentry's own tunables back again and again: on SLAB to
 * /proc/slabinfo, where each write tunes the cache and every copy under
 * slab_mutex (a long hold with hundreds of copies, during which copy
 * creations queue up); on SLUB see storm_tuner_slub().
 */
static void storm_tuner(void)
{
	long limit, batch, shared;
	char line[1024], cmd[128];
	FILE *f;
	int fd;

	if (slab_is_slub())
		storm_tuner_slub();
	while (!sh->stop) {
		f = fopen("/proc/slabinfo", "r");
		cmd[0] = '\0';
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "dentry %*d %*d %*d %*d %*d : tunables %ld %ld %ld",
				   &limit, &batch, &shared) == 3) {
				snprintf(cmd, sizeof(cmd), "dentry %ld %ld %ld\n", limit, batch, shared);
				break;
			}
		}
		if (f)
			fclose(f);
		fd = open("/proc/slabinfo", O_WRONLY);
		if (fd >= 0 && cmd[0] && write(fd, cmd, strlen(cmd)) < 0)
			usleep(10 * 1000);
		if (fd >= 0)
			close(fd);
		usleep(500 * 1000);
	}
	_exit(0);
}

/*
 * Loads kmem_churn from inside a random cgroup, unloads it, again.  STORM:
 * one of the storm's cgroups made so far (storm_path()), unloaded at once;
 * otherwise one of the slots, the module held up to 100 ms.  load_in()
 * returns 2 for a cgroup gone meanwhile (not a load), 3 for a module still
 * loaded (an unload that gave up, already counted as a failure).
 */
static void loader(int id, const char *parent, const char *ko, bool storm)
{
	char cg[SLOT_MAX];
	unsigned int seed = getpid();
	int r, n;

	while (!sh->stop) {
		n = storm ? sh->made : SLOTS;
		if (!n) {
			usleep(10 * 1000);
			continue;
		}
		if (storm)
			storm_path(cg, sizeof(cg), parent, rand_r(&seed) % n);
		else
			slot_path(cg, sizeof(cg), parent, rand_r(&seed) % n);
		r = load_in(cg, ko);
		if (r == 0) {
			__atomic_add_fetch(&sh->loads, 1, __ATOMIC_RELAXED);
			if (!storm)
				usleep((rand_r(&seed) % 100) * 1000);
			if (unload())
				failed(id, "delete_module");
			else
				__atomic_add_fetch(&sh->unloads, 1, __ATOMIC_RELAXED);
		} else if (r == 2) {
			usleep(10 * 1000);
		} else {
			__atomic_add_fetch(&sh->load_fails, 1, __ATOMIC_RELAXED);
			if (r != 3)
				failed(id, "finit_module");
			unload();
		}
	}
	_exit(sh->errs[id] ? 1 : 0);
}

/*
 * A storm of copies, in rounds (up to STORM_ROUNDS, none started after
 * STORM_SECS): STORM new cgroups, a short task in
 * each touching a few caches (thousands of copy creations queued on the
 * workqueue), then all of them removed at once (thousands of destructions
 * queued), while kmem_churn is loaded from inside those cgroups and
 * unloaded again and again (the destruction of its cache kills and empties
 * its copies under slab_mutex) and dentry's tunables are written back
 * again and again (slab_mutex held across every copy, creations piling up
 * meanwhile, past the workqueue's max_active of 256 per CPU).  Nothing may
 * wait under slab_mutex for a work item, which would sit behind items
 * blocked on slab_mutex: the hang a fresh machine found (reproduced on the
 * old series by this test in three boots of three: the unloading task in
 * __flush_work() from memcg_kmem_cache_destroy_children(), over 500
 * kworkers blocked).  A hang is
 * reported by the hung-task detector (every blocked task's stack in
 * console.log), which ends the boot.
 */
TEST_F_TIMEOUT(stress, copy_storm_with_module_unloads, 600)
{
	char ko[KMEM_PATH_MAX], cg[SLOT_MAX], needle[64];
	time_t start = time(NULL);
	/* Fewer cgroups on a slow (debug) kernel, the same rounds. */
	int storm = STORM / kmem_scale() > 50 ? STORM / kmem_scale() : 50;
	int i, r, status, copies = 0;
	pid_t pid, tuner;

	ASSERT_EQ(0, churn_module(ko, sizeof(ko))) TH_LOG("no kmem_churn.ko next to the tests");
	ASSERT_EQ(0, unload());
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		loader(0, self->cg, ko, true);
	tuner = fork();
	ASSERT_GE(tuner, 0);
	if (!tuner)
		storm_tuner();
	snprintf(needle, sizeof(needle), ":sm%dx", (int)getpgrp());
	/* Rounds until STORM_SECS have passed, at least one. */
	for (r = 0; r < STORM_ROUNDS &&
	     (!r || time(NULL) - start < STORM_SECS * kmem_scale()); r++) {
		for (i = 0; i < storm; i++) {
			storm_path(cg, sizeof(cg), self->cg, i);
			ASSERT_EQ(0, mkdir(cg, 0755)) TH_LOG("mkdir %s: %s", cg, strerror(errno));
			sh->made = i + 1;
			ASSERT_EQ(0, kcg_run(cg, storm_touch, self->tmp));
		}
		i = caches_with(needle, 0);
		copies = i > copies ? i : copies;
		/*
		 * Then remove them all at once, the loader still going: each
		 * removal kills its copies, whose destructions queue up.
		 */
		for (i = storm - 1; i >= 0; i--) {
			storm_path(cg, sizeof(cg), self->cg, i);
			sh->made = i;
			EXPECT_EQ(0, kcg_remove(cg));
		}
	}
	usleep(2000 * 1000);
	sh->stop = 1;
	ASSERT_EQ(tuner, waitpid(tuner, NULL, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("%d rounds of %d cgroups in %d s, at most %d of their copies listed; kmem_churn %ld loads, "
	       "%ld unloads, %ld failed loads; loader status %#x, %ld errors, last: %s",
	       r, storm, (int)(time(NULL) - start), copies, sh->loads, sh->unloads,
	       sh->load_fails, status, sh->errs[0], sh->why[0]);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_GT(sh->loads, 0);
	EXPECT_EQ(sh->loads, sh->unloads);
	EXPECT_EQ(0, unload());
	EXPECT_EQ(0, caches_with("kmem_churn", 1));
}

TEST_F_TIMEOUT(stress, mixed_load_with_churn, 600)
{
	char ko[KMEM_PATH_MAX], needle[64], slot[SLOT_MAX];
	pid_t pids[WORKERS + 2];
	int i, k, status, secs = stress_secs(), seen_churn = 0, seen = 0, left, n;
	uint64_t k0, peak = 0, k1 = UINT64_MAX, v, copy_slabs;
	time_t start, end;

	ASSERT_EQ(0, churn_module(ko, sizeof(ko))) TH_LOG("no kmem_churn.ko next to the tests");
	ASSERT_EQ(0, loopback_up()) TH_LOG("cannot bring lo up: %s", strerror(errno));
	ASSERT_EQ(0, unload());
	snprintf(needle, sizeof(needle), ":st%dx", (int)getpgrp());
	drop_caches(2);
	k0 = kcg_u64(self->cg, KUSAGE);
	start = time(NULL);
	end = start + secs;
	for (i = 0; i < WORKERS + 2; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (pids[i])
			continue;
		if (i < WORKERS)
			worker(i, self->cg, self->tmp);
		else if (i == WORKERS)
			churner(i, self->cg);
		else
			loader(i, self->cg, ko, false);
	}
	while (time(NULL) < end) {
		n = caches_with(needle, 0);
		seen = n > seen ? n : seen;
		n = caches_with("kmem_churn(", 0);
		seen_churn = n > seen_churn ? n : seen_churn;
		v = kcg_u64(self->cg, KUSAGE);
		peak = v != UINT64_MAX && v > peak ? v : peak;
		usleep(200 * 1000);
	}
	sh->stop = 1;
	left = 0;
	for (i = 0; i < WORKERS + 2; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			left++;
			TH_LOG("task %d: status %#x, %ld errors, last: %s", i, status,
			       sh->errs[i], sh->why[i]);
		}
	}
	EXPECT_EQ(0, left);
	EXPECT_EQ(0, unload());
	for (k = 0; k < SLOTS; k++) {
		slot_path(slot, sizeof(slot), self->cg, k);
		if (!access(slot, F_OK)) {
			EXPECT_EQ(0, kcg_remove(slot));
			sh->removed++;
		}
	}
	TH_LOG("%d s, %d workers + churner + loader: cgroups %ld created, %ld removed; "
	       "kmem_churn %ld loads, %ld unloads, %ld failed loads",
	       (int)(time(NULL) - start), WORKERS, sh->created, sh->removed,
	       sh->loads, sh->unloads, sh->load_fails);
	for (i = 0; i < NR_OPS; i++)
		TH_LOG("  %-8s %ld", op_names[i], sh->ops[i]);
	TH_LOG("per-cgroup caches of the slots: at most %d at once; kmem_churn copies: at most %d",
	       seen, seen_churn);
	EXPECT_GT(sh->loads, 0);
	EXPECT_GT(sh->created, SLOTS);
	/*
	 * The module's copies exist while it is loaded, and go with it.  With
	 * the hybrid (kmem_copy_slabs > 0) its few allocations per cgroup are
	 * charged per object and make no copy: only their going is checked.
	 */
	copy_slabs = kcg_u64("/sys/module/memcontrol/parameters", "kmem_copy_slabs");
	if (!copy_slabs || copy_slabs == UINT64_MAX)
		EXPECT_GT(seen_churn, 0);
	EXPECT_EQ(0, caches_with("kmem_churn", 1));
	/*
	 * Copies of removed cgroups go once their objects do, and what they
	 * held is uncharged from the parent: within DEAD_SECS no empty copy is
	 * left and the parent's kmem is back within MIXED_SLACK.  Objects that
	 * outlive their cgroup (vmap areas freed lazily, cached task stacks)
	 * keep their copy, charged to the parent: those are listed.
	 */
	for (i = 0; i < DEAD_SECS * 10 * kmem_scale(); i++) {
		k1 = kcg_u64(self->cg, KUSAGE);
		if (!slabinfo_copies(needle, 1, 0) && k1 <= k0 + MIXED_SLACK)
			break;
		usleep(100 * 1000);
		if (i % 50 == 49)
			drop_caches(2);
	}
	TH_LOG("after %d.%d s: slot copies %d empty, %d holding objects; parent kmem "
	       "%llu before, peak %llu, %llu after", i / 10, i % 10,
	       slabinfo_copies(needle, 1, 0), caches_with(needle, 0),
	       (unsigned long long)k0, (unsigned long long)peak, (unsigned long long)k1);
	caches_with(needle, 1);
	/*
	 * A copy still holding objects (listed above) may become empty
	 * between the last poll and now: its destruction is queued then.
	 * What must not be is an empty copy that stays: each one is given
	 * its own DEAD_SECS from here.
	 */
	for (n = 0; n < DEAD_SECS * 10 * kmem_scale() && slabinfo_copies(needle, 1, 0); n++)
		usleep(100 * 1000);
	if (n)
		TH_LOG("an empty copy appeared after the first poll, gone %d.%d s later",
		       n / 10, n % 10);
	EXPECT_EQ(0, slabinfo_copies(needle, 1, 1));
	EXPECT_LE(k1, k0 + MIXED_SLACK);
}

/*
 * The hogs' buffer, touched before they join the cgroup: their own page
 * faults must not be what fails.
 */
static char hogbuf[65536];

/* Fill pipes until EMFILE or the deadline; exit 0 (or be killed). */
static int pipe_hog(int secs)
{
	time_t end = time(NULL) + secs;
	int p[2];

	while (time(NULL) < end) {
		if (pipe2(p, O_NONBLOCK))
			break;
		if (write(p[1], hogbuf, sizeof(hogbuf)) < 0 && errno != EAGAIN)
			break;
	}
	while (time(NULL) < end)
		usleep(100 * 1000);
	return 0;
}

TEST_F_TIMEOUT(stress, memcg_oom_in_mode0, 180)
{
	pid_t pids[4];
	int i, status, killed = 0, other = 0, secs = 8;
	uint64_t u, k;
	char oom[512], held[8192], *p;

	ASSERT_EQ(0, kcg_write(self->cg, "memory.limit_in_bytes", "24M"));
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i]) {
			char pid[32];

			memset(hogbuf, 'h', sizeof(hogbuf));
			snprintf(pid, sizeof(pid), "%d", getpid());
			if (kcg_write(self->cg, "cgroup.procs", pid))
				_exit(9);
			_exit(pipe_hog(secs));
		}
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			killed++;
		else if (!WIFEXITED(status) || WEXITSTATUS(status))
			other++;
	}
	ASSERT_LT(0, kcg_read(self->cg, "memory.oom_control", oom, sizeof(oom)));
	p = strstr(oom, "oom_kill ");
	TH_LOG("4 pipe hogs under a 24 MiB limit: %d killed by the OOM killer (%s), failcnt %llu",
	       killed, p ? p + 9 : "?", (unsigned long long)kcg_u64(self->cg, "memory.failcnt"));
	EXPECT_EQ(0, other);
	EXPECT_LT(0, killed);
	/*
	 * SLUB: the cgroup's copies keep empty slabs until shrunk.  SLAB
	 * drains its per-cpu arrays and frees empty slabs a part at a time
	 * every few seconds (cache_reap): up to a minute on a loaded host.
	 */
	slab_shrink_all();
	u = kcg_wait_at_most(self->cg, USAGE, SLACK, 60);
	k = kcg_wait_at_most(self->cg, KUSAGE, SLACK, 60);
	TH_LOG("after: usage %llu, kmem %llu", (unsigned long long)u, (unsigned long long)k);
	if (u > SLACK || k > SLACK)
		TH_LOG("what the cgroup's copies hold:\n%s",
		       kcg_read(self->cg, "memory.kmem.slabinfo", held, sizeof(held)) > 0 ?
		       held : "?");
	EXPECT_LE(u, SLACK);
	EXPECT_LE(k, SLACK);
}

/* Mode 1 hog: pipes, forks, files, sockets; count the errnos it meets. */
static void note_err(struct errs *e)
{
	if (errno == ENOMEM || errno == ENOSPC || errno == EAGAIN || errno == ENOBUFS ||
	    errno == EMFILE || errno == ENFILE) {
		e->expected++;
	} else {
		e->unexpected++;
		e->last = errno;
	}
}

/*
 * Until it has met the limit 50 times, or for 6 s (times the suite's scale:
 * on the KASAN kernel under TCG, loaded, 6 s was once 112 tries, short of
 * the 6 MiB limit).
 */
static int kmem_hog(const char *dir, struct errs *e)
{
	time_t end = time(NULL) + 6 * kmem_scale();
	char path[SLOT_MAX + 64];
	int p[2], fd, i = 0, status;
	pid_t pid;

	while (time(NULL) < end && e->expected < 50) {
		__atomic_add_fetch(&e->tries, 1, __ATOMIC_RELAXED);
		switch (i++ % 4) {
		case 0:
			if (pipe2(p, O_NONBLOCK)) {
				note_err(e);
				break;
			}
			if (write(p[1], hogbuf, sizeof(hogbuf)) < 0 && errno != EAGAIN)
				note_err(e);
			break;
		case 1:
			pid = fork();
			if (pid < 0)
				note_err(e);
			else if (!pid)
				_exit(0);
			else
				waitpid(pid, &status, 0);
			break;
		case 2:
			snprintf(path, sizeof(path), "%s/h%d-%d", dir, getpid(), i);
			fd = open(path, O_CREAT | O_WRONLY, 0600);
			if (fd < 0)
				note_err(e);
			else
				close(fd);
			break;
		default:
			fd = socket(AF_UNIX, SOCK_DGRAM, 0);
			if (fd < 0)
				note_err(e);
			break;
		}
	}
	return 0;
}

TEST_F_TIMEOUT(stress, kmem_limit_failures_in_mode1, 180)
{
	struct errs *e = sh->hog;
	long expected = 0, unexpected = 0, tries = 0;
	int i, status, bad = 0, oom_killed = 0;
	pid_t pids[4];
	uint64_t k;

	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(0, kcg_write(self->cg, KLIMIT, "6M"));
	for (i = 0; i < 4; i++) {
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (!pids[i]) {
			char pid[32];

			memset(hogbuf, 'k', sizeof(hogbuf));
			snprintf(pid, sizeof(pid), "%d", getpid());
			if (kcg_write(self->cg, "cgroup.procs", pid))
				_exit(9);
			_exit(kmem_hog(self->tmp, &sh->hog[i]));
		}
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		/*
		 * A page fault at the kmem limit runs the memcg OOM killer
		 * (memory.rst 2.7): SIGKILL is a documented end too.
		 */
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			oom_killed++;
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			bad++;
			TH_LOG("hog %d: status %#x", i, status);
		}
	}
	for (i = 0; i < 4; i++) {
		expected += e[i].expected;
		unexpected += e[i].unexpected;
		tries += e[i].tries;
		if (e[i].unexpected)
			TH_LOG("unexpected errno %d (%s)", e[i].last, strerror(e[i].last));
	}
	TH_LOG("4 hogs under a 6 MiB kmem limit: %ld tries, %ld failed as documented, "
	       "%ld otherwise, %d hogs OOM-killed in a fault; failcnt %llu, max usage %llu",
	       tries, expected, unexpected, oom_killed,
	       (unsigned long long)kcg_u64(self->cg, "memory.kmem.failcnt"),
	       (unsigned long long)kcg_u64(self->cg, "memory.kmem.max_usage_in_bytes"));
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, unexpected);
	EXPECT_LT(0, expected);
	/* Forced charges (__GFP_NOFAIL, a dying task's) may pass the limit a little. */
	EXPECT_LE(kcg_u64(self->cg, "memory.kmem.max_usage_in_bytes"), 7 * KMEM_MIB);
	EXPECT_LT(0, kcg_u64(self->cg, "memory.kmem.failcnt"));
	remove_tree(self->tmp);
	mkdir(self->tmp, 0700);
	drop_caches(2);
	k = kcg_wait_at_most(self->cg, KUSAGE, SLACK, 30);
	TH_LOG("kmem after: %llu", (unsigned long long)k);
	EXPECT_LE(k, SLACK);
}

/*
 * Copies made for cgroups at a kmem limit, while other cgroups are made and
 * removed.  rmdir takes slab_mutex under cgroup_mutex (the copies of the
 * removed cgroup are killed then), and a copy is made under slab_mutex: a
 * creation that reclaimed under slab_mutex would hold up every mkdir and
 * rmdir of the system behind one cgroup's reclaim.  The room a copy's own
 * memory needs is made before slab_mutex is taken
 * (memcg_kmem_make_room()), and when there is none the copy is not made,
 * so mkdir and rmdir elsewhere go on at their usual pace.  It needs mode 1
 * (patch 1), and would pass at patches 1-4, which make no copies.
 */
#define AT_LIMIT_CREATORS 2
#define AT_LIMIT_ROUNDS 200
#define AT_LIMIT_KIDS 50

static int fill_kmem(void *dir)
{
	char path[KMEM_PATH_MAX + 32];
	int i, fd;

	/*
	 * Empty files until the kmem limit stops them: ENOMEM when the
	 * dentry cannot be charged, ENOSPC when tmpfs's inode cannot.  Any
	 * other error is the exit status.  Not make_files(): its names are
	 * storm_touch()'s, which would unlink these and make room.
	 */
	for (i = 0; i < 200000; i++) {
		snprintf(path, sizeof(path), "%s/fill%d", (const char *)dir, i);
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (fd < 0)
			return errno == ENOMEM || errno == ENOSPC ? 0 : errno;
		close(fd);
	}
	return 255;
}

TEST_F_TIMEOUT(stress, copy_creations_at_limit_do_not_stall_mkdir, 300)
{
	char full[KMEM_PATH_MAX + 32], kid[KMEM_PATH_MAX + 64];
	char other[KMEM_PATH_MAX + 32];
	pid_t creators[AT_LIMIT_CREATORS];
	double t, worst = 0, total = 0;
	int i, k, status, made = 0;

	/* Mode 1 is set on a child of the root (or in a mode-1 subtree). */
	ASSERT_EQ(0, kcg_create_unique(full, sizeof(full), NULL, "full"));
	ASSERT_EQ(0, kcg_write(full, MODE, "1"));
	ASSERT_EQ(0, kcg_write(full, KLIMIT, "4M"));
	/* Its children first: at the limit, mkdir there fails. */
	for (i = 0; i < AT_LIMIT_KIDS; i++) {
		snprintf(kid, sizeof(kid), "%s/c%d", full, i);
		ASSERT_EQ(0, mkdir(kid, 0755));
	}
	ASSERT_EQ(0, kcg_run(full, fill_kmem, self->tmp));
	sh->stop = 0;
	for (k = 0; k < AT_LIMIT_CREATORS; k++) {
		creators[k] = fork();
		ASSERT_GE(creators[k], 0);
		if (creators[k])
			continue;
		/*
		 * A task in each child touches a few caches: each asks for
		 * copies, for which there is no room, so it asks again.
		 */
		for (i = k; !sh->stop; i += AT_LIMIT_CREATORS) {
			snprintf(kid, sizeof(kid), "%s/c%d", full, i % AT_LIMIT_KIDS);
			if (kcg_run(kid, storm_touch, self->tmp) < 0)
				_exit(1);
		}
		_exit(0);
	}
	for (i = 0; i < AT_LIMIT_ROUNDS; i++) {
		snprintf(other, sizeof(other), "%s/other%d", self->cg, i);
		t = now_ms();
		if (!mkdir(other, 0755)) {
			made++;
			rmdir(other);
		}
		t = now_ms() - t;
		total += t;
		worst = t > worst ? t : worst;
		usleep(10 * 1000);
	}
	sh->stop = 1;
	for (k = 0; k < AT_LIMIT_CREATORS; k++) {
		ASSERT_EQ(creators[k], waitpid(creators[k], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("creator %d: status %#x", k, status);
	}
	TH_LOG("%d mkdir+rmdir beside cgroups at a 4 MiB kmem limit: %.1f ms on average, %.1f ms at most (kmem failcnt %llu)",
	       made, total / AT_LIMIT_ROUNDS, worst,
	       (unsigned long long)kcg_u64(full, "memory.kmem.failcnt"));
	EXPECT_EQ(AT_LIMIT_ROUNDS, made);
	EXPECT_LT(worst, 1000.0 * kmem_scale());
	remove_tree(self->tmp);
	for (i = 0; i < AT_LIMIT_KIDS; i++) {
		snprintf(kid, sizeof(kid), "%s/c%d", full, i);
		EXPECT_EQ(0, kcg_remove(kid));
	}
	EXPECT_EQ(0, kcg_remove(full));
}

TEST_HARNESS_MAIN
