// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Least privilege once attached: a tool that has loaded and attached its programs needs no
// capability to read their maps and buffers, or to detach them (closing the descriptors).
#pragma once

#include <initializer_list>

namespace tpkit {

// Drops every capability but `kept` (CAP_* numbers) from the bounding set (when the process may
// change it) and from the permitted set, and every one from the effective set; no new
// privileges by exec. Of `kept`, only those the process has stay permitted. For the calling
// thread and the threads it starts afterwards.
void drop_privileges(std::initializer_list<int> kept = {});

// The permitted capabilities effective while this lives (the exporter loads programs for a
// reload with what drop_privileges() kept).
class EffectivePrivileges {
public:
    EffectivePrivileges();
    ~EffectivePrivileges();
    EffectivePrivileges(const EffectivePrivileges&) = delete;
    EffectivePrivileges& operator=(const EffectivePrivileges&) = delete;
};

} // namespace tpkit
