// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_bench: the workloads of the benchmark (make bench, ci/bench-table), run in the guest.
 *
 * Prints one line per measurement:
 *     BENCH <workload> <where> <rep> <value> <unit>
 * where <where> is "root" (the root cgroup) or "child" (a fresh child
 * memcg).  The host repeats, takes medians and compares kernels; this
 * program only measures.  Fast-path workloads go through the kmem_test
 * module ("bench" command), which times alloc/free pairs in the kernel.
 *
 * Usage: kmem_bench [REPS] (default 5)
 *        kmem_bench times:REPS | memory[:REPS] | fast
 * REPS: every workload, the times REPS times, the memory rows twice.
 * "times:REPS": the fast path, the system calls and the churn, REPS times
 * (make bench's -icount boots, where the times are judged); "memory:REPS":
 * the memory rows, churn included, REPS times (its four-vCPU boots; REPS 1
 * without it).  "fast": the fast-path workloads only, once, with 200,000
 * pairs each: what the fast-path gate of make check (ci/icount-gate)
 * compares under -icount, where a figure is an instruction count and
 * repeats exactly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kmem_util.h"

#define PAIRS 1000000L
#define FAST_PAIRS 200000L
#define CHURN_CYCLES 1000

static long pairs = PAIRS;

static char child_cg[KMEM_PATH_MAX];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The module's last "bench" duration; 0 if unreadable. */
static uint64_t kt_bench_ns(void)
{
	long long ns = kt_value("bench_ns");

	return ns > 0 ? (uint64_t)ns : 0;
}

/* Run FN in a child process, in CG (NULL: stay in the root cgroup). */
static int run_in(const char *cg, int (*fn)(void *), void *arg)
{
	return cg ? kcg_run(cg, fn, arg) : fn(arg);
}

struct fast {
	const char *name, *cmd;
	int rep;
	const char *where;
};

static int fast_fn(void *arg)
{
	struct fast *f = arg;
	uint64_t ns;

	/* Warm up: caches (and a memcg's copies) exist before timing. */
	if (kt_cmd("%s", f->cmd))
		return 1;
	if (kt_cmd("%s", f->cmd))
		return 1;
	ns = kt_bench_ns();
	printf("BENCH %s %s %d %.2f ns/pair\n", f->name, f->where, f->rep,
	       (double)ns / pairs);
	fflush(stdout);
	return 0;
}

/*
 * WHERE: "root" (root cgroup, no memcg created yet: the kmem static key is
 * off on both kernels), "root-key" (root cgroup after a child memcg exists:
 * the key is on) or "child" (in the child memcg).
 */
static void fast_path(int rep, const char *where)
{
	static const struct { const char *name, *kind, *args; } w[] = {
		{ "kmalloc64-hot", "hot", "64 KERNEL|ACCOUNT" },
		{ "kmalloc64-batch", "batch", "64 KERNEL|ACCOUNT" },
		{ "cache64-hot", "hot", "0 KERNEL" },
		{ "cache64-batch", "batch", "0 KERNEL" },
	};
	bool child = !strcmp(where, "child");
	unsigned int i;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		char cmd[96];
		struct fast f = { w[i].name, cmd, rep, where };

		snprintf(cmd, sizeof(cmd), "bench %s %ld %s", w[i].kind, pairs, w[i].args);

		if (run_in(child ? child_cg : NULL, fast_fn, &f))
			printf("# %s %s failed\n", w[i].name, where);
	}
}

/* Syscall workloads, in the child memcg; value: ns per operation. */
static int files_fn(void *arg)
{
	char dir[KMEM_PATH_MAX], path[KMEM_PATH_MAX];
	const long n = 20000;
	uint64_t t;
	long i;
	int fd;

	if (make_tmpdir(dir, sizeof(dir), "bench"))
		return 1;
	t = now_ns();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", dir, i);
		fd = open(path, O_CREAT | O_WRONLY, 0644);
		if (fd < 0)
			return 1;
		close(fd);
		unlink(path);
	}
	t = now_ns() - t;
	rmdir(dir);
	printf("BENCH file-create-unlink child %d %.1f ns/op\n", *(int *)arg, (double)t / n);
	return 0;
}

static int lookups_fn(void *arg)
{
	const long n = 50000;
	char path[128];
	struct stat st;
	uint64_t t;
	long i;

	t = now_ns();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/bench-%d-%d-%ld", getpid(),
			 *(int *)arg, i);
		stat(path, &st);
	}
	t = now_ns() - t;
	printf("BENCH negative-lookup child %d %.1f ns/op\n", *(int *)arg, (double)t / n);
	return 0;
}

