// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The reference kernels' formats, read once per fuzz target from the tarballs in tests/data.
#pragma once

#include "tpkit/kernel/format.hpp"
#include "tpgen/tpgen.hpp"

#include <string>
#include <vector>

namespace fuzz {

inline std::vector<tpkit::EventFormat> reference_formats()
{
    std::vector<tpkit::EventFormat> formats;
    for (const char* kernel : {"linux-6.18", "linux-6.1", "linux-6.12"}) {
        auto set = tpkit::tpgen::FormatSet::open(std::string(TPKIT_TEST_DATA) + "/formats/" +
                                                 kernel + ".tar.gz");
        for (const auto& name : set.events())
            formats.push_back(set.read(name));
    }
    return formats;
}

} // namespace fuzz
