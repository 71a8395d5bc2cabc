/* SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause */
/* Picks the committed vmlinux.h of the BPF target architecture, so the build does not depend
 * on the build host's kernel. Regenerate with vmlinux/regenerate.sh. */
#if defined(__TARGET_ARCH_x86)
#include "x86/vmlinux.h"
#else
#error "tpkit: no vmlinux.h for this __TARGET_ARCH_*; generate one with vmlinux/regenerate.sh"
#endif
