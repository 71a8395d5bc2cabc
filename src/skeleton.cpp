// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/skeleton.hpp"

#include "tpkit/cli.hpp"
#include "tpkit/tracefs.hpp"

#include <fmt/core.h>
#include <linux/btf.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace tpkit {
namespace {

bool libbpf_verbose = false;
thread_local StopBeforeLoad* innermost_stop = nullptr;

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

CoreBtf core_btf_for(const void* elf, std::size_t size, const std::string& what)
{
    CoreBtf core_btf = CoreBtf::for_object(elf, size);
    if (libbpf_verbose && core_btf.path())
        fmt::print(stderr, "tpkit: {} relocates against {} of the kernel's {} BTF types\n", what,
                   core_btf.types_kept(), core_btf.kernel_types());
    else if (libbpf_verbose && !core_btf.why_whole().empty())
        fmt::print(stderr, "tpkit: {} relocates against the kernel's whole BTF: {}\n", what,
                   core_btf.why_whole());
    return core_btf;
}

Link attach_tracepoint(bpf_program* prog, const std::string& system, const std::string& event)
{
    event_dir({system, event}); // a clear "unknown tracepoint" rather than libbpf's ENOENT
    bpf_link* link = bpf_program__attach_tracepoint(prog, system.c_str(), event.c_str());
    if (!link)
        throw_libbpf_error(Exit::kernel_refused,
                           "cannot attach to tracepoint " + system + ":" + event, errno);
    note_traced(system + ":" + event);
    return Link(link, &bpf_link__destroy);
}

void require_tracefs_for(const bpf_object* obj)
{
    bpf_program* prog = nullptr;
    while ((prog = bpf_object__next_program(obj, prog))) {
        if (bpf_program__autoload(prog) && bpf_program__type(prog) == BPF_PROG_TYPE_TRACEPOINT) {
            tracefs_root();
            return;
        }
    }
}

void note_attached_programs(const bpf_object* obj)
{
    bpf_program* prog = nullptr;
    while ((prog = bpf_object__next_program(obj, prog))) {
        std::string_view section = bpf_program__section_name(prog);
        auto slash = section.find('/');
        if (!bpf_program__autoload(prog) || slash == std::string_view::npos)
            continue;
        std::string_view kind = section.substr(0, slash), target = section.substr(slash + 1);
        if (kind == "tracepoint" || kind == "tp") {
            auto sep = target.find('/');
            if (sep != std::string_view::npos)
                note_traced(fmt::format("{}:{}", target.substr(0, sep), target.substr(sep + 1)));
        } else if (kind == "raw_tp" || kind == "raw_tracepoint") {
            note_traced(fmt::format("rawtracepoint:{}", target));
        }
    }
}

StopBeforeLoad::StopBeforeLoad() : outer_(std::exchange(innermost_stop, this)) {}

StopBeforeLoad::~StopBeforeLoad() { innermost_stop = outer_; }

bool StopBeforeLoad::active() { return innermost_stop != nullptr; }

MapMemoryCharge StopBeforeLoad::stop_here(MapMemoryCharge charge)
{
    if (!innermost_stop)
        return charge;
    innermost_stop->charges_.push_back(std::move(charge));
    throw StoppedBeforeLoad{};
}

void detach_all(std::vector<Link>& links)
{
    constexpr std::size_t max_threads = 64;
    std::size_t threads = std::min(max_threads, links.size());
    if (threads > 1) {
        std::atomic<std::size_t> next{0};
        std::vector<std::thread> workers;
        for (std::size_t t = 0; t < threads; t++)
            workers.emplace_back([&] {
                for (std::size_t i; (i = next++) < links.size();)
                    links[i].reset();
            });
        for (auto& w : workers)
            w.join();
    }
    links.clear();
}

void detach_skeleton(bpf_object_skeleton* skeleton)
{
    std::vector<Link> links;
    for (int i = 0; i < skeleton->prog_cnt; i++) {
        bpf_link** link = skeleton->progs[i].link;
        if (link && *link) {
            links.emplace_back(*link, &bpf_link__destroy);
            *link = nullptr; // the skeleton's own destroy then skips it
        }
    }
    detach_all(links);
}

bool kernel_has_raw_tracepoint(const std::string& event)
{
    return kernel_btf_has_type("btf_trace_" + event, BTF_KIND_TYPEDEF);
}

bool kernel_has_ringbuf()
{
    return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1;
}

} // namespace tpkit
