// SPDX-License-Identifier: GPL-2.0
/*
 * kmem_test: lets the memcg kmem suite make kernel allocations that user
 * space cannot ask for directly: a given GFP mask, a given size, atomic
 * context, and a slab cache of the module's own.
 *
 * Interface: /sys/kernel/debug/kmem_test/ctl.  Write one command per
 * write(2); it runs in the writer's context, so the writer's memory cgroup
 * is charged.  A command that fails returns its errno from write(2).
 * Reading gives the counts of what the module holds and the GFP flags of
 * the last command as %pGg prints them.
 *
 *   kmalloc COUNT SIZE FLAGS   COUNT kmalloc(SIZE, FLAGS) objects
 *   pages COUNT ORDER FLAGS    COUNT alloc_pages(FLAGS, ORDER)
 *   cache_create SIZE CFLAGS   create the module's cache "kmem_test_cache"
 *   cache_alloc COUNT FLAGS    COUNT objects from it
 *   atomic COUNT SIZE          COUNT kmalloc(SIZE, GFP_ATOMIC) objects from
 *                              a timer (softirq context); waits for it
 *   atomic_remote COUNT SIZE   the same, charged to the writer's cgroup
 *                              (set_active_memcg() in the timer)
 *   remote_hold                keep a reference on the writer's cgroup
 *                              (until "free")
 *   remote_kmalloc COUNT SIZE FLAGS
 *                              as kmalloc, charged to remote_hold's cgroup
 *                              (set_active_memcg()), removed or not
 *   dying COUNT SIZE FLAGS     send the writer SIGKILL, then as kmalloc:
 *                              a dying task that allocates in a loop which
 *                              does not check signals
 *   lru_owner COUNT FLAGS      COUNT objects from the module's cache (16
 *                              bytes at least) put on a memcg-aware
 *                              list_lru, as dentries and inodes are, then
 *                              taken off and freed; reading shows
 *                              "lru_owned": how many the lru filed under
 *                              the writer's cgroup
 *   free                       free every object and page held
 *   free_parallel              free the cache's objects held, from one
 *                              kernel thread bound to each online CPU
 *                              (at most 8), all at once
 *   cache_destroy              free the cache's objects, destroy the cache
 *   merge_create 1|2           create "kmem_test_merge" (1001-byte objects),
 *                              or then "kmem_test_merge2" (1007 bytes),
 *                              which the kernel merges into the first
 *                              (ENOTUNIQ if it did not: slab_nomerge or
 *                              debugging options)
 *   merge_check COUNT          COUNT objects of the first cache filled with
 *                              0xa5 (up to ksize()) and freed, then COUNT
 *                              kmem_cache_zalloc() of the second: EIO if
 *                              one is smaller than 1007 bytes or not zeroed
 *   merge_destroy              destroy both
 *   bench hot|batch COUNT SIZE FLAGS
 *                              time COUNT kmalloc(SIZE, FLAGS)+kfree pairs:
 *                              "hot" frees each object at once, "batch"
 *                              allocates BENCH_BATCH then frees them, so
 *                              slabs come and go; SIZE 0 uses the module's
 *                              cache.  Reading shows "bench_ns".
 *
 * FLAGS: names joined by '|': KERNEL ATOMIC NOWAIT ACCOUNT NOACCOUNT NOFAIL
 * NORETRY NOWARN ZERO.  CFLAGS: 0 or ACCOUNT (SLAB_ACCOUNT).  A flag the
 * running kernel does not have is refused with EOPNOTSUPP.
 *
 * An allocation failure stops the command with ENOMEM; what was allocated
 * before it stays held (and counted) until "free".
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/slab.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/uaccess.h>
#include <linux/timer.h>
#include <linux/completion.h>
#include <linux/string.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/memcontrol.h>
#include <linux/list_lru.h>
#include <linux/sched/signal.h>
#include <linux/nodemask.h>
#include <linux/kthread.h>
#include <linux/cpumask.h>

#define CTL_MAX 256
#define MAX_COUNT (1 << 20)

struct held_obj {
	struct list_head list;
	void *ptr;		/* object, or NULL for pages */
	struct page *page;
	unsigned int order;
	bool from_cache;
};

