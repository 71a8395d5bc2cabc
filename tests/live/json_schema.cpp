// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "json_schema.hpp"

#include <nlohmann/json.hpp>

#include <fmt/core.h>

#include <set>
#include <utility>
#include <vector>

namespace tpkit::live {
namespace {

using Json = nlohmann::ordered_json;

// JSON types as docs/json.md names them: integers are one type, signed or not.
std::string type_of(const Json& v)
{
    if (v.is_null())
        return "null";
    if (v.is_boolean())
        return "boolean";
    if (v.is_number_integer())
        return "integer";
    if (v.is_number())
        return "number";
    if (v.is_string())
        return "string";
    if (v.is_array())
        return "array";
    return "object";
}

// The keys every tool uses for the same thing, and their one JSON type (docs/json.md).
const std::map<std::string, std::string> shared_keys{
    {"type", "string"},   {"time_ns", "integer"}, {"pid", "integer"},
    {"tid", "integer"},   {"ppid", "integer"},    {"uid", "integer"},
    {"cpu", "integer"},   {"comm", "string"},     {"event", "string"},
    {"key", "string"},    {"lost_events", "integer"}, {"count", "integer"},
    {"total", "integer"}, {"buffer_full", "integer"}, {"not_counted", "integer"},
    {"recursion", "integer"},
};

// What each type of line must hold beyond "type": member → JSON type.
const std::map<std::string, std::vector<std::pair<std::string, std::string>>> required{
    {"event", {{"time_ns", "integer"}}},
    {"count", {{"time_ns", "integer"}}},
    {"hist",
     {{"time_ns", "integer"}, {"event", "string"}, {"field", "string"}, {"unit", "string"},
      {"buckets", "array"}, {"total", "integer"}}},
    {"lost", {{"lost_events", "integer"}}},
    {"tracepoint", {{"event", "string"}, {"id", "integer"}}},
};

// A bucket or a percentile: {"low":L,"high":H[,"count":C]}, integers.
std::string range_problem(const Json& v, bool with_count)
{
    if (!v.is_object())
        return "not an object";
    std::vector<std::string> keys{"low", "high"};
    if (with_count)
        keys.push_back("count");
    if (v.size() != keys.size())
        return fmt::format("{} members, not {}", v.size(), keys.size());
    for (const auto& k : keys)
        if (!v.contains(k) || !v[k].is_number_integer())
            return fmt::format("no integer \"{}\"", k);
    return {};
}

std::string hist_problem(const Json& obj)
{
    for (const auto& b : obj["buckets"])
        if (auto p = range_problem(b, true); !p.empty())
            return "bucket " + b.dump() + ": " + p;
    for (const char* p : {"p50", "p90", "p99"}) {
        if (!obj.contains(p))
            return fmt::format("no \"{}\"", p);
        if (!obj[p].is_null())
            if (auto problem = range_problem(obj[p], false); !problem.empty())
                return fmt::format("\"{}\": {}", p, problem);
    }
    return {};
}

} // namespace

std::string JsonSchema::problem(const std::string& tool, const std::string& line)
{
    Json obj = Json::parse(line, nullptr, false);
    if (obj.is_discarded() || !obj.is_object())
        return "not a JSON object";
    if (obj.empty() || obj.begin().key() != "type" || !obj.begin()->is_string())
        return "\"type\" is not its first member";
    const std::string type = obj["type"];
    auto shape = required.find(type);
    if (shape == required.end())
        return "unknown type \"" + type + "\"";
    for (const auto& [key, json_type] : shape->second) {
        if (!obj.contains(key))
            return fmt::format("a {} line without \"{}\"", type, key);
        if (type_of(obj[key]) != json_type)
            return fmt::format("\"{}\" is {}, not {}", key, type_of(obj[key]), json_type);
    }
    if (type == "hist")
        if (auto p = hist_problem(obj); !p.empty())
            return p;
    for (const auto& [key, value] : obj.items()) {
        const std::string t = type_of(value);
        if (t == "null")
            continue; // a value this kernel's event does not carry
        if (auto shared = shared_keys.find(key); shared != shared_keys.end() && t != shared->second)
            return fmt::format("\"{}\" is {}, not {}", key, t, shared->second);
        // Free-form keys (a tracepoint field's name as a histogram's key) are the tool's own.
        if (key.rfind("key_", 0) == 0)
            continue;
        auto [it, inserted] = seen_.try_emplace(key, Seen{t, tool});
        if (!inserted && it->second.type != t)
            return fmt::format("\"{}\" is {} here, {} in {}", key, t, it->second.type,
                               it->second.where);
    }
    return {};
}

} // namespace tpkit::live
