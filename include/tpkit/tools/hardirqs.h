/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* hardirqs' key, shared by its BPF program and user space; its value is softirqs' struct
 * irq_stats (installed for embedders as <tpkit/tools/hardirqs.h>). */
#ifndef TPKIT_HARDIRQS_H
#define TPKIT_HARDIRQS_H

#include <tpkit/tools/softirqs.h>

/* Handler names kept, as bcc keeps them: /proc/interrupts' last column. */
#define HARDIRQS_NAME_LEN 32
/* Keys each half of hardirqs' map holds, as many as bcc's; a name past a full map is counted
 * as missed. */
#define HARDIRQS_MAX_NAMES 256

struct hardirqs_key {
	char name[HARDIRQS_NAME_LEN];
};

#endif