static int fork_fn(void *arg)
{
	const int n = 2000;
	uint64_t t;
	int i, status;
	pid_t p;

	t = now_ns();
	for (i = 0; i < n; i++) {
		p = fork();
		if (p < 0)
			return 1;
		if (!p)
			_exit(0);
		waitpid(p, &status, 0);
	}
	t = now_ns() - t;
	printf("BENCH fork-exit child %d %.1f ns/op\n", *(int *)arg, (double)t / n);
	return 0;
}

static int pipe_fn(void *arg)
{
	const int n = 20000;
	int a[2], b[2], i;
	char c = 'x';
	uint64_t t;
	pid_t p;

	if (pipe(a) || pipe(b))
		return 1;
	p = fork();
	if (p < 0)
		return 1;
	if (!p) {
		for (i = 0; i < n; i++) {
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	t = now_ns();
	for (i = 0; i < n; i++) {
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	}
	t = now_ns() - t;
	waitpid(p, NULL, 0);
	printf("BENCH pipe-pingpong child %d %.1f ns/op\n", *(int *)arg, (double)t / n);
	return 0;
}

/*
 * K child cgroups c0..cK-1 of a new cgroup PARENT, each with a folder of
 * the same name in the new folder DIR, where one task of the cgroup runs
 * run(cgroup, folder, n).  They stay, with what the tasks made, until
 * group_remove().
 */
struct group {
	char parent[KMEM_PATH_MAX], dir[KMEM_PATH_MAX];
	int k;
};

static int group_make(struct group *g, const char *name, int k,
		      int (*run)(const char *cg, const char *dir, long n), long n)
{
	char cg[KMEM_PATH_MAX], d[KMEM_PATH_MAX + 64], sub[32];
	int i;

	g->k = 0;
	if (kcg_create_unique(g->parent, sizeof(g->parent), NULL, name) ||
	    make_tmpdir(g->dir, sizeof(g->dir), name))
		return -1;
	g->k = k;
	for (i = 0; i < k; i++) {
		snprintf(sub, sizeof(sub), "c%d", i);
		snprintf(d, sizeof(d), "%s/%s", g->dir, sub);
		mkdir(d, 0755);
		if (kcg_create(cg, sizeof(cg), g->parent, sub) || run(cg, d, n))
			printf("# %s workload: cgroup %d failed\n", name, i);
	}
	return 0;
}

static void group_remove(struct group *g)
{
	char path[KMEM_PATH_MAX + 64];
	int i;

	for (i = 0; i < g->k; i++) {
		snprintf(path, sizeof(path), "%s/c%d", g->dir, i);
		remove_tree(path);
		snprintf(path, sizeof(path), "%s/c%d", g->parent, i);
		kcg_remove(path);
	}
	rmdir(g->dir);
	kcg_remove(g->parent);
}

/*
 * K cgroups each create 1000 files: the system's slab and the cgroups' kmem
 * usage, then after removing the cgroups and dropping caches (what dead
 * caches still hold), at once, 5 s and 30 s later.
 */
static void memory(int k, int rep)
{
	uint64_t slab0, slab1, slab2, slab3, slab4, kmem;
	struct group g;

	drop_caches(3);
	sleep(1);
	slab0 = meminfo_slab();
	if (group_make(&g, "benchmem", k, kcg_make_files, 1000))
		return;
	sleep(3);	/* statistics flush */
	slab1 = meminfo_slab();
	kmem = kcg_u64(g.parent, "memory.kmem.usage_in_bytes");
	printf("BENCH slab-%dcg-1000files all %d %lld bytes\n", k, rep,
	       (long long)(slab1 - slab0));
	printf("BENCH kmem-%dcg-1000files all %d %llu bytes\n", k, rep,
	       (unsigned long long)kmem);
	group_remove(&g);
	drop_caches(3);
	slab2 = meminfo_slab();
	sleep(5);
	drop_caches(3);
	slab3 = meminfo_slab();
	sleep(25);
	drop_caches(3);
	slab4 = meminfo_slab();
	printf("BENCH slab-left-%dcg-0s all %d %lld bytes\n", k, rep,
	       (long long)(slab2 - slab0));
	printf("BENCH slab-left-%dcg-5s all %d %lld bytes\n", k, rep,
	       (long long)(slab3 - slab0));
	printf("BENCH slab-left-%dcg-30s all %d %lld bytes\n", k, rep,
	       (long long)(slab4 - slab0));
	fflush(stdout);
}

/* One short-lived task of the sparse case: a few files, a pipe, a socket. */
static int sparse_fn(void *arg)
{
	char path[KMEM_PATH_MAX + 16];
	int i, fd, p[2], sv[2];
	char c = 'x';

	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/f%d", (const char *)arg, i);
		fd = open(path, O_CREAT | O_RDWR, 0644);
		if (fd < 0)
			return 1;
		close(fd);
	}
	fd = open("/proc/self/status", O_RDONLY);
	if (fd < 0 || pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	if (write(p[1], &c, 1) != 1 || write(sv[0], &c, 1) != 1 ||
	    read(p[0], &c, 1) != 1 || read(sv[1], &c, 1) != 1)
		return 1;
	close(fd);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* sparse_fn by a task of @cg (group_make()). */
static int run_sparse(const char *cg, const char *dir, long n)
{
	return kcg_run(cg, sparse_fn, (void *)dir);
}

/*
 * The sparse case, where per-cgroup caches waste most: K cgroups that each
 * ran one short-lived task (sparse_fn) and stay, with the files it made.
 * The system's slab growth while they exist (nothing dropped: what each
 * cgroup's copies keep counts), then, after removing them, what is left
 * 5 s later per cgroup (what dead copies still hold).
 */
static void sparse(int k, int rep)
{
	uint64_t slab0, slab1, slab2;
	struct group g;

	drop_caches(3);
	sleep(1);
	slab0 = meminfo_slab();
	if (group_make(&g, "benchsparse", k, run_sparse, 0))
		return;
	sleep(3);	/* statistics flush */
	slab1 = meminfo_slab();
	printf("BENCH slab-%dcg-sparse all %d %lld bytes\n", k, rep,
	       (long long)(slab1 - slab0));
	group_remove(&g);
	drop_caches(3);
	sleep(5);
	drop_caches(3);
	slab2 = meminfo_slab();
	printf("BENCH slab-left-5s-per-cg sparse %d %lld bytes\n", rep,
	       ((long long)slab2 - (long long)slab0) / k);
	fflush(stdout);
}

/*
 * Slab growth against each cgroup's use of the caches: K cgroups each
 * create N empty files, and stay.  Per-memcg caches show here where a
 * cgroup gets its copies: at first use, or once it has allocated
 * memcontrol.kmem_copy_slabs slabs' worth of objects of a cache.  SUFFIX
 * names the threshold the row was taken with ("" the kernel's default,
 * "-first" a copy at first use).
 */
static void files_curve(int k, long n, int rep, const char *suffix)
{
	uint64_t slab0, slab1;
	struct group g;

	drop_caches(3);
	sleep(1);
	slab0 = meminfo_slab();
	if (group_make(&g, "benchcurve", k, kcg_make_files, n))
		return;
	sleep(3);	/* statistics flush */
	slab1 = meminfo_slab();
	printf("BENCH slab-%dcg-%ldfiles%s all %d %lld bytes\n", k, n, suffix, rep,
	       (long long)(slab1 - slab0));
	group_remove(&g);
	fflush(stdout);
}

/*
 * Cgroup churn, as container runtimes and service managers do it: create a
 * cgroup, run one short task in it (sparse_fn), remove its files and the
 * cgroup; N cycles.  The time per cycle, then what Slab: and Percpu: have
 * grown by once the cycles are over and 5 s later (what removed cgroups
 * and their dead copies still hold).
 */
static void churn(int n, int rep)
{
	char parent[KMEM_PATH_MAX], cg[KMEM_PATH_MAX], dir[KMEM_PATH_MAX];
	char d[KMEM_PATH_MAX + 64];
	uint64_t slab0, pcpu0, t;
	int i, bad = 0;

	drop_caches(3);
	sleep(1);
	slab0 = meminfo_slab();
	pcpu0 = meminfo_bytes("Percpu");
	if (kcg_create_unique(parent, sizeof(parent), NULL, "benchchurn") ||
	    make_tmpdir(dir, sizeof(dir), "benchchurn"))
		return;
	snprintf(d, sizeof(d), "%s/d", dir);
	t = now_ns();
	for (i = 0; i < n; i++) {
		mkdir(d, 0755);
		if (kcg_create(cg, sizeof(cg), parent, "c") || kcg_run(cg, sparse_fn, d))
			bad++;
		remove_tree(d);
		if (kcg_remove(cg))
			bad++;
	}
	t = now_ns() - t;
	if (bad)
		printf("# churn workload: %d of %d cycles failed\n", bad, n);
	printf("BENCH churn-cycle all %d %.1f ns/cycle\n", rep, (double)t / n);
	rmdir(dir);
	kcg_remove(parent);
	drop_caches(3);
	printf("BENCH churn-%d-slab+pcpu all %d %lld bytes\n", n, rep,
	       (long long)(meminfo_slab() + meminfo_bytes("Percpu")) -
	       (long long)(slab0 + pcpu0));
	sleep(5);
	drop_caches(3);
	printf("BENCH churn-%d-left-5s all %d %lld bytes\n", n, rep,
	       (long long)(meminfo_slab() + meminfo_bytes("Percpu")) -
	       (long long)(slab0 + pcpu0));
	fflush(stdout);
}

/* What copy_meta() reads before and after a phase. */
struct meta_snap {
	long long total;	/* Slab: + Percpu: */
	long long structs;	/* the kmem_cache cache */
	long long nodes;	/* the kmem_cache_node cache (SLUB) */
	long long pcpu;		/* Percpu: */
	long long kernfs;	/* kernfs_node_cache: sysfs directories */
	long long cslab;	/* slab pages of the module cache's copies */
	long long copies;	/* how many copies it has */
};

/* Bytes of the active objects of /proc/slabinfo's cache NAME (0 if none). */
static long long slab_obj_bytes(const char *name)
{
	struct slabline l;

	return slab_line(name, &l) ? 0 : (long long)l.active * l.objsize;
}

static void meta_snap(struct meta_snap *m)
{
	char line[1024], name[512];
	long active, num, objsize, objperslab, pages, slabs;
	FILE *f;

	memset(m, 0, sizeof(*m));
	m->pcpu = meminfo_bytes("Percpu");
	m->total = meminfo_slab() + m->pcpu;
	m->structs = slab_obj_bytes("kmem_cache");
	m->nodes = slab_obj_bytes("kmem_cache_node");
	m->kernfs = slab_obj_bytes("kernfs_node_cache");
	f = slabinfo_open_copies();
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%511s %ld %ld %ld %ld %ld : tunables %*d %*d %*d : slabdata %*d %ld",
			   name, &active, &num, &objsize, &objperslab, &pages, &slabs) != 7 ||
		    !strchr(name, '(') || strncmp(name, "kmem_test_cache(", 16))
			continue;
		m->copies++;
		m->cslab += (long long)slabs * pages * sysconf(_SC_PAGESIZE);
	}
	fclose(f);
}

