// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Shared support for live tests: they need root and a kernel that loads BPF. Without those they
// skip with the reason, unless TPKIT_REQUIRE_BPF=1 (CI), where they fail instead.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace tpkit::live {

// Empty when live BPF tests can run here, else why not.
std::string unavailable_reason();

bool bpf_required();

} // namespace tpkit::live

// A function a test finds by name in a stack: one copy, under its own name, in every build type
// (an optimising GCC would inline it, or clone it for a constant argument as NAME.constprop.0).
#if defined(__GNUC__) && !defined(__clang__)
#define TPKIT_NAMED_FRAME __attribute__((noinline, noclone))
#else
#define TPKIT_NAMED_FRAME __attribute__((noinline))
#endif

#define TPKIT_REQUIRE_LIVE()                                                                    \
    do {                                                                                        \
        std::string tpkit_reason_ = ::tpkit::live::unavailable_reason();                        \
        if (!tpkit_reason_.empty()) {                                                           \
            if (::tpkit::live::bpf_required())                                                  \
                FAIL() << "TPKIT_REQUIRE_BPF=1 but live BPF is unavailable: " << tpkit_reason_; \
            GTEST_SKIP() << tpkit_reason_;                                                      \
        }                                                                                       \
    } while (0)
