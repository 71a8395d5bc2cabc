// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "config.hpp"

#include "output/exposition.hpp"
#include <tpkit/support/error.hpp>

#include <fmt/core.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <optional>
#include <set>
#include <sstream>

namespace tpkit::exporter {

namespace {

const std::set<std::string> metric_keys = {"name",   "help",   "unit",   "multiplier", "count",
                                           "hist",   "field",  "by",     "filter",     "buckets",
                                           "tool",   "args",   "max_series"};

[[noreturn]] void fail(const std::string& file, const YAML::Mark& mark, const std::string& what)
{
    // Quoted keys and yaml-cpp's own messages may hold any byte (a newline): kept one line.
    throw Error(Exit::usage, fmt::format("{}:{}: {}", file, mark.line + 1, one_line(what)));
}

// A map's key: a list or a map as a key is valid YAML, but names nothing here.
std::string key_text(const std::string& file, const YAML::Node& key)
{
    if (!key.IsScalar())
        fail(file, key.Mark(), "a key must be a single value, not a list, a map or nothing");
    return key.Scalar();
}

std::string scalar(const std::string& file, const YAML::Node& node, const std::string& key)
{
    if (!node.IsScalar())
        fail(file, node.Mark(), fmt::format("key '{}': expected a single value", key));
    if (node.Scalar().empty()) // "key:" or "key: !tag" alone
        fail(file, node.Mark(), fmt::format("key '{}': empty", key));
    return node.Scalar();
}

template <typename T>
T number(const std::string& file, const YAML::Node& node, const std::string& key, const char* what)
{
    try {
        return node.as<T>();
    } catch (const YAML::Exception&) {
        fail(file, node.Mark(), fmt::format("key '{}': expected {}", key, what));
    }
}

std::vector<std::string> strings(const std::string& file, const YAML::Node& node,
                                 const std::string& key)
{
    std::vector<std::string> out;
    if (node.IsScalar())
        return {node.Scalar()};
    if (!node.IsSequence())
        fail(file, node.Mark(), fmt::format("key '{}': expected a value or a list", key));
    if (node.size() == 0)
        fail(file, node.Mark(), fmt::format("key '{}': an empty list", key));
    for (const auto& item : node)
        out.push_back(scalar(file, item, key));
    return out;
}

void read_buckets(MetricConfig& m, const YAML::Node& node)
{
    if (node.IsScalar() && node.Scalar() == "log2")
        return;
    if (node.IsMap() && node.size() == 1) {
        const auto kind = key_text(m.file, node.begin()->first);
        // A copy: begin() is a temporary iterator, and ->second a part of it.
        const YAML::Node value = node.begin()->second;
        if (kind == "linear") {
            auto parts = strings(m.file, value, "buckets");
            if (parts.size() == 3) {
                m.linear = fmt::format("{},{},{}", parts[0], parts[1], parts[2]);
                return;
            }
            if (parts.size() == 1) {
                m.linear = parts[0];
                return;
            }
        } else if (kind == "loglinear") {
            // As tphist's --loglinear: 0 would mean no sub-buckets, log2 in silence.
            m.loglinear = number<unsigned>(m.file, value, "buckets", "1 to 4");
            if (m.loglinear < 1 || m.loglinear > 4)
                fail(m.file, value.Mark(),
                     fmt::format("key 'buckets': loglinear {}: expected 1 to 4", m.loglinear));
            return;
        }
    }
    fail(m.file, node.Mark(),
         "key 'buckets': expected log2, {linear: [MIN, MAX, STEP]} or {loglinear: K}");
}

// yaml-cpp keeps every entry of a repeated key and finds only the first: a second value would
// be ignored in silence. `lines`: the keys seen so far, with their lines.
void refuse_repeated(const std::string& file, const YAML::Node& key_node, const std::string& key,
                     std::map<std::string, int>& lines)
{
    auto [it, inserted] = lines.emplace(key, key_node.Mark().line + 1);
    if (!inserted)
        fail(file, key_node.Mark(),
             fmt::format("key '{}': repeated (first on line {})", key, it->second));
}

MetricConfig read_metric(const std::string& file, const YAML::Node& node)
{
    MetricConfig m;
    m.file = file;
    if (!node.IsMap())
        fail(file, node.Mark(), "each metric is a map (name: …, count: … or hist: … or tool: …)");
    for (const auto& entry : node) {
        const auto key = key_text(file, entry.first);
        if (!metric_keys.count(key))
            fail(file, entry.first.Mark(),
                 fmt::format("key '{}': unknown (known: name, help, unit, multiplier, count, hist, "
                             "field, by, filter, buckets, tool, args, max_series)", key));
        refuse_repeated(file, entry.first, key, m.lines);
    }
    const int sources = node["count"].IsDefined() + node["hist"].IsDefined() + node["tool"].IsDefined();
    if (sources != 1)
        fail(file, node.Mark(),
             "each metric needs exactly one source: count: EVENTS, hist: EVENT or tool: NAME");
    if (!node["name"])
        fail(file, node.Mark(), "key 'name': missing");
    m.name = scalar(file, node["name"], "name");
    if (!valid_metric_name(m.name))
        fail(file, node["name"].Mark(),
             fmt::format("key 'name': '{}' is not a metric name ([a-zA-Z_][a-zA-Z0-9_]*)", m.name));
    if (node["help"])
        m.help = scalar(file, node["help"], "help");
    if (node["unit"]) {
        m.unit = scalar(file, node["unit"], "unit");
        if (!valid_metric_name(m.unit))
            fail(file, node["unit"].Mark(), fmt::format("key 'unit': '{}' is not a unit name", m.unit));
    }
    if (node["multiplier"]) {
        m.multiplier = number<double>(file, node["multiplier"], "multiplier", "a number");
        if (!(*m.multiplier > 0))
            fail(file, node["multiplier"].Mark(), "key 'multiplier': must be above 0");
    }
    if (node["max_series"]) {
        m.max_series = number<std::size_t>(file, node["max_series"], "max_series", "a number");
        if (m.max_series < 1 || m.max_series > (1u << 20))
            fail(file, node["max_series"].Mark(), "key 'max_series': must be 1 to 1048576");
    }
    if (node["args"])
        m.args = strings(file, node["args"], "args");
    if (node["by"])
        m.by = scalar(file, node["by"], "by");
    if (node["filter"])
        m.filter = scalar(file, node["filter"], "filter");

    auto only_for = [&](const char* key, const char* source) {
        if (node[key])
            fail(file, node[key].Mark(), fmt::format("key '{}': only a {} metric has it", key, source));
    };
    if (node["count"]) {
        m.kind = SourceKind::count;
        m.events = strings(file, node["count"], "count");
        only_for("field", "hist");
        only_for("buckets", "hist");
    } else if (node["hist"]) {
        m.kind = SourceKind::hist;
        m.events = {scalar(file, node["hist"], "hist")};
        if (!node["field"])
            fail(file, node.Mark(), "key 'field': missing (the integer field a hist measures)");
        m.field = scalar(file, node["field"], "field");
        if (node["buckets"])
            read_buckets(m, node["buckets"]);
    } else {
        m.kind = SourceKind::tool;
        m.tool = scalar(file, node["tool"], "tool");
        for (const char* key : {"field", "buckets", "by", "filter"})
            if (node[key])
                fail(file, node[key].Mark(),
                     fmt::format("key '{}': a tool takes its own options, under args", key));
    }
    YAML::Emitter emitter;
    emitter << node;
    m.canonical = emitter.c_str();
    return m;
}

// The file's text. yaml-cpp's own reading let the error of a directory or of an unreadable file
// (/proc/self/mem) out as libstdc++'s message, without the file's name.
std::string read_config_text(const std::string& path)
{
    constexpr std::size_t max_bytes = 16 << 20; // far beyond any configuration; /dev/zero ends
    auto cannot_read = [&](const std::string& why) {
        return Error(Exit::usage,
                     fmt::format("{}: cannot read the configuration file: {}", path, why));
    };
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw cannot_read(std::strerror(errno));
    std::string text;
    char chunk[65536];
    for (;;) {
        const ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || text.size() + static_cast<std::size_t>(n) > max_bytes) {
            const int err = errno;
            close(fd);
            if (n < 0)
                throw cannot_read(std::strerror(err));
            if (n > 0)
                throw cannot_read(fmt::format("larger than {} MiB", max_bytes >> 20));
            return text;
        }
        text.append(chunk, static_cast<std::size_t>(n));
    }
}

// Where each document of a YAML stream starts, and where its first node is; nothing else.
class DocumentStarts : public YAML::EventHandler {
public:
    void OnDocumentStart(const YAML::Mark& mark) override
    {
        start = mark;
        first_node.reset();
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  const std::string&) override
    {
        node(mark);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override
    {
        node(mark);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override
    {
        node(mark);
    }
    void OnMapEnd() override {}

    YAML::Mark start;
    std::optional<YAML::Mark> first_node;

private:
    void node(const YAML::Mark& mark)
    {
        if (!first_node)
            first_node = mark;
    }
};

// A document after the first would be ignored in silence: refused. Not by YAML::LoadAll, which
// in yaml-cpp 0.7 never returns on some malformed input (",", ",!e, :": its parser reads an empty
// document there again and again, growing memory): a document that starts where the one before
// it did is that input's error.
void refuse_second_document(const std::string& path, const std::string& text)
{
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentStarts document;
    std::optional<YAML::Mark> first;
    while (parser.HandleNextDocument(document)) {
        if (!first) {
            first = document.start;
            continue;
        }
        if (document.start.pos == first->pos)
            fail(path, document.start, "not YAML: nothing here starts a value");
        fail(path, document.first_node.value_or(document.start),
             "a second YAML document (after '---'): the configuration is one document");
    }
}

} // namespace

std::string MetricConfig::where(const std::string& key) const
{
    auto it = lines.find(key);
    return fmt::format("{}:{}: metric {}: key '{}': ", file, it == lines.end() ? 0 : it->second,
                       name, key);
}

Config load_config(const std::string& path)
{
    const std::string text = read_config_text(path);
    YAML::Node root;
    try {
        refuse_second_document(path, text);
        root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        fail(path, e.mark, e.msg);
    }
    if (!root.IsMap() || !root["metrics"])
        throw Error(Exit::usage, fmt::format("{}:1: key 'metrics': missing (a list of metrics)", path));
    std::map<std::string, int> root_lines;
    for (const auto& entry : root) {
        const auto key = key_text(path, entry.first);
        if (key != "metrics")
            fail(path, entry.first.Mark(), fmt::format("key '{}': unknown (only metrics)", key));
        refuse_repeated(path, entry.first, key, root_lines);
    }
    const YAML::Node& list = root["metrics"];
    if (!list.IsSequence() || list.size() == 0)
        fail(path, list.Mark(), "key 'metrics': expected a list of at least one metric");
    Config config{path, {}};
    std::map<std::string, int> names;
    for (const auto& node : list) {
        MetricConfig m = read_metric(path, node);
        auto [it, inserted] = names.emplace(m.name, m.lines["name"]);
        if (!inserted)
            fail(path, node["name"].Mark(),
                 fmt::format("key 'name': metric {} is already defined on line {}", m.name,
                             it->second));
        config.metrics.push_back(std::move(m));
    }
    return config;
}

} // namespace tpkit::exporter
