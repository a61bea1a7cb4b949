// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: registers with the mmtune hook core like a second
 * tuning module would, so the VM tests can check that the core refuses a
 * second registrant (-EBUSY) and a module of another ABI (-EINVAL), and
 * that mmtune.ko itself is refused while this one holds the registration.
 *
 *   insmod mmtune_probe.ko                  register with the kernel's ABI
 *   insmod mmtune_probe.ko abi_version=999  register claiming another ABI
 *   insmod mmtune_probe.ko features=0x1f    also switch these hook keys on
 *
 * No hook of the probe has a body: switching keys on is safe only while
 * the kernel has no call site for them or, as here, the ops have no hooks.
 */
#include <linux/mmtune_hooks.h>
#include <linux/module.h>

static uint abi_version = MMTUNE_ABI_VERSION;
module_param(abi_version, uint, 0444);
MODULE_PARM_DESC(abi_version, "ABI version to claim when registering");

static ulong features;
module_param(features, ulong, 0444);
MODULE_PARM_DESC(features, "Mask of hook keys to switch on once registered");

static struct mmtune_ops probe_ops = {
	.ops_size	= sizeof(struct mmtune_ops),
	.owner		= THIS_MODULE,
};

static int __init mmtune_probe_init(void)
{
	int ret;

	probe_ops.abi_version = abi_version;
	/* A refusal fails the insmod with the hook core's error code. */
	ret = mmtune_register(&probe_ops);
	if (ret || !features)
		return ret;
	ret = mmtune_set_features(&probe_ops, features);
	if (ret)
		mmtune_unregister(&probe_ops);
	return ret;
}

static void __exit mmtune_probe_exit(void)
{
	mmtune_unregister(&probe_ops);
}

module_init(mmtune_probe_init);
module_exit(mmtune_probe_exit);
MODULE_DESCRIPTION("mmtune hook core registration probe (tests only)");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(MMTUNE);
