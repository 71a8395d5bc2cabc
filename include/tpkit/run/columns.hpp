// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A streaming tool's output, declared once per event type: every column has its heading and
// width in the text table and its key in the JSON object, and the header line, the text rows
// and the JSON objects are all rendered from that one list.
//
//   const tpkit::Columns<fork_event> columns{{
//       tpkit::time_column<fork_event>([](const fork_event& e) { return e.timestamp_ns; }),
//       {"PID", "pid", 7, tpkit::Align::right, [](const fork_event& e) -> tpkit::Value { return e.pid; }},
//   }};
#pragma once

#include "tpkit/cli/cli.hpp"
#include "tpkit/output/output.hpp"
#include "tpkit/process/clock.hpp"
#include "tpkit/support/json.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace tpkit {

// A value this kernel's event does not carry (a tracepoint field added in a later kernel):
// "-" in text, null in JSON, never a made-up 0.
struct Absent {};
inline constexpr Absent absent{};

// A value whose text and JSON differ: a list (argv) is a command line in text and an array in JSON.
struct TextAndJson {
    std::string text;
    std::string json; // valid JSON (append_json_string, for instance)
};

// What a column shows for one event: a number or text (comm, names), as JSON number or string,
// or absent.
struct Value {
    template <class Int>
        requires(std::is_integral_v<Int> && !std::is_same_v<Int, bool>)
    Value(Int v)
    {
        if constexpr (std::is_signed_v<Int>)
            value = std::int64_t(v);
        else
            value = std::uint64_t(v);
    }
    Value(std::string_view text) : value(text) {}
    Value(const char* text) : value(std::string_view(text)) {}
    Value(Absent) : value(Absent{}) {}
    // Text made for this event (a formatted figure), owned by the value.
    Value(std::string text) : value(std::move(text)) {}
    Value(TextAndJson both) : value(std::move(both)) {}

    std::variant<std::int64_t, std::uint64_t, std::string_view, Absent, std::string, TextAndJson>
        value;
};

enum class Align { left, right };

template <class Event>
struct Column {
    enum class Kind {
        value,
        time, // get() gives bpf_ktime_get_ns(): TIME as HH:MM:SS, TIME(s) since start with -T,
              // "time_ns" in JSON, in --clock's clock (wall: ns since the epoch)
        seconds, // get() gives nanoseconds (a duration): seconds with two decimals in text, like
                 // bcc's AGE(s), the nanoseconds in JSON (name the key *_ns)
    };
    std::string_view heading;
    std::string_view key;     // JSON member; empty: in text only (bcc's "ADDR:PORT" text
                              // beside separate JSON members)
    int width;                // text width; 0: unpadded (last column)
    Align align;
    Value (*get)(const Event&);
    Kind kind = Kind::value;
    bool json_only = false; // a member of the JSON object, no column of the text
};

// A member of the JSON object with no text column (bcc's text has none for it).
template <class Event>
Column<Event> json_column(std::string_view key, Value (*get)(const Event&))
{
    return {"", key, 0, Align::left, get, Column<Event>::Kind::value, true};
}

// A text column only when `shown` (an option asks for it), else in JSON only.
template <class Event>
Column<Event> json_only_unless(bool shown, Column<Event> column)
{
    column.json_only = !shown;
    return column;
}

template <class Event>
Column<Event> time_column(Value (*get)(const Event&))
{
    return {"TIME", "time_ns", 8, Align::left, get, Column<Event>::Kind::time};
}

template <class Event>
Column<Event> seconds_column(std::string_view heading, std::string_view key, int width,
                             Value (*get)(const Event&))
{
    return {heading, key, width, Align::right, get, Column<Event>::Kind::seconds};
}

// A fixed-size, possibly unterminated char array (comm, device names) as text.
template <std::size_t N>
std::string_view text_of(const char (&chars)[N])
{
    return {chars, strnlen(chars, N)};
}

// Text read into a bounded buffer (a path), cut when longer: followed by "…" in text, as read in
// JSON (where the event's own member says it was cut).
inline Value cut_text(std::string_view text, bool cut)
{
    if (!cut)
        return text;
    std::string json;
    append_json_string(json, text);
    return TextAndJson{std::string(text) + "…", std::move(json)};
}

// A member of the task header every streaming event begins with (tpkit_task_header, the event's
// `task`), as a column: the JSON key is the member's name, the heading, width and alignment are
// the tool's own (bcc's tools differ).
enum class TaskField { comm, pid, tid, uid, cpu };

template <class Event>
Column<Event> task_column(TaskField field, std::string_view heading, int width, Align align)
{
    switch (field) {
    case TaskField::comm:
        return {heading, "comm", width, align, [](const Event& e) -> Value { return text_of(e.task.comm); }};
    case TaskField::pid:
        return {heading, "pid", width, align, [](const Event& e) -> Value { return e.task.pid; }};
    case TaskField::tid:
        return {heading, "tid", width, align, [](const Event& e) -> Value { return e.task.tid; }};
    case TaskField::uid:
        return {heading, "uid", width, align, [](const Event& e) -> Value { return e.task.uid; }};
    case TaskField::cpu:
        break;
    }
    return {heading, "cpu", width, align, [](const Event& e) -> Value { return e.task.cpu; }};
}

