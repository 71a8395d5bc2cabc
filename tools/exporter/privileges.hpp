// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Once attached, the exporter keeps only what loading BPF programs for a reload needs, and
// uses even that only while reloading.
#pragma once

namespace tpkit::exporter {

// Drops every capability but CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE from the permitted and
// bounding sets, and those from the effective set; no new privileges by exec. For the calling
// thread and the threads it starts afterwards.
void drop_privileges();

// For a reload: the kept capabilities effective while this lives.
class ReloadPrivileges {
public:
    ReloadPrivileges();
    ~ReloadPrivileges();
    ReloadPrivileges(const ReloadPrivileges&) = delete;
    ReloadPrivileges& operator=(const ReloadPrivileges&) = delete;
};

} // namespace tpkit::exporter
