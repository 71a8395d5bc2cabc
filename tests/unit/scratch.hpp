// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A per-process scratch directory for unit tests that write files, removed at exit.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace tpkit::test {

// TMPDIR/NAME-PID, made on first use and removed when the test program exits.
inline std::filesystem::path scratch_dir(const std::string& name)
{
    struct Dir {
        std::filesystem::path path;
        ~Dir()
        {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    };
    static Dir dir{std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()))};
    std::filesystem::create_directories(dir.path);
    return dir.path;
}

} // namespace tpkit::test
