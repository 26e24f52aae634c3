// SPDX-License-Identifier: GPL-2.0
/* Helpers of the memcg kmem suite; see kmem_util.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kmem_util.h"


const char *memcg_mount(void)
{
	const char *env = getenv("KMEM_CGROUP_ROOT");

	return env && *env ? env : "/sys/fs/cgroup/memory";
}

static int path_of(char *out, size_t len, const char *cg, const char *file)
{
	int n = snprintf(out, len, "%s/%s", cg ? cg : memcg_mount(), file);

	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

int kcg_create(char *out, size_t len, const char *parent, const char *name)
{
	int ret = path_of(out, len, parent, name);

	if (ret)
		return ret;
	if (mkdir(out, 0755))
		return -errno;
	return 0;
}

int kcg_create_unique(char *out, size_t len, const char *parent, const char *prefix)
{
	static unsigned int seq;
	char name[128];

	snprintf(name, sizeof(name), "%s-%d-%u", prefix, getpid(), seq++);
	return kcg_create(out, len, parent, name);
}

int kcg_remove(const char *cg)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!rmdir(cg) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(50 * 1000);
	}
	return -EBUSY;
}

ssize_t kcg_read(const char *cg, const char *file, char *buf, size_t len)
{
	char path[KMEM_PATH_MAX];
	ssize_t n, total = 0;
	int fd, ret;

	ret = path_of(path, sizeof(path), cg, file);
	if (ret)
		return ret;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	while ((size_t)total + 1 < len) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			ret = -errno;
			close(fd);
			return ret;
		}
		if (!n)
			break;
		total += n;
	}
	buf[total] = '\0';
	close(fd);
	return total;
}

int kcg_read_u64(const char *cg, const char *file, uint64_t *val)
{
	char buf[64], *end;
	ssize_t n = kcg_read(cg, file, buf, sizeof(buf));

	if (n < 0)
		return n;
	errno = 0;
	*val = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

uint64_t kcg_u64(const char *cg, const char *file)
{
	uint64_t v;

	return kcg_read_u64(cg, file, &v) ? UINT64_MAX : v;
}

int kcg_write(const char *cg, const char *file, const char *val)
{
	char path[KMEM_PATH_MAX];
	int fd, ret;
	ssize_t n;

	ret = path_of(path, sizeof(path), cg, file);
	if (ret)
		return ret;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	ret = n < 0 ? -errno : 0;
	close(fd);
	return ret;
}

int kcg_has(const char *cg, const char *file)
{
	char path[KMEM_PATH_MAX];

	if (path_of(path, sizeof(path), cg, file))
		return 0;
	return access(path, F_OK) == 0;
}

uint64_t kcg_stat(const char *cg, const char *key)
{
	static char buf[16384];
	size_t klen = strlen(key);
	char *line;

	if (kcg_read(cg, "memory.stat", buf, sizeof(buf)) < 0)
		return UINT64_MAX;
	for (line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return strtoull(line + klen + 1, NULL, 10);
	}
	return UINT64_MAX;
}

int kcg_run_sig(const char *cg, int (*fn)(void *), void *arg, int *signo)
{
	char pid[32];
	int status;
	pid_t child;

	if (signo)
		*signo = 0;
	child = fork();
	if (child < 0)
		return -1;
	if (!child) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (cg && kcg_write(cg, "cgroup.procs", pid))
			_exit(125);
		_exit(fn(arg) & 0xff);
	}
	if (waitpid(child, &status, 0) < 0)
		return -1;
	if (WIFSIGNALED(status)) {
		if (signo)
			*signo = WTERMSIG(status);
		return -1;
	}
	return WEXITSTATUS(status);
}

int kcg_run(const char *cg, int (*fn)(void *), void *arg)
{
	return kcg_run_sig(cg, fn, arg, NULL);
}

struct files_req {
	const char *dir;
	long n;
};

static int files_req_fn(void *arg)
{
	struct files_req *req = arg;

	return make_files(req->dir, req->n, NULL) == req->n ? 0 : 1;
}

int kcg_make_files(const char *cg, const char *dir, long n)
{
	struct files_req req = { .dir = dir, .n = n };

	return kcg_run(cg, files_req_fn, &req);
}

long lookup_missing(const char *dir, const char *prefix, long n, int *first_errno)
{
	char path[KMEM_PATH_MAX];
	struct stat st;
	long i, other = 0;
	int first = 0;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s-%ld", dir, prefix, i);
		if (stat(path, &st) == 0) {
			if (!other++)
				first = EEXIST;
		} else if (errno != ENOENT) {
			if (!other++)
				first = errno;
		}
	}
	if (first_errno)
		*first_errno = first;
	return other;
}

struct lookups_req {
	const char *prefix;
	long n;
};

static int lookups_req_fn(void *arg)
{
	struct lookups_req *req = arg;
	long other;
	int first;

	other = lookup_missing("/sys/kernel", req->prefix, req->n, &first);
	if (other)
		printf("# %ld of %ld lookups failed with something else than ENOENT, first: %s\n",
		       other, req->n, strerror(first));
	return other ? 1 : 0;
}

int kcg_negative_lookups(const char *cg, const char *prefix, long n)
{
	struct lookups_req req = { .prefix = prefix, .n = n };

	return kcg_run(cg, lookups_req_fn, &req);
}

long make_files(const char *dir, long n, int *err)
{
	char path[KMEM_PATH_MAX];
	long i;
	int fd;

	if (err)
		*err = 0;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", dir, i);
		fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0644);
		if (fd < 0) {
			if (err)
				*err = errno;
			break;
		}
		close(fd);
	}
	return i;
}

int make_tmpdir(char *out, size_t len, const char *prefix)
{
	int n = snprintf(out, len, "/tmp/%s-XXXXXX", prefix);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return mkdtemp(out) ? 0 : -errno;
}

void remove_tree(const char *dir)
{
	char path[KMEM_PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

int slab_is_slub(void)
{
	return access("/sys/kernel/slab", F_OK) == 0;
}

/*
 * /proc/slabinfo 2.1: "name active_objs num_objs objsize objperslab
 * pagesperslab : tunables ...".  A name may hold spaces only in caches this
 * suite does not ask about by exact name.
 */
