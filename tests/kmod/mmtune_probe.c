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
#include "mmtune_test.h"

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
	probe_ops.abi_version = abi_version;
	/* A refusal fails the insmod with the hook core's error code. */
	if (!features)
		return mmtune_register(&probe_ops);
	return mmtune_test_start(&probe_ops, features);
}

MMTUNE_TEST_MODULE(mmtune_probe, probe_ops,
		   "mmtune hook core registration probe (tests only)");
