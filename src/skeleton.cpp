// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/skeleton.hpp"

#include "tpkit/btf.hpp"
#include "tpkit/tracefs.hpp"

#include <cstdarg>
#include <cstdio>

namespace tpkit {
namespace {

bool libbpf_verbose = false;

int print_libbpf(enum libbpf_print_level level, const char* format, va_list args)
{
    // Without -v, failures surface as our own one-line errors; -v shows libbpf's details.
    if (!libbpf_verbose)
        return 0;
    (void)level;
    return std::vfprintf(stderr, format, args);
}

} // namespace

void set_libbpf_verbose(bool verbose)
{
    libbpf_verbose = verbose;
    libbpf_set_print(print_libbpf);
}

Link attach_tracepoint(bpf_program* prog, const std::string& system, const std::string& event)
{
    event_dir({system, event}); // a clear "unknown tracepoint" rather than libbpf's ENOENT
    bpf_link* link = bpf_program__attach_tracepoint(prog, system.c_str(), event.c_str());
    if (!link)
        throw_libbpf_error(Exit::kernel_refused,
                           "cannot attach to tracepoint " + system + ":" + event, errno);
    return Link(link, &bpf_link__destroy);
}

bool kernel_has_raw_tracepoint(const std::string& event)
{
    return Btf::load_vmlinux().typedef_proto_params("btf_trace_" + event).has_value();
}

bool kernel_has_ringbuf()
{
    return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1;
}

} // namespace tpkit
