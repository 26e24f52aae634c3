// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_badinput: every control file the series adds or changes, fed bad
 * input on a normal cgroup, on the root and through the file descriptors of
 * a removed cgroup (patch 1/10 and the files of 2/10, 7/10, 9/10).
 * Each input gets the errno memory.rst (patch 10/10) and docs/interface.rst
 * document, and the file reads the same value afterwards.
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

#define UNLIMITED 9223372036854771712ULL

struct bad {
	const char *in;
	int err;	/* the documented errno, positive */
};

/* A string of LEN copies of C (static storage, one at a time). */
static const char *repeat(char c, size_t len)
{
	static char buf[8192];

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memset(buf, c, len);
	buf[len] = '\0';
	return buf;
}

/* What every file refuses: the generic kernfs limits. */
#define LONG_OK 4000	/* under a page: reaches the parser */
#define LONG_BIG 5000	/* over a page: kernfs refuses it */

static const struct bad mode_bad[] = {
	{ " ", EINVAL }, { "\n", EINVAL }, { "\t \n", EINVAL }, { "2", EINVAL }, { "-1", EINVAL }, { "abc", EINVAL }, { "01", EINVAL },
	{ "+1", EINVAL }, { "1x", EINVAL }, { "0 1", EINVAL }, { "1K", EINVAL },
	{ "0x1", EINVAL }, { "99999999999999999999", EINVAL },
	{ "18446744073709551616", EINVAL }, { "1\n1", EINVAL },
};

static const struct bad limit_bad[] = {
	{ " ", EINVAL }, { "\n", EINVAL }, { "abc", EINVAL }, { "lots", EINVAL }, { "1.5G", EINVAL }, { "-2", EINVAL },
	{ "-1K", EINVAL }, { "1KB", EINVAL }, { "1 K", EINVAL }, { "0x", EINVAL },
	{ "max", EINVAL }, { "1Q", EINVAL }, { "+1M", EINVAL },
	{ "18446744073709551616", ERANGE }, { "99999999999999999999999", ERANGE },
	{ "16777216T", ERANGE }, { "16E", ERANGE }, { "0x10000000000000000", ERANGE },
};

/* Write IN to FILE of CG; expect ERR and the value EXPECT afterwards. */
static int check_bad(struct __test_metadata *_metadata, const char *cg,
		     const char *file, const char *in, int err, uint64_t expect)
{
	int ret = kcg_write(cg, file, in);
	uint64_t now = kcg_u64(cg, file);

	if (ret != -err || now != expect) {
		printf("# %s <- \"%.40s%s\" (%zu bytes): %s (want %s), reads %llu (want %llu)\n",
		       file, in, strlen(in) > 40 ? "..." : "", strlen(in),
		       ret ? strerror(-ret) : "success", strerror(err),
		       (unsigned long long)now, (unsigned long long)expect);
		return 1;
	}
	return 0;
}

/*
 * A read-only FILE of CG refuses writes: root may open it for writing
 * (CAP_DAC_OVERRIDE), and the cgroup core answers EINVAL to the write.
 */
static int write_refused(const char *cg, const char *file)
{
	char path[KMEM_PATH_MAX + 64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		printf("# %s: open for writing: %s\n", path, strerror(errno));
		return 1;
	}
	if (write(fd, "0", 1) >= 0 || errno != EINVAL) {
		printf("# %s: write gave %s, not EINVAL\n", path,
		       errno ? strerror(errno) : "success");
		err = 1;
	}
	close(fd);
	return err;
}

/* A zero-length write(2) succeeds and changes nothing (cgroup core). */
static int empty_write_is_noop(const char *cg, const char *file)
{
	char path[KMEM_PATH_MAX + 64];
	uint64_t before = kcg_u64(cg, file);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return 1;
	n = write(fd, "", 0);
	close(fd);
	if (n != 0 || kcg_u64(cg, file) != before) {
		printf("# %s: empty write returned %zd, value %llu -> %llu\n", path, n,
		       (unsigned long long)before, (unsigned long long)kcg_u64(cg, file));
		return 1;
	}
	return 0;
}

FIXTURE(cg) {
	char cg[KMEM_PATH_MAX];
	char child[KMEM_PATH_MAX];
};

FIXTURE_SETUP(cg)
{
	self->child[0] = '\0';
	ASSERT_EQ(0, kcg_create_unique(self->cg, sizeof(self->cg), NULL, "badin"));
}