static DEFINE_MUTEX(kt_lock);		/* serialises commands and the lists */
static LIST_HEAD(kt_held);
static unsigned long kt_objects, kt_pages, kt_cache_objects;
static struct kmem_cache *kt_cache;
static struct dentry *kt_dir;
static gfp_t kt_last_gfp;		/* flags of the last command, for %pGg */
static u64 kt_bench_ns;			/* duration of the last bench command */
static unsigned long kt_lru_owned;	/* result of the last lru_owner command */
static struct mem_cgroup *kt_remote;	/* remote_hold's cgroup, until free */

#define BENCH_BATCH 256

/* The bookkeeping itself must never be charged to the tester's cgroup. */
#ifdef __GFP_NOACCOUNT
#define KT_INTERNAL_GFP (GFP_KERNEL | __GFP_NOACCOUNT)
#define KT_HAS_NOACCOUNT 1
#else
#define KT_INTERNAL_GFP GFP_KERNEL
#define KT_HAS_NOACCOUNT 0
#endif

/* Two caches that SLAB and SLUB merge (sizes within a pointer of each other). */
#define MERGE_SIZE1 1001
#define MERGE_SIZE2 1007
static struct kmem_cache *kt_merge1, *kt_merge2;

static int merge_create(unsigned long which)
{
	if (which == 1 && !kt_merge1) {
		kt_merge1 = kmem_cache_create("kmem_test_merge", MERGE_SIZE1, 0, 0, NULL);
		return kt_merge1 ? 0 : -ENOMEM;
	}
	if (which == 2 && kt_merge1 && !kt_merge2) {
		kt_merge2 = kmem_cache_create("kmem_test_merge2", MERGE_SIZE2, 0, 0, NULL);
		if (!kt_merge2)
			return -ENOMEM;
		return kt_merge2 == kt_merge1 ? 0 : -ENOTUNIQ;
	}
	return -EINVAL;
}

static void merge_destroy(void)
{
	kmem_cache_destroy(kt_merge2);
	kmem_cache_destroy(kt_merge1);
	kt_merge1 = kt_merge2 = NULL;
}

/*
 * A cache merged into another serves its allocations from the other's
 * objects, made large enough (and zeroed as far) as the merged cache asks.
 * The writer's cgroup may be served by a copy of the cache: the copy must
 * have grown with it.
 */
static int merge_check(unsigned long count)
{
	struct kmem_cache *b = kt_merge2 ?: kt_merge1;
	unsigned int want = kt_merge2 ? MERGE_SIZE2 : MERGE_SIZE1;
	void **p;
	unsigned long i, bad = 0;
	size_t j;

	if (!kt_merge1 || !count || count > 4096)
		return -EINVAL;
	p = kcalloc(count, sizeof(*p), KT_INTERNAL_GFP);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		p[i] = kmem_cache_alloc(kt_merge1, GFP_KERNEL);
		if (p[i])
			memset(p[i], 0xa5, ksize(p[i]));
	}
	for (i = 0; i < count; i++)
		if (p[i])
			kmem_cache_free(kt_merge1, p[i]);
	for (i = 0; i < count; i++) {
		p[i] = kmem_cache_zalloc(b, GFP_KERNEL);
		if (!p[i])
			continue;
		if (ksize(p[i]) < want) {
			bad++;
			continue;
		}
		for (j = 0; j < want; j++) {
			if (((u8 *)p[i])[j]) {
				bad++;
				break;
			}
		}
	}
	for (i = 0; i < count; i++)
		if (p[i])
			kmem_cache_free(b, p[i]);
	kfree(p);
	if (bad)
		pr_err("kmem_test: %lu of %lu objects of %u bytes short or not zeroed\n",
		       bad, count, want);
	return bad ? -EIO : 0;
}

static void kt_ctor(void *obj)
{
}

