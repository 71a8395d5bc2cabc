// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/process/signals.hpp"

#include "tpkit/support/error.hpp"

#include <fmt/core.h>

#include <array>
#include <cctype>
#include <csignal>
#include <cstring>
#include <string>

namespace tpkit {
namespace {

// Names other than the ones signal_name() gives that <signal.h> defines for the same numbers.
struct Alias {
    std::string_view name;
    int sig;
};
constexpr Alias aliases[] = {{"IO", SIGIO}, {"IOT", SIGIOT}, {"CLD", SIGCHLD}};

// Without "SIG", as sigabbrev_np() and `kill -l` spell them; index = signal number.
const std::array<std::string, max_signal + 1>& abbreviations()
{
    static const std::array<std::string, max_signal + 1> names = [] {
        std::array<std::string, max_signal + 1> n;
        const int rtmin = SIGRTMIN, rtmax = SIGRTMAX;
        for (int sig = 1; sig <= max_signal; sig++) {
            if (const char* abbrev = sigabbrev_np(sig))
                n[sig] = abbrev;
            else if (sig < rtmin || sig > rtmax)
                n[sig] = std::to_string(sig);
            else if (sig == rtmin)
                n[sig] = "RTMIN";
            else if (sig == rtmax)
                n[sig] = "RTMAX";
            else if (sig - rtmin <= (rtmax - rtmin) / 2)
                n[sig] = fmt::format("RTMIN+{}", sig - rtmin);
            else
                n[sig] = fmt::format("RTMAX-{}", rtmax - sig);
        }
        return n;
    }();
    return names;
}

const std::array<std::string, max_signal + 1>& full_names()
{
    static const std::array<std::string, max_signal + 1> names = [] {
        std::array<std::string, max_signal + 1> n;
        for (int sig = 1; sig <= max_signal; sig++)
            n[sig] = "SIG" + abbreviations()[sig];
        return n;
    }();
    return names;
}

std::string upper(std::string_view text)
{
    std::string out(text);
    for (char& c : out)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

// 1..64 from decimal digits only, else 0.
int signal_number(std::string_view digits)
{
    if (digits.empty() || digits.size() > 2 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos)
        return 0;
    int sig = std::stoi(std::string(digits));
    return sig <= max_signal ? sig : 0;
}

} // namespace

std::string_view signal_name(int sig)
{
    if (sig < 1 || sig > max_signal)
        return {};
    return full_names()[sig];
}

int parse_signal(std::string_view text)
{
    std::string name = upper(text);
    if (int sig = signal_number(name))
        return sig;
    std::string_view bare = name;
    if (bare.starts_with("SIG"))
        bare.remove_prefix(3);
    if (!bare.empty()) {
        for (int sig = 1; sig <= max_signal; sig++)
            if (abbreviations()[sig] == bare)
                return sig;
        for (const Alias& a : aliases)
            if (a.name == bare)
                return a.sig;
    }
    throw Error(Exit::usage, fmt::format("unknown signal '{}': give a name such as TERM or SIGTERM, "
                                         "or a number from 1 to {}",
                                         text, max_signal));
}

std::uint64_t parse_signal_set(std::string_view list)
{
    std::uint64_t set = 0;
    std::size_t start = 0;
    while (true) {
        std::size_t comma = list.find(',', start);
        std::string_view item = list.substr(start, comma - start);
        set |= std::uint64_t(1) << (parse_signal(item) - 1);
        if (comma == std::string_view::npos)
            return set;
        start = comma + 1;
    }
}

std::string exit_status_text(std::uint32_t status)
{
    const int sig = status & 0x7f;
    if (sig == 0) {
        int code = (status >> 8) & 0xff;
        return code ? fmt::format("code {}", code) : "0";
    }
    std::string_view name = signal_name(sig);
    std::string text = name.empty() ? fmt::format("signal {}", sig)
                                    : fmt::format("signal {} ({})", sig, name);
    if (status & 0x80)
        text += ", core dumped";
    return text;
}

} // namespace tpkit
