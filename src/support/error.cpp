// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/support/error.hpp"

#include <fmt/core.h>

#include <algorithm>
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

namespace {

// Edits (insert, delete, replace, swap two neighbours) from a to b: "sched_swtich" is one from
// "sched_switch".
std::size_t edit_distance(std::string_view a, std::string_view b)
{
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                                d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

} // namespace

std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates)
{
    const std::size_t allowed = std::min<std::size_t>(3, std::max<std::size_t>(1, word.size() / 4));
    std::string nearest;
    std::size_t best = allowed + 1;
    for (const std::string& candidate : candidates) {
        // Lengths alone rule most candidates out before the quadratic count.
        const std::size_t length_gap = candidate.size() > word.size() ? candidate.size() - word.size()
                                                                      : word.size() - candidate.size();
        if (length_gap >= best || candidate == word)
            continue;
        const std::size_t distance = edit_distance(word, candidate);
        if (distance < best || (distance == best && candidate < nearest)) {
            best = distance;
            nearest = candidate;
        }
    }
    return nearest;
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