static int parse_flags(char *s, gfp_t *out)
{
	gfp_t gfp = 0;
	char *tok;

	while ((tok = strsep(&s, "|")) != NULL) {
		if (!strcmp(tok, "KERNEL"))
			gfp |= GFP_KERNEL;
		else if (!strcmp(tok, "ATOMIC"))
			gfp |= GFP_ATOMIC;
		else if (!strcmp(tok, "NOWAIT"))
			gfp |= GFP_NOWAIT;
		else if (!strcmp(tok, "ACCOUNT"))
			gfp |= __GFP_ACCOUNT;
		else if (!strcmp(tok, "NOFAIL"))
			gfp |= __GFP_NOFAIL;
		else if (!strcmp(tok, "NORETRY"))
			gfp |= __GFP_NORETRY;
		else if (!strcmp(tok, "NOWARN"))
			gfp |= __GFP_NOWARN;
		else if (!strcmp(tok, "ZERO"))
			gfp |= __GFP_ZERO;
		else if (!strcmp(tok, "NOACCOUNT"))
#ifdef __GFP_NOACCOUNT
			gfp |= __GFP_NOACCOUNT;
#else
			return -EOPNOTSUPP;
#endif
		else
			return -EINVAL;
	}
	if (!gfp)
		return -EINVAL;
	*out = gfp;
	kt_last_gfp = gfp;
	return 0;
}

static int hold(void *ptr, struct page *page, unsigned int order, bool cache)
{
	struct held_obj *h = kmalloc(sizeof(*h), KT_INTERNAL_GFP);

	if (!h)
		return -ENOMEM;
	h->ptr = ptr;
	h->page = page;
	h->order = order;
	h->from_cache = cache;
	list_add(&h->list, &kt_held);
	if (page)
		kt_pages += 1UL << order;
	else if (cache)
		kt_cache_objects++;
	else
		kt_objects++;
	return 0;
}

static void release(struct held_obj *h)
{
	if (h->page)
		__free_pages(h->page, h->order);
	else if (h->from_cache)
		kmem_cache_free(kt_cache, h->ptr);
	else
		kfree(h->ptr);
	list_del(&h->list);
	kfree(h);
}

static void free_all(bool cache_only)
{
	struct held_obj *h, *n;

	list_for_each_entry_safe(h, n, &kt_held, list) {
		if (cache_only && !h->from_cache)
			continue;
		release(h);
	}
	kt_cache_objects = 0;
	if (!cache_only)
		kt_objects = kt_pages = 0;
}

#define FREE_THREADS 8

struct free_part {
	struct list_head objs;
	struct completion done;
};

static int free_part_fn(void *arg)
{
	struct free_part *fp = arg;
	struct held_obj *h, *n;

	list_for_each_entry_safe(h, n, &fp->objs, list) {
		kmem_cache_free(kt_cache, h->ptr);
		kfree(h);
		cond_resched();
	}
	complete(&fp->done);
	return 0;
}

/*
 * Frees that race each other and the shrinks they cause: the last objects
 * of many dead copies, freed on every CPU at once.
 */
static int do_free_parallel(void)
{
	struct free_part *parts;
	struct held_obj *h, *n;
	struct task_struct *t;
	unsigned int cpu, nr = 0, i = 0;

	parts = kcalloc(FREE_THREADS, sizeof(*parts), KT_INTERNAL_GFP);
	if (!parts)
		return -ENOMEM;
	for (cpu = 0; cpu < FREE_THREADS; cpu++) {
		INIT_LIST_HEAD(&parts[cpu].objs);
		init_completion(&parts[cpu].done);
	}
	nr = min_t(unsigned int, num_online_cpus(), FREE_THREADS);
	list_for_each_entry_safe(h, n, &kt_held, list) {
		if (!h->from_cache)
			continue;
		list_move_tail(&h->list, &parts[i++ % nr].objs);
	}
	kt_cache_objects = 0;
	i = 0;
	for_each_online_cpu(cpu) {
		if (i == nr)
			break;
		t = kthread_create_on_cpu(free_part_fn, &parts[i], cpu, "kmem_test_free/%u");
		if (IS_ERR(t))
			free_part_fn(&parts[i]);
		else
			wake_up_process(t);
		i++;
	}
	for (i = 0; i < nr; i++)
		wait_for_completion(&parts[i].done);
	kfree(parts);
	return 0;
}

static int do_kmalloc(unsigned long count, size_t size, gfp_t gfp)
{
	unsigned long i;
	void *p;
	int ret;

	if (!size || size > KMALLOC_MAX_CACHE_SIZE)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		p = kmalloc(size, gfp);
		if (!p)
			return -ENOMEM;
		ret = hold(p, NULL, 0, false);
		if (ret) {
			kfree(p);
			return ret;
		}
	}
	return 0;
}

