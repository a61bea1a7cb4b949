// SPDX-License-Identifier: GPL-2.0
/*
 * mmtune: swap and page allocation tuning behind the mmtune hook points of
 * a patched kernel (CONFIG_MMTUNE_HOOKS).
 *
 * This file lists the features, builds the one struct mmtune_ops the hook
 * core takes from their descriptors, registers it, and switches features
 * on and off.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>

#include "mmtune.h"
#include "version.h"

/*
 * The features: adding one is a line here and one in Kbuild. Kbuild
 * defines MMTUNE_BUILD_<GROUP> for each feature it builds: those whose
 * group has hooks in this kernel's hook table and whose kernel options are
 * on.
 */
const struct mmtune_desc *const mmtune_impl[] = {
#ifdef MMTUNE_BUILD_SWAP_SLOTS
	&swap_slots_feature,
#endif
#ifdef MMTUNE_BUILD_THP_SWAP
	&thp_swap_feature,
#endif
#ifdef MMTUNE_BUILD_SPLIT_ZERO
	&split_zero_feature,
#endif
#ifdef MMTUNE_BUILD_ZSWAP_LARGE
	&zswap_large_feature,
#endif
#ifdef MMTUNE_BUILD_PCP_HIGH
	&pcp_high_feature,
#endif
#ifdef MMTUNE_BUILD_CGROUP_POLICY
	&cgroup_policy_feature,
#endif
};

const unsigned int mmtune_nr_impl = ARRAY_SIZE(mmtune_impl);

/* Written once, before registration; the hook core reads it after. */
struct mmtune_ops mmtune_ops = {
	.abi_version	= MMTUNE_ABI_VERSION,
	.ops_size	= sizeof(struct mmtune_ops),
	.owner		= THIS_MODULE,
};

/* Protected by mmtune_knob_lock. */
static unsigned long mmtune_active;
static bool mmtune_unloading;

/*
 * Set for good once unloading began: from then on no knob write or switch
 * may reach the kernel, which is about to restore its stock state.
 */
bool mmtune_is_unloading(void)
{
	lockdep_assert_held(&mmtune_knob_lock);
	return mmtune_unloading;
}

bool mmtune_feature_is_on(enum mmtune_feature id)
{
	return READ_ONCE(mmtune_active) & BIT(id);
}

/*
 * Turn one feature's hooks on or off: enable() before they go on,
 * disable() once they are off and no CPU is inside one any more.
 */
int mmtune_feature_switch(const struct mmtune_desc *f, bool on)
{
	unsigned long next;
	int ret;

	if (mmtune_is_unloading())
		return -ENODEV;
	if (on == mmtune_feature_is_on(f->id))
		return 0;
	if (on && f->enable) {
		ret = f->enable();
		if (ret)
			return ret;
	}
	next = on ? mmtune_active | BIT(f->id) : mmtune_active & ~BIT(f->id);
	ret = mmtune_set_features(&mmtune_ops, next);
	if (ret) {
		if (on && f->disable)
			f->disable();
		return ret;
	}
	WRITE_ONCE(mmtune_active, next);
	if (!on && f->disable)
		f->disable();
	return 0;
}

/* Every hook of the kernel's table: its group and its place in the ops. */
static const struct {
	enum mmtune_feature id;
	size_t offset;
} mmtune_hook_slots[] = {
#define MMTUNE_HOOK(FEATURE, CLASS, hook, proto, args)			\
	{ MMTUNE_##FEATURE, offsetof(struct mmtune_ops, hook) },
#define MMTUNE_HOOK_VOID MMTUNE_HOOK
#define MMTUNE_FEATURE(FEATURE, name, on, off)
#include <linux/mmtune_hook_defs.h>
#undef MMTUNE_HOOK
#undef MMTUNE_HOOK_VOID
#undef MMTUNE_FEATURE
};

bool mmtune_feature_offered(enum mmtune_feature id)
{
	unsigned int h;

	for (h = 0; h < ARRAY_SIZE(mmtune_hook_slots); h++)
		if (mmtune_hook_slots[h].id == id)
			return true;
	return false;
}

/*
 * Copy each feature's hooks into the one ops, only those of its own group,
 * and check that the feature carries its group's name.
 */
static int mmtune_build_ops(void)
{
	unsigned int i, h;

	for (i = 0; i < mmtune_nr_impl; i++) {
		const struct mmtune_desc *f = mmtune_impl[i];

		if (strcmp(f->name, mmtune_feature_name(f->id))) {
			pr_err("feature %s is group %s in the kernel\n",
			       f->name, mmtune_feature_name(f->id));
			return -EINVAL;
		}
		for (h = 0; f->hooks && h < ARRAY_SIZE(mmtune_hook_slots); h++) {
			size_t off = mmtune_hook_slots[h].offset;

			if (mmtune_hook_slots[h].id == f->id)
				*(void **)((void *)&mmtune_ops + off) =
					*(void * const *)((const void *)f->hooks + off);
		}
	}
	return 0;
}

static int __init mmtune_init(void)
{
	int ret;

	ret = mmtune_build_ops();
	if (ret)
		return ret;
	/* The hook core logs why it refuses (ABI mismatch, already taken). */
	ret = mmtune_register(&mmtune_ops);
	if (ret)
		return ret;

	ret = mmtune_sysfs_init();
	if (ret) {
		mmtune_unregister(&mmtune_ops);
		return ret;
	}
	pr_info("version %s loaded (hook ABI %u)\n", MMTUNE_VERSION,
		MMTUNE_ABI_VERSION);
	return 0;
}

static void __exit mmtune_exit(void)
{
	unsigned int i;

	mutex_lock(&mmtune_knob_lock);
	mmtune_unloading = true;
	mutex_unlock(&mmtune_knob_lock);

	/* Turns every hook off and waits for callers still inside one. */
	mmtune_unregister(&mmtune_ops);
	/* The features that were on undo what their hooks left behind. */
	for (i = 0; i < mmtune_nr_impl; i++)
		if (mmtune_feature_is_on(mmtune_impl[i]->id) &&
		    mmtune_impl[i]->disable)
			mmtune_impl[i]->disable();
	WRITE_ONCE(mmtune_active, 0);
	mmtune_sysfs_exit();
	pr_info("unloaded\n");
}

module_init(mmtune_init);
module_exit(mmtune_exit);

MODULE_DESCRIPTION("Swap and page allocation tuning for mmtune-enabled kernels");
MODULE_LICENSE("GPL");
MODULE_VERSION(MMTUNE_VERSION);
MODULE_IMPORT_NS(MMTUNE);