/* A task of @cg that makes @n allocation and free pairs on the module's cache. */
static int run_pairs(const char *cg, const char *dir, long n)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "bench hot %ld 0 KERNEL", n);
	return kcg_run(cg, kt_cmd_fn, cmd);
}

/* K cgroups whose tasks make N pairs each: what grew while they exist. */
static void meta_phase(int k, long n, struct meta_snap *d)
{
	struct meta_snap a, b;
	struct group g;

	drop_caches(3);
	sleep(5);	/* what an earlier phase's removed cgroups free */
	meta_snap(&a);
	memset(d, 0, sizeof(*d));
	if (group_make(&g, "benchmeta", k, run_pairs, n))
		return;
	sleep(2);	/* copies are created by a worker */
	meta_snap(&b);
	group_remove(&g);
	d->total = b.total - a.total;
	d->structs = b.structs - a.structs;
	d->nodes = b.nodes - a.nodes;
	d->pcpu = b.pcpu - a.pcpu;
	d->kernfs = b.kernfs - a.kernfs;
	d->cslab = b.cslab - a.cslab;
	d->copies = b.copies - a.copies;
}

/*
 * The metadata of a copy: K cgroups whose tasks allocate from the module's
 * cache, first too little for a copy (16 pairs, below any
 * kmem_copy_slabs but 0), then enough for one (4,096 pairs), as the two
 * phases of one boot.  What the second grew more than the first, per copy
 * it made: the struct kmem_cache, its kmem_cache_node (SLUB; SLAB takes
 * them from kmalloc), Percpu:, sysfs nodes, and all of Slab: and Percpu:
 * less the copies' own slab pages.  No rows where no copy was made (the
 * per-object design, the base kernel, or a copy at first use, where the
 * first phase makes them too).
 */
