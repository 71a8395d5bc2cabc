/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* wqlat's histogram key, shared by its BPF program and user space (installed for embedders as
 * <tpkit/tools/wqlat.h>). */
#ifndef TPKIT_WQLAT_H
#define TPKIT_WQLAT_H

#if !defined(__bpf__)
#include <linux/types.h>
#endif

/* -w FUNC: the addresses of the functions of that name (static functions of one name in
 * several files have several). */
#define WQLAT_MAX_FUNCTIONS 16

struct wqlat_key {
	__u64 function; /* the work function's kernel address (work_struct::func) */
};

#endif
