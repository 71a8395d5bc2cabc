// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Which tpkit this is: the version of CMakeLists.txt's project(), the git commit it was built
// from, and the libbpf it runs with.
#pragma once

#include <string>
#include <string_view>

namespace tpkit {

// "0.1.0"
std::string_view version();
// The commit the build came from ("3f2a9c1d0b7e", "-dirty" appended when the work tree had
// changes), or "unknown" when it was built outside git (TPKIT_GIT_COMMIT can name it then).
std::string_view git_commit();
// What --version prints:
//   forksnoop (tpkit) 0.1.0
//   commit 3f2a9c1d0b7e
//   libbpf 1.1
std::string version_text(std::string_view tool);

} // namespace tpkit
