// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/support/version.hpp"

#include <bpf/libbpf.h>
#include <fmt/core.h>

namespace tpkit {
namespace build_info {
// Generated at build time (cmake/gen-version.cmake), so that a new commit needs no re-configure.
extern const char* const version;
extern const char* const git_commit;
} // namespace build_info

std::string_view version()
{
    return build_info::version;
}

std::string_view git_commit()
{
    return build_info::git_commit;
}

std::string version_text(std::string_view tool)
{
    // The libbpf loaded at run time, which need not be the one built against.
    return fmt::format("{} (tpkit) {}\ncommit {}\nlibbpf {}.{}\n", tool, version(), git_commit(),
                       libbpf_major_version(), libbpf_minor_version());
}

} // namespace tpkit