static void copy_meta(int k, int rep)
{
	struct meta_snap few, many;
	long long c;

	meta_phase(k, 16, &few);
	meta_phase(k, 4096, &many);
	c = many.copies - few.copies;
	if (c < k / 2) {
		printf("# copy-meta: %lld copies for %d cgroups (%lld in the first phase): no rows\n",
		       c, k, few.copies);
		return;
	}
	printf("BENCH copy-meta-struct per-copy %d %lld bytes\n", rep,
	       (many.structs - few.structs) / c);
	printf("BENCH copy-meta-nodes per-copy %d %lld bytes\n", rep,
	       (many.nodes - few.nodes) / c);
	printf("BENCH copy-meta-percpu per-copy %d %lld bytes\n", rep,
	       (many.pcpu - few.pcpu) / c);
	printf("BENCH copy-meta-sysfs per-copy %d %lld bytes\n", rep,
	       (many.kernfs - few.kernfs) / c);
	printf("BENCH copy-meta-total per-copy %d %lld bytes\n", rep,
	       (many.total - few.total - (many.cslab - few.cslab)) / c);
	fflush(stdout);
}

#define COPY_SLABS "/sys/module/memcontrol/parameters/kmem_copy_slabs"

/* Is this the 2012 design with a threshold to change (the curve's second pass)? */
static bool copies_tunable(void)
{
	char buf[1024];
	ssize_t n;
	int fd = open("/proc/cmdline", O_RDONLY);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, "kmemcaches") && access(COPY_SLABS, W_OK) == 0;
}

