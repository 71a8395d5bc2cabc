/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* bitesize's histogram key, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/bitesize.h>). */
#ifndef TPKIT_BITESIZE_H
#define TPKIT_BITESIZE_H

#include <tpkit/limits.h>

/* The command name of the task that submitted the I/O. */
struct bitesize_key {
	char comm[TPKIT_COMM_LEN];
};

#endif