static int do_pages(unsigned long count, unsigned int order, gfp_t gfp)
{
	struct page *page;
	unsigned long i;
	int ret;

	if (order > MAX_ORDER - 1)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		page = alloc_pages(gfp, order);
		if (!page)
			return -ENOMEM;
		ret = hold(NULL, page, order, false);
		if (ret) {
			__free_pages(page, order);
			return ret;
		}
	}
	return 0;
}

static int do_cache_alloc(unsigned long count, gfp_t gfp)
{
	unsigned long i;
	void *p;
	int ret;

	if (!kt_cache)
		return -ENOENT;
	for (i = 0; i < count; i++) {
		p = kmem_cache_alloc(kt_cache, gfp);
		if (!p)
			return -ENOMEM;
		ret = hold(p, NULL, 0, true);
		if (ret) {
			kmem_cache_free(kt_cache, p);
			return ret;
		}
	}
	return 0;
}

/*
 * Where list_lru files an object is where memcg reclaim looks for it: under
 * the cgroup mem_cgroup_from_slab_obj() finds for it.  kmem_cache_alloc_lru()
 * makes the writer's cgroup's list, as d_alloc() does for dentries.
 */
static int do_lru_owner(unsigned long count, gfp_t gfp)
{
	struct mem_cgroup *memcg;
	struct list_head **objs;
	struct list_lru lru;
	unsigned long i, got;
	int nid, ret = 0;

	if (!kt_cache || kmem_cache_size(kt_cache) < sizeof(struct list_head))
		return -ENOENT;
	if (!count || count > 4096)
		return -EINVAL;
	objs = kcalloc(count, sizeof(*objs), KT_INTERNAL_GFP);
	if (!objs)
		return -ENOMEM;
	ret = list_lru_init_memcg(&lru, NULL);
	if (ret)
		goto out;
	for (got = 0; got < count; got++) {
		objs[got] = kmem_cache_alloc_lru(kt_cache, &lru, gfp);
		if (!objs[got]) {
			ret = -ENOMEM;
			break;
		}
		INIT_LIST_HEAD(objs[got]);
		list_lru_add(&lru, objs[got]);
	}
	memcg = get_mem_cgroup_from_mm(current->mm);
	kt_lru_owned = 0;
	for_each_online_node(nid)
		kt_lru_owned += list_lru_count_one(&lru, nid, memcg);
	mem_cgroup_put(memcg);
	for (i = 0; i < got; i++) {
		list_lru_del(&lru, objs[i]);
		kmem_cache_free(kt_cache, objs[i]);
	}
	list_lru_destroy(&lru);
out:
	kfree(objs);
	return ret;
}

/* Atomic allocations from a timer: softirq context, no task to charge. */
struct atomic_req {
	struct timer_list timer;
	struct completion done;
	unsigned long count;
	size_t size;
	void **ptrs;
	unsigned long got;
	/* atomic_remote: charge the writer's cgroup from the timer */
	struct mem_cgroup *memcg;
};

static void atomic_fn(struct timer_list *t)
{
	struct atomic_req *r = from_timer(r, t, timer);
	gfp_t gfp = GFP_ATOMIC | __GFP_NOWARN;
	struct mem_cgroup *old = NULL;

	/* Remote charging from interrupt context, as 6.1 allows it. */
	if (r->memcg) {
		old = set_active_memcg(r->memcg);
		gfp |= __GFP_ACCOUNT;
	}
	for (r->got = 0; r->got < r->count; r->got++) {
		r->ptrs[r->got] = kmalloc(r->size, gfp);
		if (!r->ptrs[r->got])
			break;
	}
	if (r->memcg)
		set_active_memcg(old);
	complete(&r->done);
}

static int do_atomic(unsigned long count, size_t size, bool remote)
{
	struct atomic_req r = { .count = count, .size = size };
	unsigned long i;
	int ret = 0;

	if (!size || size > KMALLOC_MAX_CACHE_SIZE || count > 4096)
		return -EINVAL;
	r.ptrs = kcalloc(count, sizeof(void *), KT_INTERNAL_GFP);
	if (!r.ptrs)
		return -ENOMEM;
	if (remote)
		r.memcg = get_mem_cgroup_from_mm(current->mm);
	init_completion(&r.done);
	timer_setup_on_stack(&r.timer, atomic_fn, 0);
	mod_timer(&r.timer, jiffies + 1);
	wait_for_completion(&r.done);
	del_timer_sync(&r.timer);
	destroy_timer_on_stack(&r.timer);
	mem_cgroup_put(r.memcg);
	for (i = 0; i < r.got; i++) {
		if (!ret)
			ret = hold(r.ptrs[i], NULL, 0, false);
		if (ret)
			kfree(r.ptrs[i]);
	}
	if (!ret && r.got < count)
		ret = -ENOMEM;
	kfree(r.ptrs);
	return ret;
}

