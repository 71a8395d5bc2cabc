/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* nettxlen's histogram key, shared by its BPF program and user space (installed for embedders
 * as <tpkit/tools/nettxlen.h>). */
#ifndef TPKIT_NETTXLEN_H
#define TPKIT_NETTXLEN_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif
#include <tpkit/tools/netrxlen.h>

/* The device name with --per-dev and the driver's return code with --per-rc, else zero. */
struct nettxlen_key {
	char dev[TPKIT_IFNAMSIZ];
	__s32 rc;
};

#endif
