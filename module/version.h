/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _MMTUNE_VERSION_H
#define _MMTUNE_VERSION_H

#define MMTUNE_VERSION "0.1.0"

#endif
