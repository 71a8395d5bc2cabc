// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/error.hpp"

#include <cerrno>
#include <cstring>

namespace tpkit {

void throw_libbpf_error(Exit code, const std::string& what, int err)
{
    err = err < 0 ? -err : err;
    if (err == EPERM || err == EACCES)
        throw Error(Exit::no_privileges,
                    what + ": " + std::strerror(err) + " (needs root, or CAP_BPF and CAP_PERFMON)");
    throw Error(code, what + ": " + std::strerror(err));
}

void throw_read_error(const std::string& path, std::error_code ec)
{
    const bool denied = ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted;
    throw Error(denied ? Exit::no_privileges : Exit::failure,
                "cannot read " + path + ": " + ec.message());
}

} // namespace tpkit
