// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_churn: a module with a slab cache of its own, loaded and unloaded in
 * a loop by the suite's stress test (kmem_stress).
 *
 * Loading creates the cache "kmem_churn" and allocates `objects` objects
 * from it in the context of the task that loads the module, so in that
 * task's memory cgroup: with the series, a per-cgroup copy of the cache is
 * created (deferred to a workqueue, so its creation may still be pending
 * when the module goes).  Unloading frees the objects and destroys the
 * cache, which must take every per-cgroup copy with it (patch 6/10).
 * If an allocation fails (a kmem limit), loading fails with ENOMEM and
 * leaves nothing behind.
 */
#include <linux/module.h>
#include <linux/slab.h>

static unsigned int objects = 64;
module_param(objects, uint, 0444);
MODULE_PARM_DESC(objects, "objects allocated at load time (default 64)");

static struct kmem_cache *churn_cache;
static void **churn_objs;

/* A constructor keeps the cache from being merged with another one. */
static void churn_ctor(void *obj)
{
	memset(obj, 0, 200);
}

static void churn_free(unsigned int n)
{
	while (n--)
		kmem_cache_free(churn_cache, churn_objs[n]);
	kvfree(churn_objs);
	kmem_cache_destroy(churn_cache);
}

static int __init churn_init(void)
{
	unsigned int i;

	churn_cache = kmem_cache_create("kmem_churn", 200, 0, 0, churn_ctor);
	if (!churn_cache)
		return -ENOMEM;
	churn_objs = kvcalloc(objects ?: 1, sizeof(*churn_objs), GFP_KERNEL);
	if (!churn_objs) {
		kmem_cache_destroy(churn_cache);
		return -ENOMEM;
	}
	for (i = 0; i < objects; i++) {
		churn_objs[i] = kmem_cache_alloc(churn_cache, GFP_KERNEL);
		if (!churn_objs[i]) {
			churn_free(i);
			return -ENOMEM;
		}
	}
	return 0;
}

static void __exit churn_exit(void)
{
	churn_free(objects);
}

module_init(churn_init);
module_exit(churn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("memcg kmem suite: a cache loaded and unloaded in a loop");
