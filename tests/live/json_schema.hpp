// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The --json schema of docs/json.md as a check: every line an object whose first member is
// "type", the members each type requires with their JSON types, and the keys every tool shares
// ("pid", "cpu", "comm", "time_ns", …) of one JSON type wherever they appear.
#pragma once

#include <map>
#include <string>

namespace tpkit::live {

class JsonSchema {
public:
    // Empty when `line` follows the schema, else what is wrong. Keys seen before (in any tool's
    // line checked by this object) must keep their JSON type: `tool` names where one was first
    // seen in the message.
    std::string problem(const std::string& tool, const std::string& line);

private:
    struct Seen {
        std::string type;
        std::string where;
    };
    std::map<std::string, Seen> seen_; // top-level key → its JSON type, first seen where
};

} // namespace tpkit::live
