// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/mm/mmtune/: the root files, and one directory per feature made
 * from its descriptor: "enabled", then its knobs and counters. Every entry
 * is listed in sysfs-docs/knobs.tsv and documented in sysfs-docs/; the VM
 * tests walk both against the live tree.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mmtune.h"
#include "version.h"

/* Knob writes and feature switches; see mmtune.h. */
DEFINE_MUTEX(mmtune_knob_lock);

static struct kobject *mmtune_kobj;
/* Per feature of mmtune_impl[], its directory and its counter files. */
static struct kobject *feature_kobj[NR_MMTUNE_FEATURES];
static struct counter_file *feature_counters[NR_MMTUNE_FEATURES];

unsigned long mmtune_counter_sum(const void __percpu *base, size_t offset)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*(const unsigned long *)
				 (per_cpu_ptr(base, cpu) + offset));
	return sum;
}

/* The file of one counter of a feature. */
struct counter_file {
	struct kobj_attribute kattr;
	const void __percpu *base;
	size_t offset;
};

static ssize_t counter_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct counter_file *cf = container_of(attr, struct counter_file, kattr);

	return sysfs_emit(buf, "%lu\n",
			  mmtune_counter_sum(cf->base, cf->offset));
}

ssize_t mmtune_knob_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct mmtune_knob *k = container_of(attr, struct mmtune_knob, kattr);
	u32 val = READ_ONCE(*k->val);
	int len = 0, i;

	if (k->type != MMTUNE_KNOB_CHOICE)
		return sysfs_emit(buf, "%u\n", val);
	for (i = 0; k->choices[i]; i++)
		len += sysfs_emit_at(buf, len, i == val ? "%s[%s]" : "%s%s",
				     i ? " " : "", k->choices[i]);
	return len + sysfs_emit_at(buf, len, "\n");
}

/*
 * Strict: a decimal in range, one trailing newline allowed. A bool is a u32
 * in [0, 1], so "yes", "on" or "1x" are refused, unlike kstrtobool().
 */
static int knob_parse(const struct mmtune_knob *k, const char *buf, u32 *val)
{
	int ret;

	switch (k->type) {
	case MMTUNE_KNOB_BOOL:
	case MMTUNE_KNOB_U32:
		ret = kstrtou32(buf, 10, val);
		if (ret || *val < k->min || *val > k->max)
			return -EINVAL;
		return 0;
	case MMTUNE_KNOB_CHOICE:
		ret = __sysfs_match_string(k->choices, -1, buf);
		*val = ret;
		return ret < 0 ? -EINVAL : 0;
	}
	return -EINVAL;
}

ssize_t mmtune_knob_store(struct kobject *kobj, struct kobj_attribute *attr,
			  const char *buf, size_t count)
{
	struct mmtune_knob *k = container_of(attr, struct mmtune_knob, kattr);
	u32 val;
	int ret = knob_parse(k, buf, &val);

	if (ret)
		return ret;
	mutex_lock(&mmtune_knob_lock);
	/* A set() must not reach the kernel once unloading restored it. */
	if (mmtune_is_unloading())
		ret = -ENODEV;
	else if (k->set)
		ret = k->set(val);
	if (!ret)
		WRITE_ONCE(*k->val, val);
	mutex_unlock(&mmtune_knob_lock);
	return ret ? ret : count;
}

static const struct mmtune_desc *feature_of(struct kobject *kobj)
{
	unsigned int i;

	for (i = 0; i < mmtune_nr_impl; i++)
		if (feature_kobj[i] == kobj)
			return mmtune_impl[i];
	return NULL;
}

/* The one switch of every feature: its hooks on (1) or off (0). */
static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  mmtune_feature_is_on(feature_of(kobj)->id));
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	u32 on;
	int ret;

	if (kstrtou32(buf, 10, &on) || on > 1)
		return -EINVAL;
	mutex_lock(&mmtune_knob_lock);
	ret = mmtune_feature_switch(feature_of(kobj), on);
	mutex_unlock(&mmtune_knob_lock);
	return ret ? ret : count;
}
static struct kobj_attribute enabled_attr = __ATTR_RW(enabled);

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", MMTUNE_VERSION);
}
static struct kobj_attribute version_attr = __ATTR_RO(version);

static ssize_t abi_version_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", MMTUNE_ABI_VERSION);
}
static struct kobj_attribute abi_version_attr = __ATTR_RO(abi_version);

/*
 * One line per kernel feature group: "<name> on|off|unavailable|not-offered".
 * not-offered: this kernel line has no hooks for the group (its hook table
 * has no rows of it); unavailable: it has, but the module was built
 * without the feature (a kernel option it needs is off).
 */
