// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/error.hpp"

#include <fmt/core.h>

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

std::string one_line(std::string_view message)
{
    std::size_t kept = message.size();
    if (kept > max_message_bytes) {
        kept = max_message_bytes;
        while (kept > 0 && (static_cast<unsigned char>(message[kept]) & 0xc0) == 0x80)
            kept--; // not inside a UTF-8 sequence
    }
    std::string line;
    for (unsigned char c : message.substr(0, kept)) {
        if (c == '\n')
            line += "\\n";
        else if (c < 0x20 || c == 0x7f)
            line += fmt::format("\\x{:02x}", c);
        else
            line += static_cast<char>(c);
    }
    if (kept < message.size())
        line += fmt::format("... ({} more bytes)", message.size() - kept);
    return line;
}

void throw_read_error(const std::string& path, std::error_code ec)
{
    const bool denied = ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted;
    throw Error(denied ? Exit::no_privileges : Exit::failure,
                "cannot read " + path + ": " + ec.message());
}

} // namespace tpkit
