// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// UDP datagrams of known sizes in a private network namespace (net_namespace.hpp), and the
// packet-length histogram tools started there: their packets are the test's alone.
#pragma once

#include "net_namespace.hpp"
#include "tool_run.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tpkit::live {

// `count` UDP datagrams of `payload` bytes, which a packet-length histogram counts in the bucket
// from `bucket`.
struct Datagrams {
    std::size_t payload;
    int count;
    std::uint64_t bucket;
};

class PrivateNetns : public NetNamespace {
public:
    // Sends `count` UDP datagrams of `payload` bytes to a bound socket on 127.0.0.1 from inside
    // the namespace, receiving each (a bound receiver: no ICMP port-unreachable packets join
    // the count; receiving each keeps the socket buffer from ever dropping). Fails the test
    // when one is not sent or not received whole.
    void send_datagrams(std::size_t payload, int count) const;
    // Sends each batch in turn; the histogram they make, bucket by bucket.
    std::map<std::uint64_t, std::uint64_t>
    send_datagrams(const std::vector<Datagrams>& batches) const;

    // Runs TOOL --json 0.1 ARGS inside the namespace and returns it once a histogram it printed
    // counts one of the marker datagrams (of `marker_payload` bytes, sent until one is seen)
    // in the bucket from `marker_low`: a handshake that it is attached and its output read.
    // Null, the test failed, when it never does.
    std::unique_ptr<ToolRun> start_histogram_tool(const std::string& tool,
                                                  const std::vector<std::string>& args,
                                                  std::size_t marker_payload,
                                                  std::uint64_t marker_low) const;
};

} // namespace tpkit::live
