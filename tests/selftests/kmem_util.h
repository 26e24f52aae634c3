/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the memcg kmem suite: cgroup v1 memory controller files, running
 * work inside a cgroup, the kmem_test module, /proc/slabinfo.
 *
 * Functions that can fail return a negative errno (never exit), so that a
 * test can assert on the exact error the interface documents.  The cgroup
 * helpers are named kcg_*: the kernel's cgroup_util.h has cg_create(),
 * cg_read(), cg_write() and cg_run() with other signatures, and a test may
 * one day need both.
 */
#ifndef KMEM_UTIL_H
#define KMEM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KMEM_PATH_MAX 512
#define KMEM_PAGE 4096L

/* The cgroup-v1 kmem files the tests read and write. */
#define MODE "memory.kmem.independent_kmem_limit"
#define KLIMIT "memory.kmem.limit_in_bytes"
#define KUSAGE "memory.kmem.usage_in_bytes"
#define KMEM_MIB (1024L * 1024L)
/* The kmem_test module's command file (kt_cmd()). */
#define KT_CTL "/sys/kernel/debug/kmem_test/ctl"

/* The v1 memory controller's mount point (KMEM_CGROUP_ROOT overrides it). */
const char *memcg_mount(void);

/* mkdir PARENT/NAME (PARENT NULL: the root); path of the new cgroup in OUT. */
int kcg_create(char *out, size_t len, const char *parent, const char *name);
/* A cgroup with a name unique to this process under PARENT. */
int kcg_create_unique(char *out, size_t len, const char *parent, const char *prefix);
/* rmdir, retrying briefly while the kernel still sees it busy. */
int kcg_remove(const char *cg);

/* Read FILE of CG as one unsigned number; negative errno on error. */
int kcg_read_u64(const char *cg, const char *file, uint64_t *val);
/* Same, returning the value, or UINT64_MAX on error. */
uint64_t kcg_u64(const char *cg, const char *file);
/* Read the whole file into BUF (NUL-terminated): length or negative errno. */
ssize_t kcg_read(const char *cg, const char *file, char *buf, size_t len);
/* write(2) of VAL (as given, no newline added): 0 or the negative errno. */
int kcg_write(const char *cg, const char *file, const char *val);
/* A "name value" line of memory.stat; UINT64_MAX if absent. */
uint64_t kcg_stat(const char *cg, const char *key);
/* Does CG have FILE? */
int kcg_has(const char *cg, const char *file);

/*
 * Run FN(ARG) in a child process that first joins CG; the child's exit
 * status is FN's return value.  Returns that status, or -1 if the child
 * could not be run or was killed (then *signo, if given, holds the signal).
 */
int kcg_run(const char *cg, int (*fn)(void *), void *arg);
int kcg_run_sig(const char *cg, int (*fn)(void *), void *arg, int *signo);

/* Create N empty files DIR/f<i>; returns how many were made. */
long make_files(const char *dir, long n, int *err);
/*
 * make_files(DIR, N) by a task of cgroup CG (kcg_run): 0 when all N files
 * were created, 1 otherwise, -1 if the task could not run.
 */
int kcg_make_files(const char *cg, const char *dir, long n);
/*
 * N lookups of names that do not exist, DIR/PREFIX-<i> (in kernfs, e.g.
 * /sys/kernel, each leaves a negative dentry charged to the caller's
 * cgroup).  Returns how many did not fail with ENOENT; *FIRST_ERRNO (if
 * not NULL) gets the first such error (EEXIST for a name that exists).
 */
long lookup_missing(const char *dir, const char *prefix, long n, int *first_errno);
/*
 * lookup_missing("/sys/kernel", PREFIX, N) by a task of cgroup CG: 0 when
 * every lookup said ENOENT, 1 otherwise (ENOMEM: a dentry could not be
 * charged; a TAP comment says how many and the first error), -1 if the
 * task could not run.
 */
int kcg_negative_lookups(const char *cg, const char *prefix, long n);
/* A fresh directory under a tmpfs (/tmp); path in OUT. */
int make_tmpdir(char *out, size_t len, const char *prefix);
/* rm -r DIR (files only one level deep). */
void remove_tree(const char *dir);

/* Is the allocator SLUB (it has /sys/kernel/slab), not SLAB? */
int slab_is_slub(void);
/* Object size of the /proc/slabinfo cache NAME, or -1 if not found. */
long slab_objsize(const char *name);
/* Sum of active objects of the caches whose name starts with PREFIX. */
long slab_active_objs(const char *prefix);

/* One command to the kmem_test module: 0 or the negative errno. */
int kt_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Is the kmem_test module loaded? */
int kt_present(void);
/* The value of KEY in what reading the module's ctl shows; -1 if absent. */
long long kt_value(const char *key);
/* For kcg_run(): kt_cmd("%s", CMD) by a task of the cgroup; 0 on success, 1 on failure. */
int kt_cmd_fn(void *cmd);

/*
 * Poll FILE of CG until it reads at most MAX (a removed child's own memcg
 * structures, charged to its parent, go only when the kernel frees it);
 * returns the last value read.
 */
uint64_t kcg_wait_at_most(const char *cg, const char *file, uint64_t max, int secs);

/*
 * Poll FILE of CG until three reads 100 ms apart agree (objects a task
 * freed through RCU, such as its closed files, leave the counter a grace
 * period after it exits), for at most SECS seconds; returns the last value.
 */
uint64_t kcg_u64_settled(const char *cg, const char *file, int secs);

/* SLUB: shrink every cache and its copies (see kmem_util.c); SLAB: nothing. */
void slab_shrink_all(void);
/* Write 1..3 to /proc/sys/vm/drop_caches, after slab_shrink_all(). */
int drop_caches(int what);
/*
 * KMEM_TIMEOUT_SCALE (default 1; the guest sets it from kmem.timeout_scale=
 * on slow kernels, ci/kernels): waits of the suite and the harness's
 * per-test timeouts are multiplied by it.
 */
int kmem_scale(void);

/* "KEY:" of /proc/meminfo, in bytes (0 if unreadable). */
uint64_t meminfo_bytes(const char *key);
/* meminfo_bytes("Slab"). */
uint64_t meminfo_slab(void);

/*
 * How many per-cgroup caches ("name(id:cgroup)" lines of /proc/slabinfo)
 * contain NEEDLE; EMPTY: only those without an active object; SHOW: print
 * them as TAP comments.  -1 if /proc/slabinfo cannot be read.
 */
#include <stdio.h>
FILE *slabinfo_open_copies(void);
int slabinfo_copies(const char *needle, int empty, int show);

/* The fields of one /proc/slabinfo line. */
struct slabline {
	long active, num, objsize, objperslab, pagesperslab;
	long limit, batchcount, shared;
	long active_slabs, num_slabs;
};

/*
 * The /proc/slabinfo line of cache NAME (exact match), 0 if found; a copy's
 * ("...(id:cgroup)") from the list of copies (slabinfo_open_copies()).
 */
int slab_line(const char *name, struct slabline *l);

/*
 * For kcg_run(): what a task of a new cgroup typically touches, in
 * directory ARG (a file it keeps, a pipe, UNIX sockets, procfs, epoll,
 * eventfd, timerfd, inotify, anonymous memory, a child process): some
 * thirty caches, each of which gets a copy.  0 on success.
 */
int meta_fn(void *arg);

/* CLOCK_MONOTONIC, in milliseconds. */
double now_ms(void);
/* Bind the calling task to CPU; 0 or -1 (errno). */
int set_cpu(int cpu);

#endif