FIXTURE_TEARDOWN(cg)
{
	if (self->child[0])
		kcg_remove(self->child);
	kcg_remove(self->cg);
}

/* memory.kmem.independent_kmem_limit: only "0" and "1", in either mode. */
TEST_F(cg, mode_file_refuses_bad_input)
{
	int fails = 0, mode;
	size_t i;

	ASSERT_EQ(0, kcg_u64(self->cg, MODE));
	for (mode = 0; mode <= 1; mode++) {
		if (mode)
			ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
		for (i = 0; i < ARRAY_SIZE(mode_bad); i++)
			fails += check_bad(_metadata, self->cg, MODE, mode_bad[i].in,
					   mode_bad[i].err, mode);
		fails += check_bad(_metadata, self->cg, MODE, repeat('1', LONG_OK), EINVAL, mode);
		fails += empty_write_is_noop(self->cg, MODE);
		fails += check_bad(_metadata, self->cg, MODE, repeat('1', LONG_BIG), E2BIG, mode);
	}
	/* Whitespace around a valid value is stripped. */
	EXPECT_EQ(0, kcg_write(self->cg, MODE, " 0\n"));
	EXPECT_EQ(0, kcg_u64(self->cg, MODE));
	EXPECT_EQ(0, kcg_write(self->cg, MODE, "\t1 \n"));
	EXPECT_EQ(1, kcg_u64(self->cg, MODE));
	EXPECT_EQ(0, write_refused(self->cg, "memory.kmem.slabinfo"));
	EXPECT_EQ(0, fails);
}

/*
 * memory.kmem.limit_in_bytes in mode 0 is 6.1's file: what 6.1's parser
 * (page_counter_memparse()) takes is accepted and ignored, what it refuses
 * is refused with EINVAL, and the limit never changes.
 */
static const char *const limit_6_1_accepts[] = {
	"64M", "-1", "0", " ", "\n", "18446744073709551616", "16E",
};

static const char *const limit_6_1_refuses[] = {
	"abc", "lots", "1.5G", "-2", "-1K", "1KB", "1 K", "0x", "max", "1Q", "+1M",
};

TEST_F(cg, limit_in_mode0_as_6_1)
{
	int fails = 0;
	size_t i;

	ASSERT_EQ(0, kcg_u64(self->cg, MODE));
	ASSERT_EQ(UNLIMITED, kcg_u64(self->cg, KLIMIT));
	for (i = 0; i < ARRAY_SIZE(limit_6_1_accepts); i++)
		fails += check_bad(_metadata, self->cg, KLIMIT, limit_6_1_accepts[i],
				   0, UNLIMITED);
	for (i = 0; i < ARRAY_SIZE(limit_6_1_refuses); i++)
		fails += check_bad(_metadata, self->cg, KLIMIT, limit_6_1_refuses[i],
				   EINVAL, UNLIMITED);
	fails += check_bad(_metadata, self->cg, KLIMIT, repeat('1', LONG_BIG), E2BIG,
			   UNLIMITED);
	EXPECT_EQ(0, fails);
}

/* memory.kmem.limit_in_bytes in mode 1: the syntax and its range. */
TEST_F(cg, limit_refuses_bad_input_in_mode1)
{
	static const struct { const char *in; uint64_t val; } good[] = {
		{ "64M", 64 * KMEM_MIB }, { " 32M\n", 32 * KMEM_MIB },
		{ "0x4000000", 64 * KMEM_MIB }, { "1g", 1024 * KMEM_MIB },
		{ "70000", 69632 }, { "-1", UNLIMITED },
		{ "16777215T", UNLIMITED }, { "18446744073709551615", UNLIMITED },
		{ "128m", 128 * KMEM_MIB },
	};
	uint64_t cur;
	int fails = 0;
	size_t i;

	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		EXPECT_EQ(0, kcg_write(self->cg, KLIMIT, good[i].in)) {
			TH_LOG("\"%s\" refused", good[i].in);
		}
		EXPECT_EQ(good[i].val, kcg_u64(self->cg, KLIMIT)) {
			TH_LOG("after \"%s\"", good[i].in);
		}
	}
	cur = kcg_u64(self->cg, KLIMIT);
	ASSERT_EQ(128 * KMEM_MIB, cur);
	fails += empty_write_is_noop(self->cg, KLIMIT);
	for (i = 0; i < ARRAY_SIZE(limit_bad); i++)
		fails += check_bad(_metadata, self->cg, KLIMIT, limit_bad[i].in,
				   limit_bad[i].err, cur);
	fails += check_bad(_metadata, self->cg, KLIMIT, repeat('9', LONG_OK), ERANGE, cur);
	fails += check_bad(_metadata, self->cg, KLIMIT, repeat('x', LONG_OK), EINVAL, cur);
	fails += check_bad(_metadata, self->cg, KLIMIT, repeat('1', LONG_BIG), E2BIG, cur);
	EXPECT_EQ(0, fails);
}

