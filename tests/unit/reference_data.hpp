// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The reference kernels' data (tests/data, and their format files unpacked in the build tree),
// as the unit tests read it.
#pragma once

#include "tpkit/kernel/format.hpp"

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tpkit::test {

inline const std::filesystem::path data_dir = TPKIT_TEST_DATA;

// How many events (format files) each reference kernel has.
inline constexpr std::size_t events_of_6_1 = 1390, events_of_6_12 = 1552, events_of_6_18 = 2323;

// The events directory of a reference kernel ("linux-6.18"), as tracefs lays it out.
inline std::filesystem::path events_root(const char* kernel)
{
    return std::filesystem::path(TPKIT_FORMATS_DIR) / kernel;
}

inline EventFormat reference_format(const char* kernel, const char* system, const char* event)
{
    return read_format(events_root(kernel) / system / event / "format");
}

// A file's whole content, bytes as they are.
inline std::string slurp(const std::filesystem::path& file)
{
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace tpkit::test
