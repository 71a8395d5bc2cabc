// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpsnoop's rendering of random records of real events: the first two input bytes choose the
// event (of every reference kernel), the rest is what the BPF side sends (header, record).
// Every JSON line must parse as JSON with one member per field; a text line is one line.
#include "engine/decode.hpp"

#include "fuzz_formats.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

const std::vector<tpkit::EventFormat>& formats()
{
    static const auto all = fuzz::reference_formats();
    return all;
}

[[noreturn]] void fail(const char* what, const std::string& line)
{
    std::fprintf(stderr, "decode fuzz: %s:\n%s\n", what, line.c_str());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2)
        return 0;
    const auto& format = formats()[(data[0] | data[1] << 8) % formats().size()];
    tpkit::SnoopEvent event;
    if (!tpkit::SnoopEvent::parse({reinterpret_cast<const std::byte*>(data + 2), size - 2}, event))
        return 0;
    auto fields = tpkit::fields_to_print(format, {});

    std::string text;
    tpkit::append_snoop_text(text, event, format, fields, "12.345678");
    if (text.find('\n') != std::string::npos)
        fail("a newline in a text line", text);

    std::string json;
    tpkit::append_snoop_json(json, event, format, fields, "time_ns", -5);
    nlohmann::json parsed;
    try {
        parsed = nlohmann::json::parse(json);
    } catch (const nlohmann::json::exception& e) {
        fail(e.what(), json);
    }
    // One member per field, and after a syscall's string argument its _sym and _cut.
    std::size_t members = 0;
    for (const tpkit::Field* f : fields) {
        if (!parsed["fields"].contains(f->name))
            fail("a field left out", json);
        members += 1 + parsed["fields"].contains(f->name + "_sym") +
                   parsed["fields"].contains(f->name + "_cut");
    }
    if (parsed["fields"].size() != members)
        fail("not one member per field", json);
    if (parsed["event"] != format.system + ":" + format.name)
        fail("the event's name changed", json);
    return 0;
}
