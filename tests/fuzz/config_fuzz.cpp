// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpkit-exporter's configuration reader on any file: it either returns metrics that keep its
// promises (valid unique names, exactly one source, a hist's field) or throws Error(usage) as one
// line naming the file. Any other exception would reach the user as exit 1 without a line number.
#include "output/exposition.hpp"
#include "tpkit/support/error.hpp"

#include "exporter/config.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

namespace {

void check(bool ok, const char* what, const std::string& detail = {})
{
    if (!ok) {
        std::fprintf(stderr, "config fuzz: %s %s\n", what, detail.c_str());
        std::abort();
    }
}

// The input as a file: load_config() reads a path.
std::string as_file(const std::uint8_t* data, std::size_t size)
{
    static const int fd = memfd_create("config.yaml", 0);
    check(fd >= 0, "memfd_create failed");
    check(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == static_cast<ssize_t>(size),
          "cannot write the input");
    return "/proc/self/fd/" + std::to_string(fd);
}

void check_config(const tpkit::exporter::Config& config)
{
    using tpkit::exporter::SourceKind;
    check(!config.metrics.empty(), "a configuration without metrics");
    std::set<std::string> names;
    for (const auto& m : config.metrics) {
        check(tpkit::valid_metric_name(m.name), "an invalid name", m.name);
        check(names.insert(m.name).second, "a duplicate name", m.name);
        check(m.unit.empty() || tpkit::valid_metric_name(m.unit), "an invalid unit", m.unit);
        check(!m.multiplier || *m.multiplier > 0, "a multiplier not above 0");
        check(m.max_series >= 1 && m.max_series <= (1u << 20), "max_series out of range");
        switch (m.kind) {
        case SourceKind::count:
            check(!m.events.empty() && m.field.empty(), "a count without events, or with a field");
            break;
        case SourceKind::hist:
            check(m.events.size() == 1 && !m.field.empty(), "a hist without one event and a field");
            break;
        case SourceKind::tool:
            check(m.events.empty() && m.field.empty(), "a tool metric with events or a field");
            break;
        }
        check(!m.canonical.empty(), "an entry without its canonical text");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string path = as_file(data, size);
    try {
        check_config(tpkit::exporter::load_config(path));
    } catch (const tpkit::Error& e) {
        const std::string message = e.what();
        check(e.code() == tpkit::Exit::usage, "an error that is not a usage error:", message);
        check(message.rfind(path + ":", 0) == 0, "an error not naming the file:", message);
        check(message.find('\n') == std::string::npos, "an error of several lines:", message);
    }
    // Anything else thrown ends the run: libFuzzer reports the uncaught exception.
    return 0;
}