static long slab_scan(const char *name, int prefix, int field)
{
	char line[1024], cname[512];
	long active, num, objsize, total = -1;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%511s %ld %ld %ld", cname, &active, &num, &objsize) != 4)
			continue;
		if (prefix ? strncmp(cname, name, strlen(name)) : strcmp(cname, name))
			continue;
		if (field == 3) {
			total = objsize;
			break;
		}
		total = (total < 0 ? 0 : total) + active;
	}
	fclose(f);
	return total;
}

long slab_objsize(const char *name)
{
	return slab_scan(name, 0, 3);
}

long slab_active_objs(const char *prefix)
{
	return slab_scan(prefix, 1, 1);
}

int kt_present(void)
{
	return access(KT_CTL, W_OK) == 0;
}

long long kt_value(const char *key)
{
	char buf[1024], *p;
	size_t klen = strlen(key);
	ssize_t n;
	int fd;

	fd = open(KT_CTL, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, klen) && p[klen] == ' ')
			return strtoll(p + klen + 1, NULL, 10);
	}
	return -1;
}

int kt_cmd_fn(void *cmd)
{
	return kt_cmd("%s", (const char *)cmd) ? 1 : 0;
}

int kt_cmd(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int fd, ret = 0;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(KT_CTL, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, strlen(buf)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

uint64_t kcg_wait_at_most(const char *cg, const char *file, uint64_t max, int secs)
{
	uint64_t v = kcg_u64(cg, file);
	int i;

	for (i = 0; i < secs * 10 * kmem_scale() && (v == UINT64_MAX || v > max); i++) {
		usleep(100 * 1000);
		v = kcg_u64(cg, file);
	}
	return v;
}

uint64_t kcg_u64_settled(const char *cg, const char *file, int secs)
{
	uint64_t v = kcg_u64(cg, file), prev;
	int i, same = 0;

	for (i = 0; i < secs * 10 * kmem_scale() && same < 2; i++) {
		usleep(100 * 1000);
		prev = v;
		v = kcg_u64(cg, file);
		same = v == prev ? same + 1 : 0;
	}
	return v;
}

/*
 * SLUB keeps empty and partly used slabs of every cache, per CPU and per
 * node, with no periodic reaping (SLAB reaps its free slabs every few
 * seconds).  With per-cgroup caches those slabs stay charged to the
 * cgroup until reused or shrunk: write 1 to the shrink file of every cache
 * (a write to a cache reaches its copies).  Aliases are symbolic links to
 * the same cache: skipped.  No-op on SLAB.
 */
void slab_shrink_all(void)
{
	char path[1024];
	struct dirent *de;
	struct stat st;
	DIR *d = opendir("/sys/kernel/slab");

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s", de->d_name);
		if (lstat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		kcg_write(path, "shrink", "1");
	}
	closedir(d);
}

int drop_caches(int what)
{
	char v[4];
	int fd, ret = 0;

	sync();
	slab_shrink_all();
	snprintf(v, sizeof(v), "%d", what);
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, v, strlen(v)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

uint64_t meminfo_bytes(const char *key)
{
	char line[256], fmt[64];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	snprintf(fmt, sizeof(fmt), "%s: %%llu kB", key);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

uint64_t meminfo_slab(void)
{
	return meminfo_bytes("Slab");
}

/*
 * Where the per-cgroup copies are listed, one /proc/slabinfo-format line
 * each: debugfs memcg_slabinfo on the series (/proc/slabinfo folds the
 * copies into their original cache's line), else /proc/slabinfo.
 */
FILE *slabinfo_open_copies(void)
{
	FILE *f = fopen("/sys/kernel/debug/memcg_slabinfo", "r");

	return f ? f : fopen("/proc/slabinfo", "r");
}

int slabinfo_copies(const char *needle, int empty, int show)
{
	char line[1024], name[512];
	FILE *f = slabinfo_open_copies();
	long active;
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%511s %ld", name, &active) == 2 && strchr(name, '(') &&
		    strstr(name, needle) && (!empty || !active)) {
			n++;
			if (show)
				printf("#   left: %.100s\n", line);
		}
	}
	fclose(f);
	return n;
}

int kmem_scale(void)
{
	const char *s = getenv("KMEM_TIMEOUT_SCALE");
	int n = s ? atoi(s) : 1;

	return n > 0 ? n : 1;
}

/*
 * The harness times each test out with alarm(2); linked with
 * -Wl,--wrap=alarm, its timeouts scale with KMEM_TIMEOUT_SCALE too.  The
 * harness arms the alarm when a test starts and disarms it when the test
 * has ended: the test's wall time is printed there, as a TAP comment
 * before its result (ci/run-suite lists the slowest).
 */
unsigned int __real_alarm(unsigned int secs);
unsigned int __wrap_alarm(unsigned int secs);

unsigned int __wrap_alarm(unsigned int secs)
{
	static double started;

	if (secs) {
		started = now_ms();
	} else if (started) {
		printf("# time: %.1f s\n", (now_ms() - started) / 1e3);
		fflush(stdout);
		started = 0;
	}
	return __real_alarm(secs * kmem_scale());
}

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int set_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int slab_line(const char *name, struct slabline *l)
{
	char line[1024], cname[512];
	FILE *f = strchr(name, '(') ? slabinfo_open_copies() : fopen("/proc/slabinfo", "r");
	int found = -1;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%511s", cname) != 1 || strcmp(cname, name))
			continue;
		memset(l, 0, sizeof(*l));
		if (sscanf(line, "%*s %ld %ld %ld %ld %ld : tunables %ld %ld %ld : slabdata %ld %ld",
			   &l->active, &l->num, &l->objsize, &l->objperslab,
			   &l->pagesperslab, &l->limit, &l->batchcount, &l->shared,
			   &l->active_slabs, &l->num_slabs) >= 5)
			found = 0;
		break;
	}
	fclose(f);
	return found;
}

int meta_fn(void *arg)
{
	char path[KMEM_PATH_MAX + 32], buf[4096];
	int fd, p[2], sv[2], ep, efd, tfd, ifd, st;
	struct epoll_event ev = { .events = EPOLLIN };
	pid_t pid;
	char *m;

	snprintf(path, sizeof(path), "%s/m%d", (const char *)arg, getpid());
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0 || pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	close(fd);
	if (write(p[1], "x", 1) != 1 || send(sv[0], "x", 1, 0) != 1 ||
	    recv(sv[1], buf, 1, 0) != 1)
		return 1;
	close(sv[0]);
	close(sv[1]);
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return 1;
	ep = epoll_create1(0);
	efd = eventfd(0, 0);
	tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	ifd = inotify_init1(0);
	if (ep < 0 || efd < 0 || tfd < 0 || ifd < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) ||
	    inotify_add_watch(ifd, (const char *)arg, IN_CREATE) < 0)
		return 1;
	fd = open("/proc/self/status", O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0)
		return 1;
	close(fd);
	m = mmap(NULL, 16 * KMEM_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	memset(m, 1, 16 * KMEM_PAGE);
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return 0;
}
