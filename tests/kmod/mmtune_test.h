/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the test modules that register with the mmtune hook core in
 * mmtune.ko's place.
 */
#ifndef MMTUNE_TEST_H
#define MMTUNE_TEST_H

#include <linux/debugfs.h>
#include <linux/mmtune_hooks.h>
#include <linux/module.h>

/*
 * mmtune_test_start - register @ops and switch @features on; nothing stays
 * registered when either fails.
 */
static inline int mmtune_test_start(const struct mmtune_ops *ops,
				    unsigned long features)
{
	int ret = mmtune_register(ops);

	if (ret)
		return ret;
	ret = mmtune_set_features(ops, features);
	if (ret)
		mmtune_unregister(ops);
	return ret;
}

/*
 * MMTUNE_TEST_MODULE(name, ops, desc) - the rest of a test module whose
 * name_init() registers @ops: its exit removes the debugfs directory of
 * its name, if it made one, and unregisters @ops; module_init/_exit, the
 * description, the license and the MMTUNE namespace.
 */
#define MMTUNE_TEST_MODULE(name, ops, desc)				\
	static void __exit name##_exit(void)				\
	{								\
		debugfs_lookup_and_remove(#name, NULL);			\
		mmtune_unregister(&(ops));				\
	}								\
	module_init(name##_init);					\
	module_exit(name##_exit);					\
	MODULE_DESCRIPTION(desc);					\
	MODULE_LICENSE("GPL");						\
	MODULE_IMPORT_NS(MMTUNE)

#endif
