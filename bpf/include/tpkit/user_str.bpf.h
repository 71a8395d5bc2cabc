/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Strings in the traced process's memory (a syscall's path or name argument) and in the
 * kernel's (a tracepoint's `char *` field). */
#ifndef TPKIT_USER_STR_BPF_H
#define TPKIT_USER_STR_BPF_H

#include <bpf/bpf_helpers.h>

/* bpf_probe_read_user_str(dst, size, src), and *cut set when the string is longer than the
 * size - 1 bytes it left in dst (a string of exactly size - 1 bytes fills dst too). */
static __always_inline long tpkit_read_user_str(char *dst, __u32 size, const char *src, bool *cut)
{
	long len = bpf_probe_read_user_str(dst, size, src);
	char last = '\0';

	*cut = false;
	if (len == size) {
		bpf_probe_read_user(&last, 1, src + size - 1);
		*cut = last != '\0';
	}
	return len;
}

/* The same from kernel memory: a `char *` field of a tracepoint's record. */
static __always_inline long tpkit_read_kernel_str(char *dst, __u32 size, const char *src, bool *cut)
{
	long len = bpf_probe_read_kernel_str(dst, size, src);
	char last = '\0';

	*cut = false;
	if (len == size) {
		bpf_probe_read_kernel(&last, 1, src + size - 1);
		*cut = last != '\0';
	}
	return len;
}

#endif
