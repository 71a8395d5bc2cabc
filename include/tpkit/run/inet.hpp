// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What the TCP tools share in user space: addresses and TCP states as text, and their socket
// filters (-4, -6, port lists) from the command line into the BPF side's rodata
// (bpf/include/tpkit/inet.bpf.h).
#pragma once

#include "tpkit/inet.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tpkit {

class Cli;
class CliOption;

// An address as the kernel prints it (%pI4, %pI6c): 127.0.0.1, ::1, ::ffff:127.0.0.1.
std::string address_text(std::uint16_t family, const std::uint8_t (&address)[16]);

inline std::string local_address_text(const tpkit_inet_tuple& t) { return address_text(t.family, t.saddr); }
inline std::string remote_address_text(const tpkit_inet_tuple& t) { return address_text(t.family, t.daddr); }

// An address and port as the kernel prints them (%pISpc): 127.0.0.1:80, [::1]:80.
std::string endpoint_text(std::uint16_t family, const std::uint8_t (&address)[16], std::uint16_t port);

inline std::string local_endpoint_text(const tpkit_inet_tuple& t) { return endpoint_text(t.family, t.saddr, t.sport); }
inline std::string remote_endpoint_text(const tpkit_inet_tuple& t) { return endpoint_text(t.family, t.daddr, t.dport); }

// 4 or 6, as bcc's IP column shows the family.
unsigned ip_version(const tpkit_inet_tuple& t);

// An IP protocol as bcc's socket tools name it: TCP, UDP, else UNK.
std::string_view protocol_name(int protocol);
// The same with the socket's IP version, as bcc's solisten has it: TCPv4, TCPv6.
std::string versioned_protocol_name(int protocol, const tpkit_inet_tuple& t);

// A TCP state as bcc's tools name it (the kernel's TCP_ESTABLISHED: "ESTABLISHED"); a number
// the kernel does not define: "UNKNOWN".
std::string_view tcp_state_name(int state);

// A TCP header's flags byte as bcc's tools name it: "SYN", "SYN|ACK" (FIN SYN RST PSH ACK URG
// ECE CWR, in that order); "" for none.
std::string tcp_flags_text(std::uint8_t flags);

// The kernel's drop reasons by number, from the enumerators of its enum skb_drop_reason, named
// as its skb:kfree_skb format prints them: "NO_SOCKET" (SKB_DROP_REASON_NO_SOCKET), "CONSUMED"
// (SKB_CONSUMED). The numbers differ between kernels (NO_SOCKET is 2 on 6.1, 3 on 6.18); kernels
// before 5.17 have no such enum.
std::map<std::uint32_t, std::string> drop_reason_names(const std::map<std::int64_t, std::string>& skb_drop_reason);

// A count per socket tuple, for the TCP tools' -c.
struct TupleCount {
    tpkit_inet_tuple tuple;
    std::uint64_t count;
};

class TupleCounter {
public:
    void add(const tpkit_inet_tuple& tuple);
    // The counts, most first, or with `fewest_first` last (nearest the prompt, as bcc's
    // tcpretrans -c has them); equal counts in the order of their tuples' bytes.
    std::vector<TupleCount> rows(bool fewest_first = false) const;

private:
    std::map<std::vector<std::uint8_t>, TupleCount> counts_;
};

// Which sockets a TCP tool shows: the family, and the ports one of which the local (remote) port
// must be; empty lists: any port.
struct InetFilter {
    std::uint16_t family = 0; // AF_INET, AF_INET6, 0: both
    std::vector<std::uint16_t> local_ports;
    std::vector<std::uint16_t> remote_ports;
};

// -4/--ipv4 and -6/--ipv6 (one or the other) into filter.family; `what` they select.
void add_family_options(Cli& cli, InetFilter& filter, const std::string& what = "sockets");

// -4, -6, -L/--localport PORTS and -D/--remoteport PORTS into filter; `what` names what they
// select ("sockets", "sessions").
void add_socket_filter_options(Cli& cli, InetFilter& filter, const std::string& what);

// An option taking a comma-separated list of ports (1 to 65535, at most TPKIT_MAX_PORTS); a
// bad list is a usage error naming the port.
CliOption add_ports_option(Cli& cli, const std::string& flags, std::vector<std::uint16_t>& ports,
                           const std::string& description);

// One address as a user types it: IPv4 (127.0.0.1) or IPv6 (::1, ::ffff:127.0.0.1), held as
// struct tpkit_inet_tuple holds addresses.
struct InetAddress {
    std::uint16_t family = 0; // AF_INET, AF_INET6; 0: none given
    std::uint8_t bytes[16] = {};
};

// An option taking one address; one that inet_pton reads as neither family is a usage error.
CliOption add_address_option(Cli& cli, const std::string& flags, InetAddress& address,
                             const std::string& description);

// The filter into a skeleton's rodata (inet.bpf.h), before load.
template <class Skel>
void apply_inet_filter(Skel& skel, const InetFilter& filter)
{
    skel.rodata->tpkit_target_family = filter.family;
    for (std::size_t i = 0; i < filter.local_ports.size() && i < TPKIT_MAX_PORTS; i++)
        skel.rodata->tpkit_target_lports[i] = filter.local_ports[i];
    for (std::size_t i = 0; i < filter.remote_ports.size() && i < TPKIT_MAX_PORTS; i++)
        skel.rodata->tpkit_target_rports[i] = filter.remote_ports[i];
}

} // namespace tpkit