/* The root: no mode, no limit, whatever is written; read-only stays so. */
TEST(root_refuses_every_write)
{
	const char *root = memcg_mount();
	uint64_t mode, limit;
	int fails = 0;
	size_t i;

	mode = kcg_u64(root, MODE);
	limit = kcg_u64(root, KLIMIT);
	ASSERT_EQ(0, mode);
	ASSERT_EQ(UNLIMITED, limit);
	fails += check_bad(_metadata, root, MODE, "1", EINVAL, 0);
	fails += check_bad(_metadata, root, MODE, "0", EINVAL, 0);
	for (i = 0; i < ARRAY_SIZE(mode_bad); i++)
		fails += check_bad(_metadata, root, MODE, mode_bad[i].in, mode_bad[i].err, 0);
	/* The root is in mode 0: 6.1's parser, then EINVAL (no root limit). */
	fails += check_bad(_metadata, root, KLIMIT, "64M", EINVAL, UNLIMITED);
	fails += check_bad(_metadata, root, KLIMIT, "-1", EINVAL, UNLIMITED);
	for (i = 0; i < ARRAY_SIZE(limit_bad); i++)
		fails += check_bad(_metadata, root, KLIMIT, limit_bad[i].in,
				   EINVAL, UNLIMITED);
	EXPECT_EQ(-EINVAL, kcg_write(root, "memory.force_empty", "0"));
	fails += write_refused(root, "memory.kmem.slabinfo");
	fails += write_refused(root, "memory.stat");
	fails += write_refused(root, "memory.kmem.usage_in_bytes");
	EXPECT_EQ(0, fails);
}

/*
 * A cgroup being removed: descriptors opened before rmdir answer ENODEV to
 * reads and writes alike, and nothing is changed through them.
 */
TEST_F(cg, removed_cgroup_files_answer_enodev)
{
	static const char *const files[] = {
		MODE, KLIMIT, "memory.kmem.slabinfo", "memory.stat",
		"memory.force_empty", "memory.kmem.usage_in_bytes",
	};
	int fd[ARRAY_SIZE(files)];
	char path[KMEM_PATH_MAX + 64], buf[64];
	size_t i;

	/* Mode 1 starts under the root: the child inherits it. */
	ASSERT_EQ(0, kcg_write(self->cg, MODE, "1"));
	ASSERT_EQ(0, kcg_create(self->child, sizeof(self->child), self->cg, "doomed"));
	ASSERT_EQ(1, kcg_u64(self->child, MODE));
	ASSERT_EQ(0, kcg_write(self->child, KLIMIT, "16M"));
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		int wr = !strcmp(files[i], MODE) || !strcmp(files[i], KLIMIT) ||
			 !strcmp(files[i], "memory.force_empty");

		snprintf(path, sizeof(path), "%s/%s", self->child, files[i]);
		fd[i] = open(path, wr ? O_RDWR : O_RDONLY);
		ASSERT_LE(0, fd[i]) {
			TH_LOG("open %s: %s", path, strerror(errno));
		}
	}
	ASSERT_EQ(0, kcg_remove(self->child));
	self->child[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		errno = 0;
		EXPECT_EQ(-1, read(fd[i], buf, sizeof(buf))) {
			TH_LOG("%s still readable after rmdir", files[i]);
		}
		EXPECT_EQ(ENODEV, errno) {
			TH_LOG("read %s: %s", files[i], strerror(errno));
		}
		if (!strcmp(files[i], MODE) || !strcmp(files[i], KLIMIT) ||
		    !strcmp(files[i], "memory.force_empty")) {
			errno = 0;
			EXPECT_EQ(-1, pwrite(fd[i], "0", 1, 0));
			EXPECT_EQ(ENODEV, errno) {
				TH_LOG("write %s: %s", files[i], strerror(errno));
			}
		}
		close(fd[i]);
	}
}

TEST_HARNESS_MAIN
