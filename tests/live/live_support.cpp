// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "live.hpp"

#include <bpf/libbpf.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace tpkit::live {

bool bpf_required()
{
    const char* v = std::getenv("TPKIT_REQUIRE_BPF");
    return v && std::strcmp(v, "1") == 0;
}

std::string unavailable_reason()
{
    if (geteuid() != 0)
        return "live BPF tests need root";
    if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, nullptr) != 1)
        return "this kernel does not load BPF tracepoint programs";
    return {};
}

} // namespace tpkit::live
