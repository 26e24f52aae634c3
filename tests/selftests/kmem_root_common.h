/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by kmem_root_on.c and kmem_root_off.c: the root's kmem usage. */
#ifndef KMEM_ROOT_COMMON_H
#define KMEM_ROOT_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmem_util.h"

#define KUSAGE "memory.kmem.usage_in_bytes"

/* N failed lookups in /sys by this task (in the root cgroup): dentries. */
static inline int root_lookups(long n)
{
	char path[128];
	struct stat st;
	long i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/root-nx%d-%ld", getpid(), i);
		if (stat(path, &st) == 0 || errno != ENOENT)
			return -1;
	}
	return 0;
}

/* The root's kmem usage, after the statistics had time to be flushed. */
static inline uint64_t root_kmem_settled(void)
{
	usleep(2500 * 1000);
	return kcg_u64(NULL, KUSAGE);
}

#endif
