// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Differential: an expression that compile_filter() accepts is evaluated twice on a random
// record, by filter_match() (the interpreter of the compiled branch program, the BPF evaluator's
// oracle) and by a direct evaluator of the expression written here from the kernel's rules
// (kernel/trace/trace_events_filter.c, the string matching of unit/kernel_filter_ref.hpp). They
// must agree, and an accepted expression must be one the grammar allows.
//
// Input: [event][comm: 16][cpu: 1][tid: 4] EXPRESSION \0 RECORD
#include "tpkit/engine.h"
#include "tpkit/engine/filter.hpp"
#include "tpkit/kernel/syscalls.hpp"
#include "tpkit/support/error.hpp"

#include "fuzz_formats.hpp"
#include "unit/kernel_filter_ref.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using tpkit::EventFormat;
using tpkit::Field;

namespace {

// Integer widths and string kinds that no single real event has: __rel_loc, s8, u16, ...
constexpr const char* kinds_format = R"(name: fuzz_kinds
ID: 4242
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:s8 a8;	offset:8;	size:1;	signed:1;
	field:u8 b8;	offset:9;	size:1;	signed:0;
	field:s16 a16;	offset:10;	size:2;	signed:1;
	field:u16 b16;	offset:12;	size:2;	signed:0;
	field:__rel_loc char[] rel;	offset:16;	size:4;	signed:0;
	field:char short_name[8];	offset:20;	size:8;	signed:0;
	field:s64 a64;	offset:28;	size:8;	signed:1;
	field:u64 b64;	offset:36;	size:8;	signed:0;
	field:__data_loc char[] dl;	offset:44;	size:4;	signed:0;

print fmt: "x"
)";

const std::vector<EventFormat>& events()
{
    static const std::vector<EventFormat> chosen = [] {
        static const char* const names[] = {
            "sched_process_fork", "task_rename", "sys_enter_openat", "sched_switch",
            "irq_handler_entry", "signal_generate", "block_rq_issue", "kmalloc",
            "sys_enter", "sched_wakeup"};
        std::vector<EventFormat> out{tpkit::parse_format(kinds_format, "fuzz_kinds")};
        auto all = fuzz::reference_formats(); // Linux 6.18's first
        for (const char* name : names)
            out.push_back(*std::find_if(all.begin(), all.end(),
                                        [&](const EventFormat& f) { return f.name == name; }));
        return out;
    }();
    return chosen;
}

