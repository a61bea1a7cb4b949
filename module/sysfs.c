// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/mm/mmtune/: the module's root directory. Features add their
 * own subdirectories from their init callbacks. Every entry is documented
 * in sysfs-docs/ and checked against the live tree by the VM tests.
 */
#include <linux/mm.h>
#include <linux/sysfs.h>

#include "mmtune.h"
#include "version.h"

struct kobject *mmtune_kobj;

ssize_t mmtune_counter_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct mmtune_counter_attr *ca =
		container_of(attr, struct mmtune_counter_attr, kattr);

	return sysfs_emit(buf, "%ld\n", atomic_long_read(ca->counter));
}

ssize_t mmtune_percpu_counter_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	struct mmtune_percpu_counter_attr *ca =
		container_of(attr, struct mmtune_percpu_counter_attr, kattr);
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*per_cpu_ptr(ca->counter, cpu));
	return sysfs_emit(buf, "%lu\n", sum);
}

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

/* One line per kernel feature group: "<name> on|off|unavailable". */
static ssize_t features_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	int len = 0;
	int f;

	for (f = 0; f < NR_MMTUNE_FEATURES; f++) {
		const char *state = "unavailable";

		if (mmtune_features[f].init)
			state = mmtune_feature_is_on(f) ? "on" : "off";
		len += sysfs_emit_at(buf, len, "%s %s\n",
				     mmtune_feature_name(f), state);
	}
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

static void mmtune_features_exit(int upto)
{
	while (--upto >= 0)
		if (mmtune_features[upto].exit)
			mmtune_features[upto].exit();
}

int mmtune_sysfs_init(void)
{
	int ret, f;

	mmtune_kobj = kobject_create_and_add("mmtune", mm_kobj);
	if (!mmtune_kobj)
		return -ENOMEM;

	ret = sysfs_create_group(mmtune_kobj, &mmtune_root_group);
	if (ret)
		goto put;

	for (f = 0; f < NR_MMTUNE_FEATURES; f++) {
		if (!mmtune_features[f].init)
			continue;
		ret = mmtune_features[f].init(mmtune_kobj);
		if (ret) {
			mmtune_features_exit(f);
			goto put;
		}
	}
	return 0;
put:
	kobject_put(mmtune_kobj);
	mmtune_kobj = NULL;
	return ret;
}

void mmtune_sysfs_exit(void)
{
	mmtune_features_exit(NR_MMTUNE_FEATURES);
	kobject_put(mmtune_kobj);
	mmtune_kobj = NULL;
}