static ssize_t features_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	bool have[NR_MMTUNE_FEATURES] = {};
	unsigned int i;
	int len = 0, f;

	for (i = 0; i < mmtune_nr_impl; i++)
		have[mmtune_impl[i]->id] = true;
	for (f = 0; f < NR_MMTUNE_FEATURES; f++)
		len += sysfs_emit_at(buf, len, "%s %s\n",
				     mmtune_feature_name(f),
				     have[f] ? (mmtune_feature_is_on(f) ? "on" : "off") :
				     mmtune_feature_offered(f) ? "unavailable" :
				     "not-offered");
	return len;
}
static struct kobj_attribute features_attr = __ATTR_RO(features);

static struct attribute *mmtune_root_attrs[] = {
	&version_attr.attr,
	&abi_version_attr.attr,
	&features_attr.attr,
	NULL,
};

static const struct attribute_group mmtune_root_group = {
	.attrs = mmtune_root_attrs,
};

/*
 * Out of sysfs now, not when the last reference goes: with delayed
 * kobject release (DEBUG_KOBJECT_RELEASE) the files would otherwise
 * outlive the module's code that serves them.
 */
static void mmtune_kobject_remove(struct kobject *kobj)
{
	kobject_del(kobj);
	kobject_put(kobj);
}

/* Undo features [0, upto): directory first, so no knob write is left. */
static void features_exit(unsigned int upto)
{
	while (upto--) {
		const struct mmtune_desc *f = mmtune_impl[upto];

		mmtune_kobject_remove(feature_kobj[upto]);
		feature_kobj[upto] = NULL;
		kfree(feature_counters[upto]);
		feature_counters[upto] = NULL;
		if (f->exit)
			f->exit();
	}
}

/* One read-only file per counter name. */
static int counters_init(unsigned int i, struct kobject *kobj)
{
	const struct mmtune_desc *f = mmtune_impl[i];
	unsigned int n, nr = 0;
	int ret;

	while (f->counters && f->counters[nr].name)
		nr++;
	if (!nr)
		return 0;
	feature_counters[i] = kcalloc(nr, sizeof(struct counter_file),
				      GFP_KERNEL);
	if (!feature_counters[i])
		return -ENOMEM;
	for (n = 0; n < nr; n++) {
		struct counter_file *cf = &feature_counters[i][n];

		sysfs_attr_init(&cf->kattr.attr);
		cf->kattr.attr.name = f->counters[n].name;
		cf->kattr.attr.mode = 0444;
		cf->kattr.show = counter_show;
		cf->base = f->counter_base;
		cf->offset = f->counters[n].offset;
		ret = sysfs_create_file(kobj, &cf->kattr.attr);
		if (ret)
			return ret;
	}
	return 0;
}

/* A per-size knob only where this kernel line has that size (compat.h). */
static umode_t knob_visible(struct kobject *kobj, struct attribute *attr,
			    int n)
{
	struct kobj_attribute *ka = container_of(attr, struct kobj_attribute,
						 attr);
	const struct mmtune_knob *k;

	if (ka->show != mmtune_knob_show)
		return attr->mode;
	k = container_of(ka, struct mmtune_knob, kattr);
	if (k->order >= 0 && !(MMTUNE_SIZE_ORDERS & BIT(k->order)))
		return 0;
	return attr->mode;
}

static int feature_init(unsigned int i)
{
	const struct mmtune_desc *f = mmtune_impl[i];
	struct attribute_group group = {
		.attrs = f->attrs, .bin_attrs = f->bin_attrs,
		.is_visible = knob_visible,
	};
	struct kobject *kobj;
	int ret;

	ret = f->init ? f->init() : 0;
	if (ret)
		return ret;
	ret = -ENOMEM;
	kobj = kobject_create_and_add(f->name, mmtune_kobj);
	if (!kobj)
		goto exit;
	/* Set before the files appear: enabled_show() looks it up. */
	feature_kobj[i] = kobj;
	ret = sysfs_create_file(kobj, &enabled_attr.attr);
	if (!ret && f->attrs)
		ret = sysfs_create_group(kobj, &group);
	if (!ret)
		ret = counters_init(i, kobj);
	if (!ret)
		return 0;
	mmtune_kobject_remove(kobj);
	feature_kobj[i] = NULL;
	kfree(feature_counters[i]);
	feature_counters[i] = NULL;
exit:
	if (f->exit)
		f->exit();
	return ret;
}

int mmtune_sysfs_init(void)
{
	unsigned int i;
	int ret;

	mmtune_kobj = kobject_create_and_add("mmtune", mm_kobj);
	if (!mmtune_kobj)
		return -ENOMEM;

	ret = sysfs_create_group(mmtune_kobj, &mmtune_root_group);
	if (ret)
		goto put;

	for (i = 0; i < mmtune_nr_impl; i++) {
		ret = feature_init(i);
		if (ret) {
			features_exit(i);
			goto put;
		}
	}
	return 0;
put:
	mmtune_kobject_remove(mmtune_kobj);
	mmtune_kobj = NULL;
	return ret;
}

void mmtune_sysfs_exit(void)
{
	features_exit(mmtune_nr_impl);
	mmtune_kobject_remove(mmtune_kobj);
	mmtune_kobj = NULL;
}
