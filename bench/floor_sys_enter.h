/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/* The record of the classic syscalls:sys_enter_* tracepoints: common fields, the syscall
 * number, then the arguments as 64-bit words (args[2] of read() is count at offset 32). Its own
 * struct rather than vmlinux.h's syscall_trace_enter, whose CO-RE relocations would make libbpf
 * load the kernel's BTF: a fixed, stable layout is what a minimal program uses. */
#ifndef TPBENCH_FLOOR_SYS_ENTER_H
#define TPBENCH_FLOOR_SYS_ENTER_H

struct floor_sys_enter {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 args[6];
};

#endif
