/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* netrxlen's histogram key, shared by its BPF program and user space (installed for embedders
 * as <tpkit/tools/netrxlen.h>). */
#ifndef TPKIT_NETRXLEN_H
#define TPKIT_NETRXLEN_H

#define TPKIT_IFNAMSIZ 16

/* The device name with --per-dev, else all zero: one histogram for every device. */
struct netrxlen_key {
	char dev[TPKIT_IFNAMSIZ];
};

#endif
