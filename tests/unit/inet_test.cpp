// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The socket tools' text: addresses as the kernel prints them, protocols and states by name,
// port lists.
#include <tpkit/cli/cli.hpp>
#include <tpkit/kernel/btf.hpp>
#include <tpkit/run/inet.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <sys/socket.h>

namespace {

std::string text_of(int family, const char* address)
{
    std::uint8_t bytes[16] = {};
    EXPECT_EQ(inet_pton(family, address, bytes), 1) << address;
    return tpkit::address_text(family, bytes);
}

// The exit code of a tool given these arguments: 0, or 2 for a usage error.
int parse(const std::vector<std::string>& args, std::vector<std::uint16_t>& ports)
{
    tpkit::Cli cli("inet_test", "", "");
    tpkit::add_ports_option(cli, "-P", ports, "ports");
    try {
        cli.parse_args(args);
    } catch (const tpkit::Error& e) {
        return static_cast<int>(e.code());
    }
    return 0;
}

} // namespace

TEST(InetText, AddressesAsTheKernelPrintsThem)
{
    EXPECT_EQ(text_of(AF_INET, "127.0.0.1"), "127.0.0.1");
    EXPECT_EQ(text_of(AF_INET, "0.0.0.0"), "0.0.0.0");
    EXPECT_EQ(text_of(AF_INET6, "::1"), "::1");
    EXPECT_EQ(text_of(AF_INET6, "::"), "::");
    EXPECT_EQ(text_of(AF_INET6, "::ffff:127.0.0.1"), "::ffff:127.0.0.1");
    EXPECT_EQ(text_of(AF_INET6, "2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
    EXPECT_EQ(text_of(AF_INET6, "fe80:0:0:0:0:0:0:5"), "fe80::5");
}

TEST(InetText, TcpStatesByName)
{
    EXPECT_EQ(tpkit::tcp_state_name(1), "ESTABLISHED");
    EXPECT_EQ(tpkit::tcp_state_name(7), "CLOSE");
    EXPECT_EQ(tpkit::tcp_state_name(10), "LISTEN");
    EXPECT_EQ(tpkit::tcp_state_name(12), "NEW_SYN_RECV");
    EXPECT_EQ(tpkit::tcp_state_name(0), "UNKNOWN");
    EXPECT_EQ(tpkit::tcp_state_name(13), "UNKNOWN");
}

TEST(InetText, ProtocolsAsBccNamesThem)
{
    EXPECT_EQ(tpkit::protocol_name(IPPROTO_TCP), "TCP");
    EXPECT_EQ(tpkit::protocol_name(IPPROTO_UDP), "UDP");
    EXPECT_EQ(tpkit::protocol_name(IPPROTO_RAW), "UNK");
    tpkit_inet_tuple t{};
    t.family = AF_INET;
    EXPECT_EQ(tpkit::versioned_protocol_name(IPPROTO_TCP, t), "TCPv4");
    t.family = AF_INET6;
    EXPECT_EQ(tpkit::versioned_protocol_name(IPPROTO_TCP, t), "TCPv6");
}

TEST(InetPorts, ListsOfOneToEightPorts)
{
    std::vector<std::uint16_t> ports;
    EXPECT_EQ(parse({"-P", "80"}, ports), 0);
    EXPECT_EQ(ports, (std::vector<std::uint16_t>{80}));
    EXPECT_EQ(parse({"-P", "1,65535,443"}, ports), 0);
    EXPECT_EQ(ports, (std::vector<std::uint16_t>{1, 65535, 443}));
    for (const char* bad : {"0", "65536", "x", "80,", ",80", "80,,81", "-1", "1,2,3,4,5,6,7,8,9", " 80"}) {
        std::vector<std::uint16_t> untouched{7};
        EXPECT_EQ(parse({"-P", bad}, untouched), 2) << bad;
        EXPECT_EQ(untouched, (std::vector<std::uint16_t>{7})) << bad;
    }
}

TEST(InetText, EndpointsAsTheKernelPrintsThem)
{
    std::uint8_t v4[16] = {}, v6[16] = {};
    ASSERT_EQ(inet_pton(AF_INET, "127.0.0.1", v4), 1);
    ASSERT_EQ(inet_pton(AF_INET6, "::ffff:127.0.0.1", v6), 1);
    EXPECT_EQ(tpkit::endpoint_text(AF_INET, v4, 80), "127.0.0.1:80");
    EXPECT_EQ(tpkit::endpoint_text(AF_INET6, v6, 5011), "[::ffff:127.0.0.1]:5011");
}

TEST(InetText, TcpFlagsAsBccNamesThem)
{
    EXPECT_EQ(tpkit::tcp_flags_text(0x02), "SYN");
    EXPECT_EQ(tpkit::tcp_flags_text(0x12), "SYN|ACK");
    EXPECT_EQ(tpkit::tcp_flags_text(0x11), "FIN|ACK");
    EXPECT_EQ(tpkit::tcp_flags_text(0xff), "FIN|SYN|RST|PSH|ACK|URG|ECE|CWR");
    EXPECT_EQ(tpkit::tcp_flags_text(0), "");
}

// The reference kernels number their drop reasons differently; the names come from each one's BTF.
TEST(InetText, DropReasonsNamedFromEachKernelsBtf)
{
    auto reasons = [](const char* kernel) {
        auto btf = tpkit::Btf::load(std::string(TPKIT_TEST_DATA) + "/btf/linux-" + kernel + ".btf.gz");
        return tpkit::drop_reason_names(btf.enum_values("skb_drop_reason").value());
    };
    auto v6_1 = reasons("6.1");
    auto v6_12 = reasons("6.12");
    auto v6_18 = reasons("6.18");
    EXPECT_EQ(v6_1.at(0), "NOT_DROPPED_YET");
    EXPECT_EQ(v6_1.at(1), "NOT_SPECIFIED");
    EXPECT_EQ(v6_1.at(2), "NO_SOCKET");
    EXPECT_EQ(v6_1.at(64), "PKT_TOO_BIG");
    // 6.12 numbers the first ones as 6.18 does, and has fewer.
    EXPECT_EQ(v6_12.at(1), "CONSUMED");
    EXPECT_EQ(v6_12.at(2), "NOT_SPECIFIED");
    EXPECT_EQ(v6_12.at(3), "NO_SOCKET");
    EXPECT_EQ(v6_12.at(80), "PKT_TOO_BIG");
    EXPECT_EQ(v6_12.at(103), "LOCAL_MAC");
    EXPECT_EQ(v6_18.at(1), "CONSUMED");
    EXPECT_EQ(v6_18.at(2), "NOT_SPECIFIED");
    EXPECT_EQ(v6_18.at(3), "NO_SOCKET");
    EXPECT_EQ(v6_18.at(127), "RECURSION_LIMIT");
}