[[noreturn]] void fail(const std::string& what)
{
    std::fprintf(stderr, "filter fuzz: %s\n", what.c_str());
    std::abort();
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The record as the kernel's filter sees it, zeros after its end: far enough that a __data_loc
// (16-bit offset and length) never reads past the buffer.
class Padded {
public:
    explicit Padded(std::span<const std::byte> record) : bytes_(record.size() + 0x20000 + 64)
    {
        if (!record.empty())
            std::memcpy(bytes_.data(), record.data(), record.size());
    }
    const char* at(std::uint64_t offset) const { return bytes_.data() + offset; }
    std::uint64_t number(std::uint32_t offset, std::uint32_t size, bool is_signed) const
    {
        std::uint64_t v = 0;
        std::memcpy(&v, at(offset), size);
        return cast(v, size, is_signed);
    }
    // VALUE as a C integer of SIZE bytes: truncated, then sign- or zero-extended.
    static std::uint64_t cast(std::uint64_t v, std::uint32_t size, bool is_signed)
    {
        if (size >= 8)
            return v;
        std::uint64_t mask = (std::uint64_t(1) << (8 * size)) - 1;
        v &= mask;
        if (is_signed && (v >> (8 * size - 1) & 1))
            v |= ~mask;
        return v;
    }

private:
    std::vector<char> bytes_;
};

class Evaluator {
public:
    Evaluator(std::string_view text, const EventFormat& format, const Padded& record,
              const tpkit::FilterEnv& env)
        : text_(text), format_(format), record_(record), env_(env)
    {
    }

    bool run()
    {
        bool v = any();
        skip();
        if (pos_ != text_.size())
            fail("accepted, but text is left after the expression at " + std::to_string(pos_));
        return v;
    }

private:
    void skip()
    {
        while (pos_ < text_.size() && is_space(text_[pos_]))
            ++pos_;
    }
    bool take(std::string_view token)
    {
        skip();
        if (text_.substr(pos_, token.size()) != token)
            return false;
        pos_ += token.size();
        return true;
    }
    bool any()
    {
        bool v = all();
        while (take("||"))
            v = all() || v;
        return v;
    }
    bool all()
    {
        bool v = unary();
        while (take("&&"))
            v = unary() && v;
        return v;
    }
    bool unary()
    {
        if (take("!"))
            return !unary();
        if (take("(")) {
            bool v = any();
            if (!take(")"))
                fail("accepted, but a '(' is not closed");
            return v;
        }
        return predicate();
    }

    bool predicate()
    {
        skip();
        std::size_t from = pos_;
        while (pos_ < text_.size() && is_word(text_[pos_]))
            ++pos_;
        std::string name(text_.substr(from, pos_ - from));
        skip();
        std::string op;
        for (const char* candidate : {"~", "!=", "==", "<=", "<", ">=", ">", "&"})
            if (text_.substr(pos_, std::strlen(candidate)) == candidate) {
                op = candidate;
                break;
            }
        if (op.empty())
            fail("accepted, but no operator after '" + name + "'");
        pos_ += op.size();
        skip();
        const Field* field = format_.field(name);
        if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
            std::size_t end = text_.find(text_[pos_], pos_ + 1);
            std::string pattern(text_.substr(pos_ + 1, end - pos_ - 1));
            pos_ = end + 1;
            return string_compare(name, field, op, pattern);
        }
        from = pos_++;
        while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_])))
            ++pos_;
        return number_compare(name, field, op, text_.substr(from, pos_ - from));
    }

    bool string_compare(const std::string& name, const Field* field, const std::string& op,
                        const std::string& pattern)
    {
        char comm[TPKIT_FILTER_COMM_LEN + 1] = {};
        const char* str;
        int len;
        if (!field && (name == "comm" || name == "COMM")) {
            std::memcpy(comm, env_.comm.data(), std::min<std::size_t>(env_.comm.size(), 16));
            str = comm;
            len = TPKIT_FILTER_COMM_LEN;
        } else if (field && field->is_string() && field->is_dynamic()) {
            auto loc = static_cast<std::uint32_t>(record_.number(field->offset, 4, false));
            std::uint64_t start = loc & 0xffff;
            if (field->kind == tpkit::FieldKind::rel_loc)
                start += field->offset + 4;
            str = record_.at(start);
            len = static_cast<int>(loc >> 16);
        } else if (field && field->is_string()) {
            str = record_.at(field->offset);
            len = static_cast<int>(field->size);
        } else if (field && tpkit::is_syscall_user_string(format_, *field)) {
            // The string the argument points to, as far as BPF reads it; unreadable: "".
            auto address = record_.number(field->offset, 8, false);
            auto text = env_.user_string ? env_.user_string(address) : std::nullopt;
            user_ = text ? text->substr(0, std::min<std::size_t>(strnlen(text->c_str(), text->size()),
                                                                 TPKIT_USER_STR_MAX - 1))
                         : std::string();
            str = user_.c_str();
            len = static_cast<int>(user_.size() + 1);
        } else {
            fail("accepted a string for '" + name + "', which is not a string");
        }
        // tpkit's one departure (filter.hpp): a string without a NUL ends with its field, where
        // the kernel's glob_match() reads on into the rest of the record.
        std::string bounded;
        if (len > 0) {
            bounded.assign(str, len);
            str = bounded.c_str();
        }
        if (op == "~")
            return kernel_ref::tilde(pattern, str, len);
        bool equal = len ? std::strncmp(str, pattern.c_str(), len) == 0
                         : std::strcmp(str, pattern.c_str()) == 0;
        if (op == "==" || op == "!=")
            return equal == (op == "==");
        fail("accepted '" + op + "' on a string");
    }

    // kstrtoull/kstrtoll with base 0.
    static std::optional<std::uint64_t> parse(std::string_view text, bool is_signed)
    {
        bool negative = is_signed && !text.empty() && text[0] == '-';
        if (negative)
            text.remove_prefix(1);
        int base = 10;
        if (text.size() > 2 && text[0] == '0' && (text[1] | 0x20) == 'x' &&
            std::isxdigit(static_cast<unsigned char>(text[2]))) {
            base = 16;
            text.remove_prefix(2);
        } else if (text.size() > 1 && text[0] == '0') {
            base = 8;
        }
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size())
            return std::nullopt;
        if (is_signed && v > (negative ? std::uint64_t(1) << 63 : std::uint64_t(INT64_MAX)))
            return std::nullopt;
        return negative ? 0 - v : v;
    }

    bool number_compare(const std::string& name, const Field* field, const std::string& op,
                        std::string_view number)
    {
        std::uint64_t left;
        std::uint32_t size;
        bool is_signed;
        if (!field && (name == "cpu" || name == "CPU" || name == "common_cpu")) {
            left = static_cast<std::uint64_t>(std::int64_t(env_.cpu));
            size = 4;
            is_signed = true;
        } else if (field && !field->is_string() && !field->is_dynamic() &&
                   (field->size == 1 || field->size == 2 || field->size == 4 || field->size == 8)) {
            size = field->size;
            is_signed = field->is_signed;
            if (name == "common_pid")
                left = static_cast<std::uint64_t>(std::int64_t(env_.tid));
            else if (name == "common_type")
                left = Padded::cast(format_.id, size, is_signed);
            else if (field->common)
                fail("accepted the header field '" + name + "'");
            else
                left = record_.number(field->offset, size, is_signed);
        } else {
            fail("accepted a number for '" + name + "'");
        }
        auto parsed = parse(number, is_signed);
        if (!parsed)
            fail("accepted the number '" + std::string(number) + "'");
        std::uint64_t right = Padded::cast(*parsed, size, is_signed);
        auto s = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
        if (op == "==")
            return left == right;
        if (op == "!=")
            return left != right;
        if (op == "&")
            return (left & right) != 0;
        if (op == "<")
            return is_signed ? s(left) < s(right) : left < right;
        if (op == "<=")
            return is_signed ? s(left) <= s(right) : left <= right;
        if (op == ">")
            return is_signed ? s(left) > s(right) : left > right;
        if (op == ">=")
            return is_signed ? s(left) >= s(right) : left >= right;
        fail("accepted '" + op + "' on a number");
    }

    std::string_view text_;
    const EventFormat& format_;
    const Padded& record_;
    const tpkit::FilterEnv& env_;
    std::string user_; // a user string compared
    std::size_t pos_ = 0;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    constexpr std::size_t prefix = 1 + 16 + 1 + 4;
    if (size < prefix)
        return 0;
    const EventFormat& format = events()[data[0] % events().size()];
    char comm[16];
    std::memcpy(comm, data + 1, 16);
    tpkit::FilterEnv env{std::string_view(comm, strnlen(comm, 16)), std::int8_t(data[17]), 0};
    std::memcpy(&env.tid, data + 18, 4);
    // User memory: at an address with its low bit set, its digits (in BPF, a read that may
    // fault: the others).
    env.user_string = [](std::uint64_t address) -> std::optional<std::string> {
        if (!(address & 1))
            return std::nullopt;
        return std::to_string(address >> 1);
    };
    std::string_view rest(reinterpret_cast<const char*>(data) + prefix, size - prefix);
    std::string_view expr = rest.substr(0, rest.find('\0'));
    std::span<const std::byte> record;
    if (expr.size() < rest.size())
        record = {reinterpret_cast<const std::byte*>(rest.data()) + expr.size() + 1,
                  rest.size() - expr.size() - 1};

    tpkit::FilterProgram prog;
    try {
        prog = tpkit::compile_filter(expr, format);
    } catch (const tpkit::Error& e) {
        if (e.code() != tpkit::Exit::usage)
            fail(std::string("not a usage error: ") + e.what());
        return 0;
    }
    bool compiled = tpkit::filter_match(prog, record, env);
    Padded padded(record);
    bool blank = expr.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
    bool direct = blank || Evaluator(expr, format, padded, env).run(); // blank: every event
    if (compiled != direct)
        fail("'" + std::string(expr) + "' on " + format.name + ": the program says " +
             (compiled ? "match" : "no match") + ", the expression " +
             (direct ? "match" : "no match") + "\n" + tpkit::describe_filter(prog));
    return 0;
}
