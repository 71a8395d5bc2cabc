/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Block requests as the block tools report them, shared by BPF programs (block.bpf.h) and user
 * space (block.hpp). Plain C.
 *
 * A request's operation and flags are the kernel's cmd_flags translated into the fixed numbers
 * below when the program loads: the kernel's flag bits move between versions (__REQ_POLLED is
 * bit 23 on 6.1 and 22 on 6.18), so its raw cmd_flags mean nothing to user space. */
#ifndef TPKIT_BLOCK_H
#define TPKIT_BLOCK_H

/* Devices are the kernel's dev_t: major << 20 | minor (MINORBITS). */
#define TPKIT_MINOR_BITS 20
#define TPKIT_MINOR_MASK ((1u << TPKIT_MINOR_BITS) - 1)

/* Operations: the kernel's REQ_OP_* values, which have stayed put (the low 8 bits). */
#define TPKIT_REQ_OP_READ 0
#define TPKIT_REQ_OP_WRITE 1
#define TPKIT_REQ_OP_FLUSH 2
#define TPKIT_REQ_OP_DISCARD 3
#define TPKIT_REQ_OP_SECURE_ERASE 5
#define TPKIT_REQ_OP_WRITE_ZEROES 9

/* Flags: bit i stands for the kernel's __REQ_<name>, whatever its bit there. */
#define TPKIT_REQ_SYNC (1u << 0)
#define TPKIT_REQ_META (1u << 1)
#define TPKIT_REQ_PRIO (1u << 2)
#define TPKIT_REQ_NOMERGE (1u << 3)
#define TPKIT_REQ_IDLE (1u << 4)
#define TPKIT_REQ_INTEGRITY (1u << 5)
#define TPKIT_REQ_FUA (1u << 6)
#define TPKIT_REQ_PREFLUSH (1u << 7)
#define TPKIT_REQ_RAHEAD (1u << 8)
#define TPKIT_REQ_BACKGROUND (1u << 9)
#define TPKIT_REQ_NOWAIT (1u << 10)

#endif