/* Write VAL to kmem_copy_slabs, the old value in OLD; 0 on success. */
static int set_copy_slabs(const char *val, char *old, size_t len)
{
	ssize_t n;
	int fd = open(COPY_SLABS, O_RDWR);

	if (fd < 0)
		return -1;
	if (old) {
		n = read(fd, old, len - 1);
		old[n > 0 ? n : 0] = 0;
		old[strcspn(old, "\n")] = 0;
	}
	n = pwrite(fd, val, strlen(val), 0);
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* The memory workloads (tcg), repetition @rep. */
static void memory_rows(int rep)
{
	static const long curve_files[] = { 3, 10, 30, 100, 300, 1000 };
	const unsigned int nc = sizeof(curve_files) / sizeof(curve_files[0]);
	char old[32];
	unsigned int i;

	memory(10, rep);
	memory(100, rep);
	sparse(200, rep);
	for (i = 0; i < nc; i++)
		files_curve(50, curve_files[i], rep, "");
	/* The same curve with a copy at first use, on the same kernel. */
	if (copies_tunable() && !set_copy_slabs("0", old, sizeof(old))) {
		for (i = 0; i < nc; i++)
			files_curve(50, curve_files[i], rep, "-first");
		if (set_copy_slabs(old, NULL, 0))
			printf("# could not restore kmem_copy_slabs to %s\n", old);
	}
	copy_meta(100, rep);
	churn(CHURN_CYCLES, rep);
}

/* The fast path and the system calls, @reps times; the churn once (times:N). */
static int time_rows(int reps)
{
	int rep;

	/* Before any memcg exists: the cost of the feature when unused. */
	for (rep = 1; rep <= reps; rep++)
		fast_path(rep, "root");
	if (kcg_create_unique(child_cg, sizeof(child_cg), NULL, "bench"))
		return 1;
	for (rep = 1; rep <= reps; rep++) {
		fast_path(rep, "root-key");
		fast_path(rep, "child");
		if (pairs == FAST_PAIRS)
			continue;
		kcg_run(child_cg, files_fn, &rep);
		kcg_run(child_cg, lookups_fn, &rep);
		kcg_run(child_cg, fork_fn, &rep);
		kcg_run(child_cg, pipe_fn, &rep);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "5";
	bool times = true, mem = true;
	int reps = 1, rep;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(what, "fast")) {
		pairs = FAST_PAIRS;
		mem = false;
	} else if (!strcmp(what, "memory")) {
		times = false;
	} else if (!strncmp(what, "memory:", 7)) {
		times = false;
		reps = atoi(what + 7);
	} else if (!strncmp(what, "times:", 6)) {
		mem = false;
		reps = atoi(what + 6);
	} else {
		reps = atoi(what);
	}
	if (reps < 1) {
		printf("# usage: kmem_bench [REPS | fast | memory[:REPS] | times:REPS]\n");
		return 2;
	}
	if (!kt_present() || kt_cmd("cache_create 64 ACCOUNT")) {
		printf("# kmem_test module missing\n");
		return 1;
	}
	if (times && time_rows(reps))
		return 1;
	if (times && pairs != FAST_PAIRS && !mem)
		for (rep = 1; rep <= reps; rep++)
			churn(CHURN_CYCLES, rep);
	if (mem) {
		drop_caches(2);
		/* All of it (REPS): the memory rows twice, as they always were. */
		for (rep = 1; rep <= (times ? 2 : reps); rep++)
			memory_rows(rep);
	}
	kt_cmd("cache_destroy");
	printf("BENCH-DONE\n");
	return 0;
}
