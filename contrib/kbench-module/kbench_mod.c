// SPDX-License-Identifier: GPL-2.0
/*
 * kbench_mod: times fib_lookup(), the kernel's IPv4 route lookup, call by call, for vernier's
 * `sysfs` benchmark. After "(Micro)benchmarking Linux kernel functions" (Vincent Bernat): a
 * kobject /sys/kernel/kbench with writable parameters and a read-only `run` attribute; reading
 * `run` performs the benchmark and returns its figures as key=value pairs.
 *
 *   loop_count    calls timed per reading of `run` (default 100000)
 *   warmup_count  untimed calls before them (default 1000)
 *   dst_net       the IPv4 network the destinations are drawn from (default 198.18.0.0)
 *   dst_bits      its prefix length (default 16)
 *   seed          seed of the destinations' order (default 1)
 *
 * Output of `run`, in cycles of get_cycles():
 *   min=.. max=.. count=.. p50=.. p90=.. p95=.. p99=.. mad=.. overhead=..
 * or, when a lookup fails, err=<errno> msg="..." (which vernier reports as the run's error).
 *
 * The write-up's traps: the destinations are drawn by a linear congruential generator over the
 * whole network, so consecutive lookups do not walk the same path of the route trie ("too
 * regular dataset"); every result is folded into a value the output depends on ("dead code");
 * warm-up calls come first; percentiles and the MAD, not the mean, summarize the calls, so that
 * preempted calls do not move them ("preemption"); `overhead` is the time of two consecutive
 * get_cycles() with nothing between ("large overhead").
 */
#define pr_fmt(fmt) "kbench: " fmt

#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/sysfs.h>
#include <linux/timex.h>
#include <net/ip_fib.h>
#include <net/net_namespace.h>

static unsigned long loop_count = 100000;
static unsigned long warmup_count = 1000;
static __be32 dst_net = __constant_cpu_to_be32(0xc6120000); /* 198.18.0.0, RFC 2544's benchmark range */
static unsigned int dst_bits = 16;
static unsigned long seed = 1;

/* Guards the parameters against a write while `run` reads them. */
static DEFINE_MUTEX(kb_lock);

static int compare_cycles(const void *a, const void *b)
{
	cycles_t x = *(const cycles_t *)a, y = *(const cycles_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank p-th percentile (p in 1..100) of `sorted`, as vernier reads histograms. */
static cycles_t percentile(unsigned int p, const cycles_t *sorted, unsigned long count)
{
	unsigned long rank = DIV_ROUND_UP(p * count, 100);

	return sorted[clamp(rank, 1UL, count) - 1];
}

/* The median absolute deviation from `median`; sorts `scratch`, a copy of the samples. */
static cycles_t mad(cycles_t *scratch, cycles_t median, unsigned long count)
{
	unsigned long i;

	for (i = 0; i < count; i++)
		scratch[i] = scratch[i] > median ? scratch[i] - median : median - scratch[i];
	sort(scratch, count, sizeof(*scratch), compare_cycles, NULL);
	return percentile(50, scratch, count);
}

/* Numerical Recipes' LCG: reproducible, and it visits the network in no regular order. */
static u32 next_random(u32 *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state;
}

static int lookup(__be32 daddr)
{
	struct fib_result res;
	struct flowi4 fl4;
	int err;

	memset(&fl4, 0, sizeof(fl4));
	fl4.daddr = daddr;
	rcu_read_lock();
	err = fib_lookup(&init_net, &fl4, &res, FIB_LOOKUP_NOREF);
	rcu_read_unlock();
	return err;
}

static ssize_t run_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	unsigned long count, warmup, i;
	unsigned int bits;
	u32 net, host_mask, state;
	cycles_t *results, *scratch, t1, t2, overhead = ~(cycles_t)0;
	cycles_t p50;
	int err = 0;
	ssize_t len;

	mutex_lock(&kb_lock);
	count = loop_count;
	warmup = warmup_count;
	bits = dst_bits;
	net = be32_to_cpu(dst_net);
	state = (u32)seed;
	mutex_unlock(&kb_lock);

	host_mask = bits >= 32 ? 0 : (u32)(~0u >> bits);
	results = kvmalloc_array(count, sizeof(*results), GFP_KERNEL);
	scratch = kvmalloc_array(count, sizeof(*scratch), GFP_KERNEL);
	if (!results || !scratch) {
		kvfree(results);
		kvfree(scratch);
		return sysfs_emit(buf, "err=%d msg=\"no memory for %lu results\"\n", -ENOMEM, count);
	}

	for (i = 0; i < warmup; i++)
		err |= lookup(cpu_to_be32(net | (next_random(&state) & host_mask)));
	for (i = 0; i < 1000; i++) {
		t1 = get_cycles();
		t2 = get_cycles();
		overhead = min(overhead, t2 - t1);
	}
	for (i = 0; i < count; i++) {
		__be32 daddr = cpu_to_be32(net | (next_random(&state) & host_mask));

		t1 = get_cycles();
		err |= lookup(daddr);
		t2 = get_cycles();
		results[i] = t2 - t1;
	}
	if (err) {
		len = sysfs_emit(buf, "err=%d msg=\"lookup error (is there a route?)\"\n", err);
		goto out;
	}

	sort(results, count, sizeof(*results), compare_cycles, NULL);
	memcpy(scratch, results, count * sizeof(*results));
	p50 = percentile(50, results, count);
	len = sysfs_emit(buf,
			 "min=%llu max=%llu count=%lu p50=%llu p90=%llu p95=%llu p99=%llu mad=%llu overhead=%llu\n",
			 (unsigned long long)results[0], (unsigned long long)results[count - 1], count,
			 (unsigned long long)p50,
			 (unsigned long long)percentile(90, results, count),
			 (unsigned long long)percentile(95, results, count),
			 (unsigned long long)percentile(99, results, count),
			 (unsigned long long)mad(scratch, p50, count),
			 (unsigned long long)overhead);
out:
	kvfree(results);
	kvfree(scratch);
	return len;
}

/* A show and a store of an unsigned long parameter in [min, max]. */
#define KB_ULONG_ATTR(name, min, max)                                                         \
	static ssize_t name##_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf) \
	{                                                                                     \
		unsigned long v;                                                              \
		mutex_lock(&kb_lock);                                                         \
		v = name;                                                                     \
		mutex_unlock(&kb_lock);                                                       \
		return sysfs_emit(buf, "%lu\n", v);                                           \
	}                                                                                     \
	static ssize_t name##_store(struct kobject *kobj, struct kobj_attribute *attr,        \
				    const char *buf, size_t n)                                \
	{                                                                                     \
		unsigned long v;                                                              \
		int err = kstrtoul(buf, 0, &v);                                               \
		if (err < 0)                                                                  \
			return err;                                                           \
		if (v < (min) || v > (max))                                                   \
			return -EINVAL;                                                       \
		mutex_lock(&kb_lock);                                                         \
		name = v;                                                                     \
		mutex_unlock(&kb_lock);                                                       \
		return n;                                                                     \
	}

