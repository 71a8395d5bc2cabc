// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/run/inet.hpp"

#include "tpkit/cli/cli.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

namespace tpkit {

std::string address_text(std::uint16_t family, const std::uint8_t (&address)[16])
{
    // inet_ntop's text is the kernel's: dotted quads, and RFC 5952's compressed IPv6 with a
    // v4-mapped address's last 32 bits as a dotted quad (%pI6c does the same).
    char text[INET6_ADDRSTRLEN] = {};
    if (!inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, address, text, sizeof(text)))
        return "?";
    return text;
}

unsigned ip_version(const tpkit_inet_tuple& t) { return t.family == AF_INET6 ? 6 : 4; }

std::string_view protocol_name(int protocol)
{
    switch (protocol) {
    case IPPROTO_TCP:
        return "TCP";
    case IPPROTO_UDP:
        return "UDP";
    default:
        return "UNK";
    }
}

std::string versioned_protocol_name(int protocol, const tpkit_inet_tuple& t)
{
    return fmt::format("{}v{}", protocol_name(protocol), ip_version(t));
}

std::string endpoint_text(std::uint16_t family, const std::uint8_t (&address)[16], std::uint16_t port)
{
    if (family == AF_INET6)
        return fmt::format("[{}]:{}", address_text(family, address), port);
    return fmt::format("{}:{}", address_text(family, address), port);
}

std::string_view tcp_state_name(int state)
{
    // include/net/tcp_states.h, numbered from TCP_ESTABLISHED = 1
    static constexpr std::array<std::string_view, 13> names{
        "UNKNOWN",   "ESTABLISHED", "SYN_SENT", "SYN_RECV",   "FIN_WAIT1", "FIN_WAIT2",  "TIME_WAIT",
        "CLOSE",     "CLOSE_WAIT",  "LAST_ACK", "LISTEN",     "CLOSING",   "NEW_SYN_RECV",
    };
    return state > 0 && state < int(names.size()) ? names[state] : names[0];
}

std::string tcp_flags_text(std::uint8_t flags)
{
    static constexpr std::array<std::string_view, 8> names{"FIN", "SYN", "RST", "PSH",
                                                           "ACK", "URG", "ECE", "CWR"};
    std::string text;
    for (std::size_t bit = 0; bit < names.size(); bit++) {
        if (!(flags & (1u << bit)))
            continue;
        if (!text.empty())
            text += '|';
        text += names[bit];
    }
    return text;
}

std::map<std::uint32_t, std::string> drop_reason_names(const std::map<std::int64_t, std::string>& skb_drop_reason)
{
    std::map<std::uint32_t, std::string> names;
    for (const auto& [value, name] : skb_drop_reason) {
        std::string_view text = name;
        for (std::string_view prefix : {"SKB_DROP_REASON_", "SKB_"})
            if (text.starts_with(prefix)) {
                text.remove_prefix(prefix.size());
                break;
            }
        names.emplace(static_cast<std::uint32_t>(value), text);
    }
    return names;
}

void TupleCounter::add(const tpkit_inet_tuple& tuple)
{
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&tuple);
    auto [it, added] = counts_.try_emplace(std::vector<std::uint8_t>(bytes, bytes + sizeof(tuple)),
                                           TupleCount{tuple, 0});
    it->second.count++;
}

std::vector<TupleCount> TupleCounter::rows(bool fewest_first) const
{
    std::vector<TupleCount> rows;
    for (const auto& [key, count] : counts_)
        rows.push_back(count);
    std::stable_sort(rows.begin(), rows.end(), [fewest_first](const TupleCount& a, const TupleCount& b) {
        return fewest_first ? a.count < b.count : a.count > b.count;
    });
    return rows;
}

void add_family_options(Cli& cli, InetFilter& filter, const std::string& what)
{
    auto v4 = cli.flag_callback("-4,--ipv4", [&filter] { filter.family = AF_INET; },
                                "only IPv4 " + what);
    auto v6 = cli.flag_callback("-6,--ipv6", [&filter] { filter.family = AF_INET6; },
                                what == "sockets" ? "only IPv6 sockets (v4-mapped addresses included)"
                                                  : "only IPv6 " + what);
    v4.excludes(v6);
}

namespace {

// Empty when `list` is a valid port list, else what is wrong with it.
std::string port_list_problem(const std::string& list, std::vector<std::uint16_t>* ports)
{
    std::vector<std::uint16_t> parsed;
    std::string_view rest = list;
    while (true) {
        std::string_view item = rest.substr(0, rest.find(','));
        unsigned value = 0;
        auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size() || value < 1 ||
            value > 65535)
            return fmt::format("'{}' is not a port (1 to 65535)", item);
        parsed.push_back(std::uint16_t(value));
        if (item.size() == rest.size())
            break;
        rest.remove_prefix(item.size() + 1);
    }
    if (parsed.size() > TPKIT_MAX_PORTS)
        return fmt::format("at most {} ports", TPKIT_MAX_PORTS);
    if (ports)
        *ports = std::move(parsed);
    return {};
}

} // namespace

CliOption add_ports_option(Cli& cli, const std::string& flags, std::vector<std::uint16_t>& ports,
                           const std::string& description)
{
    return cli
        .option_function(
            flags, [&ports](const std::string& list) { port_list_problem(list, &ports); },
            description)
        .type_name("PORTS")
        .check([](const std::string& list) { return port_list_problem(list, nullptr); },
               "PORT[,PORT...]");
}

namespace {

std::optional<InetAddress> parse_address(const std::string& text)
{
    InetAddress address;
    address.family = text.find(':') == std::string::npos ? AF_INET : AF_INET6;
    if (inet_pton(address.family, text.c_str(), address.bytes) != 1)
        return std::nullopt;
    return address;
}

} // namespace

CliOption add_address_option(Cli& cli, const std::string& flags, InetAddress& address,
                             const std::string& description)
{
    return cli
        .option_function(
            flags, [&address](const std::string& text) { address = *parse_address(text); },
            description)
        .type_name("ADDR")
        .check(
            [](const std::string& text) {
                return parse_address(text) ? std::string()
                                           : fmt::format("'{}' is not an IPv4 or IPv6 address", text);
            },
            "ADDR");
}

void add_socket_filter_options(Cli& cli, InetFilter& filter, const std::string& what)
{
    add_family_options(cli, filter);
    add_ports_option(cli, "-L,--localport", filter.local_ports,
                     "only " + what + " whose local port is one of PORTS (comma-separated)");
    add_ports_option(cli, "-D,--remoteport", filter.remote_ports,
                     "only " + what + " whose remote port is one of PORTS (comma-separated)");
}

} // namespace tpkit
