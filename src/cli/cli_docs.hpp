// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What the build makes from a tool's command line (its --man-page and --completion-options).
#pragma once

#include "tpkit/cli/cli.hpp"

#include <string>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace tpkit {

// The parts of a tool's man page that come from its command line (NAME, SYNOPSIS, OPTIONS,
// --help's EXAMPLES) as roff; cmake/gen-man.cmake adds the hand-written parts of docs/man/.
std::string man_page_generated(const CLI::App& app);
// Whether the option takes a value (a flag does not).
bool takes_value(const CLI::Option* option);
// What its value is called, in --help and the man page: the name given to it (FD, CLOCK), its
// check's when that names a unit or the choices (SECONDS, {ns,us,ms}), else the option's own
// name (--uid UID, interval INTERVAL): never CLI11's type ("UINT in [0 - 4294967294]").
std::string value_name(const CLI::Option* option);
// One line per option for the shell completions: its names, then " =" when it takes a value,
// followed by what completes the value (`values`, CliOption::complete()) when anything does.
std::string completion_options(const CLI::App& app, const CompletionValues& values);

} // namespace tpkit