// The task header's time, as time_column() shows it.
template <class Event>
Column<Event> task_time_column()
{
    return time_column<Event>([](const Event& e) -> Value { return e.task.timestamp_ns; });
}

// A duration in milliseconds with `decimals` decimals in text (bcc's MS columns), its
// nanoseconds in JSON (name the key *_ns).
inline Value milliseconds_value(std::uint64_t ns, int decimals)
{
    return TextAndJson{fmt::format("{:.{}f}", ns / 1e6, decimals), std::to_string(ns)};
}

template <class Event>
class Columns {
public:
    Columns(std::initializer_list<Column<Event>> columns) : columns_(columns) {}
    // Columns chosen at run time (some only with an option).
    explicit Columns(std::vector<Column<Event>> columns) : columns_(std::move(columns)) {}

    // Text only: the heading line. -T widens the time column and names it TIME(s).
    void header(const CommonOptions& options, Output& out) const
    {
        if (options.json)
            return;
        bool first = true;
        for (const auto& c : columns_) {
            if (c.json_only)
                continue;
            bool timed = c.kind == Column<Event>::Kind::time && options.timestamp;
            cell(out, first, timed ? std::string_view("TIME(s)") : c.heading, width(c, options), c.align);
        }
        out.append("\n");
    }

    // One event: a text row, or one JSON object per line, {"type":"event",…}.
    void row(const Event& e, const CommonOptions& options, const MonotonicClock& clock,
             Output& out) const
    {
        row(e, options, clock, out, "event", std::nullopt);
    }

    // A whole table at once (counts printed at the end): the header, then each row, in JSON
    // {"type":"count","time_ns":NOW,…} as an interval's counters.
    void table(const std::vector<Event>& rows, const CommonOptions& options, Output& out) const
    {
        MonotonicClock clock;
        const std::int64_t end_ns = now_ns(options.clock);
        header(options, out);
        for (const auto& e : rows)
            row(e, options, clock, out, "count", end_ns);
    }

private:
    void row(const Event& e, const CommonOptions& options, const MonotonicClock& clock,
             Output& out, std::string_view type, std::optional<std::int64_t> time_ns) const
    {
        if (options.json) {
            JsonObject obj;
            obj.add("type", type);
            if (time_ns)
                obj.add("time_ns", *time_ns);
            for (const auto& c : columns_) {
                if (c.key.empty())
                    continue;
                auto v = c.get(e).value;
                if (c.kind == Column<Event>::Kind::time)
                    obj.add(c.key, clock.time_ns(std::get<std::uint64_t>(v), options.clock));
                else
                    std::visit([&](const auto& x) {
                        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, Absent>)
                            obj.add_raw(c.key, "null");
                        else if constexpr (std::is_same_v<std::decay_t<decltype(x)>, TextAndJson>)
                            obj.add_raw(c.key, x.json);
                        else
                            obj.add(c.key, x);
                    }, v);
            }
            out.append(obj.str());
            out.append("\n");
            return;
        }
        bool first = true;
        for (const auto& c : columns_) {
            if (c.json_only)
                continue;
            auto v = c.get(e).value;
            if (c.kind == Column<Event>::Kind::time) {
                std::uint64_t ns = std::get<std::uint64_t>(v);
                std::string time = options.timestamp
                                       ? fmt::format("{:.6f}", clock.seconds_since_start(ns))
                                       : clock.wall_time(ns);
                cell(out, first, time, width(c, options), c.align);
                continue;
            }
            if (c.kind == Column<Event>::Kind::seconds) {
                cell(out, first, fmt::format("{:.2f}", std::get<std::uint64_t>(v) / 1e9), c.width,
                     c.align);
                continue;
            }
            std::visit([&](const auto& x) {
                if constexpr (std::is_same_v<std::decay_t<decltype(x)>, Absent>)
                    cell(out, first, std::string_view("-"), c.width, c.align);
                else if constexpr (std::is_same_v<std::decay_t<decltype(x)>, TextAndJson>)
                    cell(out, first, x.text, c.width, c.align);
                else
                    cell(out, first, x, c.width, c.align);
            }, v);
        }
        out.append("\n");
    }

    static int width(const Column<Event>& c, const CommonOptions& options)
    {
        return c.kind == Column<Event>::Kind::time && options.timestamp ? 14 : c.width;
    }

    template <class T>
    static void cell(Output& out, bool& first, const T& value, int width, Align align)
    {
        if (!first)
            out.append(" ");
        first = false;
        if (width == 0)
            out.print("{}", value);
        else if (align == Align::left)
            out.print("{:<{}}", value, width);
        else
            out.print("{:>{}}", value, width);
    }

    std::vector<Column<Event>> columns_;
};

} // namespace tpkit