static void *bench_alloc(size_t size, gfp_t gfp)
{
	return size ? kmalloc(size, gfp) : kmem_cache_alloc(kt_cache, gfp);
}

static void bench_free(size_t size, void *p)
{
	if (size)
		kfree(p);
	else
		kmem_cache_free(kt_cache, p);
}

/* Alloc/free pairs in the writer's context; no bookkeeping inside the loop. */
static int do_bench(bool batch, unsigned long count, size_t size, gfp_t gfp)
{
	void **ptrs = NULL;
	unsigned long i, j, n;
	u64 start;
	int ret = 0;

	if (size > KMALLOC_MAX_CACHE_SIZE || (!size && !kt_cache))
		return -EINVAL;
	if (batch) {
		ptrs = kcalloc(BENCH_BATCH, sizeof(void *), KT_INTERNAL_GFP);
		if (!ptrs)
			return -ENOMEM;
	}
	start = ktime_get_ns();
	if (!batch) {
		for (i = 0; i < count; i++) {
			void *p = bench_alloc(size, gfp);

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			bench_free(size, p);
			if (!(i & 4095))
				cond_resched();
		}
	} else {
		for (i = 0; i < count && !ret; i += n) {
			n = min_t(unsigned long, BENCH_BATCH, count - i);
			for (j = 0; j < n; j++) {
				ptrs[j] = bench_alloc(size, gfp);
				if (!ptrs[j]) {
					ret = -ENOMEM;
					n = j;
					break;
				}
			}
			for (j = 0; j < n; j++)
				bench_free(size, ptrs[j]);
			cond_resched();
		}
	}
	kt_bench_ns = ktime_get_ns() - start;
	kfree(ptrs);
	return ret;
}

