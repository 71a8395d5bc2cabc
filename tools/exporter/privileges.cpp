// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "privileges.hpp"

#include <tpkit/error.hpp>

#include <sys/capability.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

namespace tpkit::exporter {

namespace {

// Loading and attaching BPF programs, and the fd limit the engines raise for many events.
constexpr cap_value_t kept[] = {CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE};

using Caps = std::unique_ptr<std::remove_pointer_t<cap_t>, int (*)(void*)>;

// Of the kept capabilities, those the process has (one started with fewer keeps fewer).
void set_caps(bool effective)
{
    Caps now(cap_get_proc(), cap_free);
    Caps caps(cap_init(), cap_free);
    if (!now || !caps)
        throw Error(Exit::failure, "cannot read capabilities");
    for (cap_value_t cap : kept) {
        cap_flag_value_t has = CAP_CLEAR;
        cap_get_flag(now.get(), cap, CAP_PERMITTED, &has);
        if (has != CAP_SET)
            continue;
        cap_set_flag(caps.get(), CAP_PERMITTED, 1, &cap, CAP_SET);
        if (effective)
            cap_set_flag(caps.get(), CAP_EFFECTIVE, 1, &cap, CAP_SET);
    }
    if (cap_set_proc(caps.get()) != 0)
        throw Error(Exit::no_privileges,
                    std::string("cannot set capabilities: ") + std::strerror(errno));
}

} // namespace

void drop_privileges()
{
    // The bounding set needs CAP_SETPCAP, which a process started with only CAP_BPF and
    // CAP_PERFMON lacks: then there is nothing more to drop from it.
    if (CAP_IS_SUPPORTED(CAP_SETPCAP) && prctl(PR_CAPBSET_READ, CAP_SETPCAP) == 1) {
        for (cap_value_t cap = 0; cap <= cap_max_bits() - 1; cap++) {
            bool keep = false;
            for (cap_value_t k : kept)
                keep = keep || k == cap;
            if (!keep)
                cap_drop_bound(cap);
        }
    }
    set_caps(false);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        throw Error(Exit::failure, std::string("cannot set no_new_privs: ") + std::strerror(errno));
}

ReloadPrivileges::ReloadPrivileges()
{
    set_caps(true);
}

ReloadPrivileges::~ReloadPrivileges()
{
    try {
        set_caps(false);
    } catch (const Error&) {
        // Lowering the effective set within the permitted one cannot fail.
    }
}

} // namespace tpkit::exporter
