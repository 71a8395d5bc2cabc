// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Owning wrapper over a bpftool-generated skeleton: open → configure rodata → load → attach,
// all or nothing; destroying it detaches and unloads on every exit path.
#pragma once

#include "tpkit/bpf/maps.hpp"
#include "tpkit/kernel/core_btf.hpp"
#include "tpkit/support/error.hpp"

#include <bpf/libbpf.h>

#include <cerrno>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tpkit {

// Routes libbpf's own log to stderr only when verbose; otherwise only warnings the user can act
// on reach them through our errors. Call once, before opening any skeleton.
void set_libbpf_verbose(bool verbose);

// Raises the soft limit on open files to what `events` instances of OBJ need once loaded and
// attached, counted from OBJ as opened and configured (maps created, programs loaded, a perf
// event and a link per program, a perf event per CPU for a perf buffer). Call it before
// loading anything: a hard limit below that → Error(failure) naming both figures.
void raise_fd_limit_for(std::size_t events, const bpf_object* obj);

// Before the first load of a tool that did not count with raise_fd_limit_for():
// the same for one instance of OBJ, named WHAT in the error ("the BPF programs of forksnoop need
// about 40 open files; the hard limit is 5 (ulimit -Hn)"), instead of a load failing midway.
void raise_fd_limit_once(const bpf_object* obj, const std::string& what);

// Finds (or, as root, mounts) tracefs when OBJ has a classic tracepoint program to load: its
// attach reads the tracepoint's ID there. Raw tracepoints need none.
void require_tracefs_for(const bpf_object* obj);

// note_traced() for each autoloaded program of OBJ that its section attaches.
void note_attached_programs(const bpf_object* obj);

// What the tool traces ("sched:sched_process_fork", "rawtracepoint:block_rq_complete"), said as
// it attaches: Skeleton::attach(), attach_tracepoint() and the engines say it.
void note_traced(std::string_view event);
// Every event note_traced() was told, in order, once each: what "Tracing …" names.
const std::vector<std::string>& traced_events();


// Detaches the links a skeleton attached, all at once (detach_all): its own destroy would detach
// them one after another.
void detach_skeleton(bpf_object_skeleton* skeleton);

// The kernel's BTF that the BPF object in [elf, elf + size) named WHAT relocates against: cut to
// what its CO-RE relocations read (core_btf.hpp), said under -v, with why when it is not.
CoreBtf core_btf_for(const void* elf, std::size_t size, const std::string& what);

// While one lives (on its thread), Skeleton::load() does all it does before asking the kernel
// (tracefs, the map memory limit, open files), then throws StoppedBeforeLoad instead of
// loading: a tool's open() run under it checks its options by the very code a real start runs,
// and loads nothing. The memory of the maps it stopped stays charged until it ends: what is
// checked together is held to the limit together, as when it is loaded together.
class StopBeforeLoad {
public:
    StopBeforeLoad();
    ~StopBeforeLoad();
    StopBeforeLoad(const StopBeforeLoad&) = delete;
    StopBeforeLoad& operator=(const StopBeforeLoad&) = delete;

    // Whether one lives on this thread: nothing will be loaded or attached.
    static bool active();
    // For Skeleton::load(), its checks passed: under a StopBeforeLoad keeps the charge and
    // throws StoppedBeforeLoad, else gives the charge back.
    static MapMemoryCharge stop_here(MapMemoryCharge charge);

private:
    StopBeforeLoad* outer_;
    std::vector<MapMemoryCharge> charges_;
};

// Thrown by Skeleton::load() under a StopBeforeLoad: no error, the end of a check that passed.
struct StoppedBeforeLoad {};

template <class Skel>
class Skeleton {
public:
    // Opens the embedded BPF object; `what` names it in errors ("forksnoop").
    static Skeleton open(std::string what)
    {
        std::size_t size = 0;
        const void* elf = Skel::elf_bytes(&size);
        CoreBtf core_btf = core_btf_for(elf, size, what);
        bpf_object_open_opts opts{};
        opts.sz = sizeof(opts);
        opts.btf_custom_path = core_btf.path(); // libbpf reads it at load
        Skel* raw = Skel::open(&opts);
        if (!raw)
            throw_libbpf_error(Exit::kernel_refused, "cannot open BPF object " + what, errno);
        return Skeleton(raw, std::move(what), std::move(core_btf));
    }

    // Refuses maps larger than the memory limit (charge_map_memory) before creating any; their
    // memory is given back to the limit when the skeleton is destroyed. Under StopBeforeLoad,
    // stops before the kernel.
    void load()
    {
        require_tracefs_for(skel_->obj);
        MapMemoryCharge map_memory = charge_map_memory(skel_->obj, what_);
        raise_fd_limit_once(skel_->obj, what_);
        map_memory_ = StopBeforeLoad::stop_here(std::move(map_memory));
        if (int err = Skel::load(skel_.get()))
            throw_libbpf_error(Exit::kernel_refused, "cannot load BPF programs of " + what_, err);
        core_btf_ = {};
    }

    // Attaches every program whose section names its attach point (autoload ones only).
    void attach()
    {
        if (int err = Skel::attach(skel_.get()))
            throw_libbpf_error(Exit::kernel_refused, "cannot attach BPF programs of " + what_, err);
        note_attached_programs(skel_->obj);
    }

    Skel* operator->() const noexcept { return skel_.get(); }
    Skel& operator*() const noexcept { return *skel_; }
    Skel* get() const noexcept { return skel_.get(); }
    // The name it was opened with, as errors and loss lines say it.
    const std::string& what() const noexcept { return what_; }

private:
    Skeleton(Skel* raw, std::string what, CoreBtf core_btf)
        : skel_(raw, &destroy), what_(std::move(what)), core_btf_(std::move(core_btf))
    {
    }

    static void destroy(Skel* skel)
    {
        detach_skeleton(skel->skeleton);
        Skel::destroy(skel);
    }

    MapMemoryCharge map_memory_; // given back once skel_, declared after it, has freed the maps
    std::unique_ptr<Skel, void (*)(Skel*)> skel_;
    std::string what_;
    CoreBtf core_btf_; // until load
};

// Owns one bpf_link (for programs attached at run time, e.g. to a tracepoint chosen by name).
using Link = std::unique_ptr<bpf_link, int (*)(bpf_link*)>;

// Detaches every link, all at once: each classic tracepoint's detach waits for RCU grace periods
// (tens of milliseconds), and waits that overlap share them. Many links (a big glob): a process
// of its own closes their perf events afterwards, one after another as the kernel allows, in its
// own session and with stdio on /dev/null; the programs are off their tracepoints when this
// returns, and the caller need not wait for the rest.
void detach_all(std::vector<Link>& links);

// Attaches prog to the classic tracepoint sys:event. Unknown event → Error(unknown_target).
Link attach_tracepoint(bpf_program* prog, const std::string& system, const std::string& event);

// Whether this kernel has the raw tracepoint `event` (its BTF has btf_trace_<event>): for
// programs on events of later kernels, loaded only where they exist (bpf_program__set_autoload).
bool kernel_has_raw_tracepoint(const std::string& event);

// Whether this kernel has BPF ring buffers (5.8+).
bool kernel_has_ringbuf();

} // namespace tpkit
