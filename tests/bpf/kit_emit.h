/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What tests/bpf/kit_emit.bpf.c sends for each openat(2): an event of varying size, the path
 * as long as it is (with its NUL), at most KIT_EMIT_PATH_MAX bytes. */
#ifndef TPKIT_TEST_KIT_EMIT_H
#define TPKIT_TEST_KIT_EMIT_H

#include <tpkit/task.h>

#define KIT_EMIT_PATH_MAX 4096 /* PATH_MAX */

struct kit_emit_event {
	struct tpkit_task_header task;
	__u32 path_size; /* bytes of path that are valid, its NUL included; 0: unreadable */
	__u32 reserved;
	char path[KIT_EMIT_PATH_MAX];
};

#endif