KB_ULONG_ATTR(loop_count, 1, 100000000)
KB_ULONG_ATTR(warmup_count, 0, 100000000)
KB_ULONG_ATTR(seed, 0, ULONG_MAX)

static ssize_t dst_bits_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	unsigned int v;

	mutex_lock(&kb_lock);
	v = dst_bits;
	mutex_unlock(&kb_lock);
	return sysfs_emit(buf, "%u\n", v);
}

static ssize_t dst_bits_store(struct kobject *kobj, struct kobj_attribute *attr,
			      const char *buf, size_t n)
{
	unsigned int v;
	int err = kstrtouint(buf, 0, &v);

	if (err < 0)
		return err;
	if (v > 32)
		return -EINVAL;
	mutex_lock(&kb_lock);
	dst_bits = v;
	mutex_unlock(&kb_lock);
	return n;
}

static ssize_t dst_net_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	__be32 v;

	mutex_lock(&kb_lock);
	v = dst_net;
	mutex_unlock(&kb_lock);
	return sysfs_emit(buf, "%pI4\n", &v);
}

static ssize_t dst_net_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t n)
{
	u8 addr[4];

	if (!in4_pton(buf, n, addr, '\n', NULL) && !in4_pton(buf, n, addr, -1, NULL))
		return -EINVAL;
	mutex_lock(&kb_lock);
	memcpy(&dst_net, addr, sizeof(dst_net));
	mutex_unlock(&kb_lock);
	return n;
}

static struct kobj_attribute loop_count_attr = __ATTR_RW(loop_count);
static struct kobj_attribute warmup_count_attr = __ATTR_RW(warmup_count);
static struct kobj_attribute seed_attr = __ATTR_RW(seed);
static struct kobj_attribute dst_bits_attr = __ATTR_RW(dst_bits);
static struct kobj_attribute dst_net_attr = __ATTR_RW(dst_net);
static struct kobj_attribute run_attr = __ATTR_RO(run);

static struct attribute *kb_attrs[] = {
	&loop_count_attr.attr, &warmup_count_attr.attr, &seed_attr.attr,
	&dst_bits_attr.attr,   &dst_net_attr.attr,      &run_attr.attr,
	NULL,
};

static const struct attribute_group kb_group = {
	.attrs = kb_attrs,
};

static struct kobject *kb_kobj;

static int __init kbench_init(void)
{
	int rc;

	kb_kobj = kobject_create_and_add("kbench", kernel_kobj);
	if (!kb_kobj)
		return -ENOMEM;
	rc = sysfs_create_group(kb_kobj, &kb_group);
	if (rc)
		kobject_put(kb_kobj);
	return rc;
}

static void __exit kbench_exit(void)
{
	kobject_put(kb_kobj);
}

module_init(kbench_init);
module_exit(kbench_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-call timing of fib_lookup() for vernier's sysfs benchmark");
