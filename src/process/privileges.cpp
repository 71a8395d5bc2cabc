// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/process/privileges.hpp"

#include "tpkit/support/error.hpp"

#include <sys/capability.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

namespace tpkit {

namespace {

using Caps = std::unique_ptr<std::remove_pointer_t<cap_t>, int (*)(void*)>;

Caps current_caps()
{
    Caps caps(cap_get_proc(), cap_free);
    if (!caps)
        throw Error(Exit::failure, "cannot read capabilities");
    return caps;
}

bool has(cap_t caps, cap_value_t cap, cap_flag_t set)
{
    cap_flag_value_t value = CAP_CLEAR;
    cap_get_flag(caps, cap, set, &value);
    return value == CAP_SET;
}

void set_proc(cap_t caps)
{
    if (cap_set_proc(caps) != 0)
        throw Error(Exit::no_privileges,
                    std::string("cannot set capabilities: ") + std::strerror(errno));
}

// The permitted set, effective or not.
void set_effective(bool effective)
{
    Caps caps = current_caps();
    cap_clear_flag(caps.get(), CAP_EFFECTIVE);
    if (effective)
        for (cap_value_t cap = 0; cap < static_cast<cap_value_t>(cap_max_bits()); cap++)
            if (has(caps.get(), cap, CAP_PERMITTED))
                cap_set_flag(caps.get(), CAP_EFFECTIVE, 1, &cap, CAP_SET);
    set_proc(caps.get());
}

} // namespace

void drop_privileges(std::initializer_list<int> kept)
{
    const auto keep = [&](cap_value_t cap) { return std::ranges::find(kept, cap) != kept.end(); };
    // Dropping from the bounding set takes CAP_SETPCAP, which a process started with only
    // CAP_BPF and CAP_PERFMON lacks: its bounding set stays, and gives nothing back once
    // nothing is permitted and no_new_privs is set (no file capability applies at exec).
    Caps now = current_caps();
    if (CAP_IS_SUPPORTED(CAP_SETPCAP) && has(now.get(), CAP_SETPCAP, CAP_EFFECTIVE))
        for (cap_value_t cap = 0; cap < static_cast<cap_value_t>(cap_max_bits()); cap++)
            if (!keep(cap))
                cap_drop_bound(cap);
    Caps caps(cap_init(), cap_free); // nothing inheritable, so no ambient capability either
    if (!caps)
        throw Error(Exit::failure, "cannot read capabilities");
    for (cap_value_t cap : kept)
        if (has(now.get(), cap, CAP_PERMITTED))
            cap_set_flag(caps.get(), CAP_PERMITTED, 1, &cap, CAP_SET);
    set_proc(caps.get());
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        throw Error(Exit::failure, std::string("cannot set no_new_privs: ") + std::strerror(errno));
}

EffectivePrivileges::EffectivePrivileges()
{
    set_effective(true);
}

EffectivePrivileges::~EffectivePrivileges()
{
    try {
        set_effective(false);
    } catch (const Error&) {
        // Lowering the effective set within the permitted one cannot fail.
    }
}

} // namespace tpkit
