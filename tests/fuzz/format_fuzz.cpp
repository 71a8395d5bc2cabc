// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The format file parser on any text, and what tpkit does with a format it accepted: every field
// decoded from a record of zeros and of 0xff bytes, and compared in a filter.
#include "engine/decode.hpp"
#include "tpkit/engine/filter.hpp"
#include "tpkit/kernel/format.hpp"
#include "tpkit/support/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "format fuzz: %s\n", what);
        std::abort();
    }
}

void use(const tpkit::EventFormat& format)
{
    std::uint64_t fixed = format.fixed_size();
    for (const auto& f : format.fields) {
        check(std::uint64_t(f.offset) + f.size <= fixed, "a field ends past fixed_size()");
        check(format.field(f.name) != nullptr, "a parsed field is not found by name");
    }
    for (std::byte fill : {std::byte{0}, std::byte{0xff}}) {
        std::vector<std::byte> record(fixed, fill);
        for (const auto& f : format.fields) {
            (void)tpkit::decode_field(f, record).str();
            (void)tpkit::decode_field(f, record).json();
            std::string expr = f.name + (f.is_string() ? " ~ \"a*b\"" : " == 1");
            try {
                auto prog = tpkit::compile_filter(expr, format);
                (void)tpkit::filter_match(prog, record);
            } catch (const tpkit::Error& e) {
                check(e.code() == tpkit::Exit::usage, "a filter error that is not a usage error");
            }
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    tpkit::EventFormat format;
    try {
        format = tpkit::parse_format(text, "fuzz");
    } catch (const tpkit::FormatError&) {
        return 0;
    }
    use(format);
    return 0;
}