static int run_cmd(char *buf)
{
	char *argv[5] = { NULL };
	unsigned long count, a;
	gfp_t gfp;
	int argc = 0, ret;
	char *tok;

	while (argc < 5 && (tok = strsep(&buf, " \t\n")) != NULL) {
		if (*tok)
			argv[argc++] = tok;
	}
	if (!argc)
		return -EINVAL;

	if (!strcmp(argv[0], "free") && argc == 1) {
		free_all(false);
		mem_cgroup_put(kt_remote);
		kt_remote = NULL;
		return 0;
	}
	if (!strcmp(argv[0], "remote_hold") && argc == 1) {
		mem_cgroup_put(kt_remote);
		kt_remote = get_mem_cgroup_from_mm(current->mm);
		return kt_remote ? 0 : -ENOENT;
	}
	if (!strcmp(argv[0], "free_parallel") && argc == 1)
		return kt_cache ? do_free_parallel() : -ENOENT;
	if (!strcmp(argv[0], "cache_destroy") && argc == 1) {
		if (!kt_cache)
			return -ENOENT;
		free_all(true);
		kmem_cache_destroy(kt_cache);
		kt_cache = NULL;
		return 0;
	}
	if (!strcmp(argv[0], "cache_create") && argc == 3) {
		slab_flags_t cflags = 0;

		if (kt_cache)
			return -EEXIST;
		if (kstrtoul(argv[1], 0, &a) || !a || a > PAGE_SIZE)
			return -EINVAL;
		if (!strcmp(argv[2], "ACCOUNT"))
			cflags = SLAB_ACCOUNT;
		else if (strcmp(argv[2], "0"))
			return -EINVAL;
		/* The constructor keeps the cache from merging with another. */
		kt_cache = kmem_cache_create("kmem_test_cache", a, 0, cflags, kt_ctor);
		return kt_cache ? 0 : -ENOMEM;
	}
	if (!strcmp(argv[0], "merge_destroy") && argc == 1) {
		merge_destroy();
		return 0;
	}
	if (!strcmp(argv[0], "merge_create") && argc == 2)
		return kstrtoul(argv[1], 0, &a) ? -EINVAL : merge_create(a);
	if (!strcmp(argv[0], "merge_check") && argc == 2)
		return kstrtoul(argv[1], 0, &a) ? -EINVAL : merge_check(a);
	if (!strcmp(argv[0], "bench") && argc == 5) {
		if (strcmp(argv[1], "hot") && strcmp(argv[1], "batch"))
			return -EINVAL;
		if (kstrtoul(argv[2], 0, &count) || kstrtoul(argv[3], 0, &a))
			return -EINVAL;
		ret = parse_flags(argv[4], &gfp);
		return ret ? ret : do_bench(!strcmp(argv[1], "batch"), count, a, gfp);
	}
	if ((!strcmp(argv[0], "atomic") || !strcmp(argv[0], "atomic_remote")) && argc == 3) {
		if (kstrtoul(argv[1], 0, &count) || kstrtoul(argv[2], 0, &a))
			return -EINVAL;
		return do_atomic(count, a, !strcmp(argv[0], "atomic_remote"));
	}

	if (argc < 3 || kstrtoul(argv[1], 0, &count) || count > MAX_COUNT)
		return -EINVAL;
	if (!strcmp(argv[0], "cache_alloc") && argc == 3) {
		ret = parse_flags(argv[2], &gfp);
		return ret ? ret : do_cache_alloc(count, gfp);
	}
	if (!strcmp(argv[0], "lru_owner") && argc == 3) {
		ret = parse_flags(argv[2], &gfp);
		return ret ? ret : do_lru_owner(count, gfp);
	}
	if (argc != 4 || kstrtoul(argv[2], 0, &a))
		return -EINVAL;
	ret = parse_flags(argv[3], &gfp);
	if (ret)
		return ret;
	if (!strcmp(argv[0], "kmalloc"))
		return do_kmalloc(count, a, gfp);
	if (!strcmp(argv[0], "remote_kmalloc")) {
		struct mem_cgroup *old;

		if (!kt_remote)
			return -ENOENT;
		old = set_active_memcg(kt_remote);
		ret = do_kmalloc(count, a, gfp);
		set_active_memcg(old);
		return ret;
	}
	if (!strcmp(argv[0], "dying")) {
		send_sig(SIGKILL, current, 1);
		return do_kmalloc(count, a, gfp);
	}
	if (!strcmp(argv[0], "pages"))
		return do_pages(count, a, gfp);
	return -EINVAL;
}

static ssize_t ctl_write(struct file *file, const char __user *ubuf,
			 size_t len, loff_t *ppos)
{
	char buf[CTL_MAX];
	int ret;

	if (len >= CTL_MAX)
		return -E2BIG;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&kt_lock);
	ret = run_cmd(buf);
	mutex_unlock(&kt_lock);
	return ret ? ret : len;
}

static ssize_t ctl_read(struct file *file, char __user *ubuf, size_t len,
			loff_t *ppos)
{
	char buf[448];
	int n;

	mutex_lock(&kt_lock);
	n = scnprintf(buf, sizeof(buf),
		      "objects %lu\npages %lu\ncache_objects %lu\ncache %s\nnoaccount %d\nlast_gfp %pGg\nbench_ns %llu\nlru_owned %lu\n",
		      kt_objects, kt_pages, kt_cache_objects,
		      kt_cache ? "yes" : "no", KT_HAS_NOACCOUNT, &kt_last_gfp,
		      kt_bench_ns, kt_lru_owned);
	mutex_unlock(&kt_lock);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.write = ctl_write,
	.read = ctl_read,
	.llseek = default_llseek,
};

static int __init kmem_test_init(void)
{
	kt_dir = debugfs_create_dir("kmem_test", NULL);
	debugfs_create_file("ctl", 0600, kt_dir, NULL, &ctl_fops);
	return 0;
}

static void __exit kmem_test_exit(void)
{
	debugfs_remove_recursive(kt_dir);
	mutex_lock(&kt_lock);
	free_all(false);
	mem_cgroup_put(kt_remote);
	kt_remote = NULL;
	kmem_cache_destroy(kt_cache);
	kt_cache = NULL;
	merge_destroy();
	mutex_unlock(&kt_lock);
}

module_init(kmem_test_init);
module_exit(kmem_test_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("memcg kmem accounting test helper");
