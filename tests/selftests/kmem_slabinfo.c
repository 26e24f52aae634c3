// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_slabinfo: memory.kmem.slabinfo lists a cgroup's caches (patch 9/10).
 * Format (memory.rst 2.7.3): a header line, then "name active_objs
 * num_objs objsize" per cache, the numbers of the cache's /proc/slabinfo
 * line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kmem_util.h"

#define HEADER "# name            <active_objs> <num_objs> <objsize>"

static char buf[1 << 20];

FIXTURE(cg) {
	char cg[KMEM_PATH_MAX];
	char dir[KMEM_PATH_MAX];
};

FIXTURE_SETUP(cg)
{
	ASSERT_EQ(0, kcg_create_unique(self->cg, sizeof(self->cg), NULL, "sinfo"));
	ASSERT_EQ(0, make_tmpdir(self->dir, sizeof(self->dir), "kmem-sinfo"));
}

FIXTURE_TEARDOWN(cg)
{
	remove_tree(self->dir);
	kcg_remove(self->cg);
}

/* Find NAME's line in TEXT (slabinfo format); 0 if found. */
static int find_line(const char *text, const char *name, long *active, long *num,
		     long *objsize)
{
	const char *p = text;
	char cname[512];

	while (p && *p) {
		if (sscanf(p, "%511s %ld %ld %ld", cname, active, num, objsize) == 4 &&
		    !strcmp(cname, name))
			return 0;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return -1;
}

TEST_F(cg, empty_cgroup_header_only)
{
	ASSERT_GT(kcg_read(self->cg, "memory.kmem.slabinfo", buf, sizeof(buf)), 0);
	EXPECT_STREQ(HEADER "\n", buf);
}

TEST_F(cg, lists_caches_with_slabinfo_numbers)
{
	static char proc[1 << 20];
	char name[600], *line, *save;
	long a1, n1, o1, a2, n2, o2;
	struct stat st;
	int lines = 0;
	size_t len;
	FILE *f;

	ASSERT_EQ(0, stat(self->cg, &st));
	snprintf(name, sizeof(name), "dentry(%llu:%s)", (unsigned long long)st.st_ino,
		 strrchr(self->cg, '/') + 1);
	/*
	 * A few dentries ask for the copy, which a worker makes (slower on
	 * SLUB, which adds its sysfs directory): wait for it, then 2,000
	 * files go into it.
	 */
	kcg_negative_lookups(self->cg, "sinfo-warm", 20);
	for (int i = 0; i < 50; i++) {
		ASSERT_GT(kcg_read(self->cg, "memory.kmem.slabinfo", buf, sizeof(buf)), 0);
		if (strstr(buf, name))
			break;
		usleep(100 * 1000);
	}
	ASSERT_EQ(0, kcg_make_files(self->cg, self->dir, 2000));
	ASSERT_GT(kcg_read(self->cg, "memory.kmem.slabinfo", buf, sizeof(buf)), 0);
	ASSERT_EQ(0, find_line(buf, name, &a1, &n1, &o1)) TH_LOG("%s not in:\n%s", name, buf);
	/* The copy's line in the list of every copy, /proc/slabinfo format. */
	f = slabinfo_open_copies();
	ASSERT_NE(NULL, f);
	len = fread(proc, 1, sizeof(proc) - 1, f);
	fclose(f);
	ASSERT_GT(len, 0);
	proc[len] = '\0';
	ASSERT_EQ(0, find_line(proc, name, &a2, &n2, &o2));
	TH_LOG("%s: %ld %ld %ld (cgroup file) / %ld %ld %ld (list of copies)",
	       name, a1, n1, o1, a2, n2, o2);
	EXPECT_EQ(a2, a1);
	EXPECT_EQ(n2, n1);
	EXPECT_EQ(o2, o1);
	EXPECT_GE(a1, 1500);

	/* Every line after the header: four fields, the last three numbers. */
	ASSERT_EQ(0, strncmp(buf, HEADER "\n", strlen(HEADER) + 1));
	for (line = strtok_r(buf + strlen(HEADER) + 1, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char c[512], extra[8];

		lines++;
		EXPECT_EQ(4, sscanf(line, "%511s %ld %ld %ld %7s", c, &a1, &n1, &o1, extra))
			TH_LOG("bad line: %s", line);
		EXPECT_NE(NULL, strstr(c, ")")) TH_LOG("not a cgroup cache: %s", c);
	}
	EXPECT_GE(lines, 2);
}

/* The root lists the caches no cgroup owns, and no live copy. */
TEST_F(cg, root_lists_unowned_caches)
{
	long a, n, o;

	ASSERT_EQ(0, kcg_make_files(self->cg, self->dir, 2000));
	ASSERT_GT(kcg_read(NULL, "memory.kmem.slabinfo", buf, sizeof(buf)), 0);
	EXPECT_EQ(0, strncmp(buf, HEADER "\n", strlen(HEADER) + 1));
	EXPECT_EQ(0, find_line(buf, "dentry", &a, &n, &o));
	EXPECT_EQ(0, find_line(buf, "kmalloc-64", &a, &n, &o));
	EXPECT_EQ(NULL, strstr(buf, strrchr(self->cg, '/') + 1));
}

/* Open CG's memory.kmem.slabinfo as user "nobody": 0 or -errno. */
static int open_as_nobody(const char *cg)
{
	char path[KMEM_PATH_MAX + 32];
	int status, fd;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/memory.kmem.slabinfo", cg ? cg : memcg_mount());
	pid = fork();
	if (pid < 0)
		return -EAGAIN;
	if (!pid) {
		/* A uid other than 0 drops every capability. */
		if (setgid(65534) || setuid(65534))
			_exit(250);
		fd = open(path, O_RDONLY);
		_exit(fd < 0 ? errno : 0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 250)
		return -EAGAIN;
	return -WEXITSTATUS(status);
}

/*
 * Slab counts are what /proc/slabinfo keeps to root (mode 0400): how full a
 * cache is tells an attacker when a heap spray has filled its slabs.  Every
 * memory.kmem.slabinfo, the root's (every cache of the system) and a
 * cgroup's (its copies), is as private.
 */
TEST_F(cg, files_private_as_proc_slabinfo)
{
	EXPECT_EQ(-EACCES, open_as_nobody(NULL));
	EXPECT_EQ(-EACCES, open_as_nobody(self->cg));
	EXPECT_GT(kcg_read(NULL, "memory.kmem.slabinfo", buf, sizeof(buf)), 0);
	EXPECT_GT(kcg_read(self->cg, "memory.kmem.slabinfo", buf, sizeof(buf)), 0);
}

TEST_HARNESS_MAIN
