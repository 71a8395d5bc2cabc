// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/engine/filter.hpp"

#include "tpkit/engine.h"
#include "tpkit/kernel/syscalls.hpp"
#include "tpkit/support/error.hpp"

#include <array>
#include <cctype>
#include <bitset>
#include <cstring>
#include <optional>
#include <vector>

namespace tpkit {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// A comparison, compiled except for where it branches to.
struct Predicate {
    tpkit_filter_insn insn{};
    bool negate = false;     // `!=`, or a `~` pattern written with a leading '!'
    std::bitset<256> items_accept[TPKIT_FILTER_PATTERN_MAX]; // automaton items, when used
    std::uint32_t star_items = 0;
    int item_count = -1;     // -1: no automaton
};

struct Node {
    enum Kind { leaf, all, any, negation } kind;
    int left = -1, right = -1; // children (negation uses left)
    int predicate = -1;
};

// The generic fields every event has in the kernel's filter (kernel/trace/trace_events.c).
enum class Generic { none, cpu, comm };

Generic generic_field(std::string_view name)
{
    if (name == "cpu" || name == "CPU" || name == "common_cpu")
        return Generic::cpu;
    if (name == "comm" || name == "COMM")
        return Generic::comm;
    return Generic::none;
}

// kstrtoull/kstrtoll with base 0: 0x hex (when a hex digit follows), 0 octal, else decimal.
std::optional<std::uint64_t> parse_unsigned(std::string_view text)
{
    unsigned base = 10;
    if (text.size() >= 3 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') &&
        std::isxdigit(static_cast<unsigned char>(text[2]))) {
        base = 16;
        text.remove_prefix(2);
    } else if (!text.empty() && text[0] == '0') {
        base = 8;
    }
    if (text.empty())
        return std::nullopt;
    std::uint64_t value = 0;
    for (char c : text) {
        unsigned digit;
        if (is_digit(c))
            digit = c - '0';
        else if (c >= 'a' && c <= 'f')
            digit = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            digit = c - 'A' + 10;
        else
            return std::nullopt;
        if (digit >= base)
            return std::nullopt;
        if (value > (UINT64_MAX - digit) / base)
            return std::nullopt; // overflow
        value = value * base + digit;
    }
    return value;
}

std::optional<std::uint64_t> parse_signed(std::string_view text)
{
    bool negative = !text.empty() && text[0] == '-';
    if (negative)
        text.remove_prefix(1);
    auto magnitude = parse_unsigned(text);
    if (!magnitude)
        return std::nullopt;
    if (negative) {
        if (*magnitude > (std::uint64_t(1) << 63))
            return std::nullopt;
        return std::uint64_t(0) - *magnitude;
    }
    if (*magnitude > std::uint64_t(INT64_MAX))
        return std::nullopt;
    return magnitude;
}

// The constant as the kernel compares it: cast to the field's type.
std::uint64_t truncate_to_field(std::uint64_t value, std::uint32_t size, bool is_signed)
{
    if (size >= 8)
        return value;
    unsigned shift = 64 - size * 8;
    if (is_signed)
        return static_cast<std::uint64_t>(static_cast<std::int64_t>(value << shift) >> shift);
    return (value << shift) >> shift;
}

class Parser {
public:
    Parser(std::string_view text, const EventFormat& format) : text_(text), format_(format) {}

    FilterProgram compile()
    {
        FilterProgram prog{};
        prog.event_id = format_.id;
        skip_space();
        if (pos_ == text_.size())
            return prog; // blank: match everything
        int root = parse_or();
        skip_space();
        if (pos_ < text_.size()) {
            if (text_[pos_] == ')')
                fail("unbalanced ')'", pos_);
            fail("expected '&&', '||' or ')'", pos_);
        }
        emit(prog, root);
        return prog;
    }

private:
    [[noreturn]] void fail(const std::string& what, std::size_t at) const
    {
        throw Error(Exit::usage, "filter: " + what + " at column " + std::to_string(at + 1));
    }

    void skip_space()
    {
        while (pos_ < text_.size() && is_space(text_[pos_]))
            ++pos_;
    }

    bool at(std::string_view token)
    {
        skip_space();
        return text_.substr(pos_, token.size()) == token;
    }

    int add(Node node)
    {
        nodes_.push_back(node);
        return static_cast<int>(nodes_.size() - 1);
    }

    int parse_or()
    {
        int left = parse_and();
        while (at("||")) {
            pos_ += 2;
            left = add({Node::any, left, parse_and()});
        }
        return left;
    }

    int parse_and()
    {
        int left = parse_unary();
        while (at("&&")) {
            pos_ += 2;
            left = add({Node::all, left, parse_unary()});
        }
        return left;
    }

    // Each '!' and '(' is one more level of recursion here: bounded, so that no input can
    // exhaust the stack. Real filters nest a few levels; 64 comparisons fit in far fewer than this.
    static constexpr int max_nesting = 100;

    void nest(std::size_t at)
    {
        if (++nesting_ > max_nesting)
            fail("more than " + std::to_string(max_nesting) + " nested '(' and '!'", at);
    }

    int parse_unary()
    {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == '!') {
            nest(pos_++);
            int inner = parse_unary();
            --nesting_;
            return add({Node::negation, inner});
        }
        if (pos_ < text_.size() && text_[pos_] == '(') {
            std::size_t open = pos_;
            nest(pos_++);
            int inner = parse_or();
            --nesting_;
            skip_space();
            if (pos_ >= text_.size())
                fail("missing ')' for the '('", open);
            if (text_[pos_] != ')')
                fail("expected '&&', '||' or ')'", pos_);
            ++pos_;
            return inner;
        }
        Node leaf{Node::leaf};
        leaf.predicate = parse_predicate();
        return add(leaf);
    }

    int parse_predicate()
    {
        skip_space();
        std::size_t name_at = pos_;
        while (pos_ < text_.size() && (is_alnum(text_[pos_]) || text_[pos_] == '_'))
            ++pos_;
        std::string_view name = text_.substr(name_at, pos_ - name_at);
        if (name.empty()) {
            if (name_at == text_.size())
                fail("expected a field name, found the end", name_at);
            fail("expected a field name", name_at);
        }
        if (predicates_.size() == TPKIT_FILTER_MAX_INSNS)
            fail("more than " + std::to_string(TPKIT_FILTER_MAX_INSNS) + " comparisons", name_at);
        const Field* field = format_.field(name);
        Generic generic = field ? Generic::none : generic_field(name);
        if (!field && generic == Generic::none)
            fail("unknown field '" + std::string(name) + "'", name_at);
        HeaderField header = field ? header_field(*field) : HeaderField::none;
        if (header == HeaderField::unavailable)
            fail(header_field_unavailable(name), name_at);

        skip_space();
        std::size_t op_at = pos_;
        static constexpr std::string_view ops[] = {"~", "!=", "==", "<=", "<", ">=", ">", "&"};
        std::string_view op;
        for (std::string_view candidate : ops)
            if (text_.substr(pos_, candidate.size()) == candidate) {
                op = candidate;
                break;
            }
        if (op.empty() || (op == "&" && text_.substr(pos_, 2) == "&&"))
            fail("expected an operator (== != < <= > >= & ~) after '" + std::string(name) + "'",
                 op_at);
        pos_ += op.size();

        skip_space();
        std::size_t value_at = pos_;
        Predicate p;
        if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
            char quote = text_[pos_];
            std::size_t end = text_.find(quote, pos_ + 1);
            if (end == std::string_view::npos)
                fail("missing closing quote for the string", value_at);
            std::string_view str = text_.substr(pos_ + 1, end - pos_ - 1);
            pos_ = end + 1;
            string_predicate(p, name, field, generic, op, op_at, str, value_at);
        } else if (pos_ < text_.size() && (is_digit(text_[pos_]) || text_[pos_] == '-')) {
            ++pos_;
            while (pos_ < text_.size() && is_alnum(text_[pos_]))
                ++pos_;
            std::string_view number = text_.substr(value_at, pos_ - value_at);
            number_predicate(p, name, field, generic, header, op, op_at, number, value_at);
        } else if (pos_ == text_.size()) {
            fail("expected a value after '" + std::string(op) + "', found the end", value_at);
        } else {
            fail("expected a number or a quoted string", value_at);
        }
        predicates_.push_back(p);
        return static_cast<int>(predicates_.size() - 1);
    }

    void number_predicate(Predicate& p, std::string_view name, const Field* field, Generic generic,
                          HeaderField header, std::string_view op, std::size_t op_at,
                          std::string_view number, std::size_t value_at)
    {
        bool is_signed = true;
        std::uint32_t size = 4;
        auto& insn = p.insn;
        if (generic == Generic::comm || (field && field->is_string()))
            fail("string field '" + std::string(name) + "' needs a quoted string", value_at);
        if (op == "~")
            fail("'~' needs a string field, '" + std::string(name) + "' is a number", op_at);
        if (generic == Generic::cpu) {
            if (op == "&")
                fail("'&' does not apply to '" + std::string(name) + "'", op_at);
            insn.source = TPKIT_FILTER_SRC_CPU;
        } else {
            bool numeric_size = field->size == 1 || field->size == 2 || field->size == 4 ||
                                field->size == 8;
            if (field->is_dynamic() || !numeric_size)
                fail("field '" + std::string(name) + "' (" + field->type +
                         ") cannot be compared with a number",
                     value_at);
            is_signed = field->is_signed;
            size = field->size;
            insn.source = is_signed ? TPKIT_FILTER_SRC_SIGNED : TPKIT_FILTER_SRC_UNSIGNED;
            insn.offset = field->offset;
            // Typed as the format says (int, unsigned short), valued as the kernel will write them.
            if (header == HeaderField::pid)
                insn.source = TPKIT_FILTER_SRC_TID;
            else if (header == HeaderField::type)
                insn.source = TPKIT_FILTER_SRC_EVENT_ID;
        }
        auto value = is_signed ? parse_signed(number) : parse_unsigned(number);
        if (!value) {
            if (!is_signed && number[0] == '-')
                fail("negative number for unsigned field '" + std::string(name) + "'", value_at);
            fail("invalid number '" + std::string(number) + "'", value_at);
        }
        insn.size = static_cast<__u16>(size);
        insn.value = truncate_to_field(*value, size, is_signed);
        if (op == "==" || op == "!=") {
            insn.op = TPKIT_FILTER_OP_EQ;
            p.negate = op == "!=";
        } else if (op == "<") {
            insn.op = TPKIT_FILTER_OP_LT;
        } else if (op == "<=") {
            insn.op = TPKIT_FILTER_OP_LE;
        } else if (op == ">") {
            insn.op = TPKIT_FILTER_OP_GT;
        } else if (op == ">=") {
            insn.op = TPKIT_FILTER_OP_GE;
        } else {
            insn.op = TPKIT_FILTER_OP_BAND;
        }
    }

    void string_predicate(Predicate& p, std::string_view name, const Field* field, Generic generic,
                          std::string_view op, std::size_t op_at, std::string_view str,
                          std::size_t value_at)
    {
        auto& insn = p.insn;
        if (op != "==" && op != "!=" && op != "~")
            fail("'" + std::string(op) + "' does not apply to strings", op_at);
        if (generic == Generic::cpu)
            fail("field '" + std::string(name) + "' is a number, not a string", value_at);
        bool user_string = field && is_syscall_user_string(format_, *field);
        if (field && !field->is_string() && !user_string) {
            if (field->is_pointer())
                fail("pointer field '" + std::string(name) +
                         "' compares as a number: tpkit reads the string only of a syscall's "
                         "`const char *` argument",
                     value_at);
            fail("field '" + std::string(name) + "' is a number, not a string", value_at);
        }
        if (str.size() >= TPKIT_FILTER_PATTERN_MAX)
            fail("string longer than " + std::to_string(TPKIT_FILTER_PATTERN_MAX - 1) + " bytes",
                 value_at);
        if (str.find('\0') != std::string_view::npos)
            fail("NUL byte in the string", value_at);

        if (generic == Generic::comm) {
            insn.source = TPKIT_FILTER_SRC_COMM;
            insn.size = TPKIT_FILTER_COMM_LEN;
        } else if (user_string) {
            insn.offset = field->offset;
            insn.size = static_cast<__u16>(field->size);
            insn.source = TPKIT_FILTER_SRC_STR_USER;
        } else {
            insn.offset = field->offset;
            insn.size = static_cast<__u16>(field->size);
            insn.source = field->kind == FieldKind::data_loc  ? TPKIT_FILTER_SRC_STR_DATA_LOC
                          : field->kind == FieldKind::rel_loc ? TPKIT_FILTER_SRC_STR_REL_LOC
                                                              : TPKIT_FILTER_SRC_STR_FIXED;
        }

        // The kernel's filter_parse_regex(): how a `~` pattern is matched.
        enum { full, front, middle, end, glob } type = full;
        std::string_view search = str;
        p.negate = op == "!=";
        if (op == "~") {
            if (!search.empty() && search[0] == '!') {
                p.negate = true;
                search.remove_prefix(1);
            }
            if (search.empty() || !is_digit(search[0])) { // a leading digit: compared literally
                for (std::size_t i = 0; i < search.size(); ++i) {
                    char c = search[i];
                    if (c == '*') {
                        if (i == 0) {
                            type = end;
                        } else if (i == search.size() - 1) {
                            type = type == end ? middle : front;
                            search = search.substr(0, i);
                            break;
                        } else {
                            type = glob;
                            break;
                        }
                    } else if (c == '[' || c == '?' || c == '\\') {
                        type = glob;
                        break;
                    }
                }
                if (type != glob && !search.empty() && search[0] == '*')
                    search.remove_prefix(1);
            }
        }
        insn.op = type == full    ? TPKIT_FILTER_OP_STR_FULL
                  : type == front ? TPKIT_FILTER_OP_STR_FRONT
                  : type == end   ? TPKIT_FILTER_OP_STR_END
                  : type == glob  ? TPKIT_FILTER_OP_STR_GLOB
                                  : TPKIT_FILTER_OP_STR_SCAN;
        std::memcpy(insn.pattern, search.data(), search.size());
        insn.pattern_len = static_cast<__u8>(search.size());
        if (type == glob)
            glob_items(p, search);
        else if (type == middle)
            scan_items(p, search);
        if (p.item_count >= 0 && ++automata_ > TPKIT_FILTER_MAX_AUTOMATA)
            fail("more than " + std::to_string(TPKIT_FILTER_MAX_AUTOMATA) +
                     " patterns with ?, [, \\, or * inside or on both ends",
                 value_at);
    }

    static void add_item(Predicate& p, const std::bitset<256>& accept)
    {
        p.items_accept[p.item_count++] = accept;
    }

    static void add_star(Predicate& p)
    {
        if (p.item_count > 0 && (p.star_items >> (p.item_count - 1) & 1))
            return; // "**" is "*"
        p.star_items |= 1u << p.item_count;
        p.items_accept[p.item_count++].reset();
    }

    static std::bitset<256> byte_set(unsigned char c)
    {
        std::bitset<256> s;
        s.set(c);
        return s;
    }

    // "*TEXT*" as the kernel runs it (strnstr over the whole length).
    static void scan_items(Predicate& p, std::string_view text)
    {
        p.item_count = 0;
        add_star(p);
        for (char c : text)
            add_item(p, byte_set(static_cast<unsigned char>(c)));
        add_star(p);
    }

    // The kernel's glob_match() syntax (lib/glob.c) as a list of items.
    static void glob_items(Predicate& p, std::string_view pat)
    {
        p.item_count = 0;
        auto at = [&](std::size_t i) -> unsigned char {
            return i < pat.size() ? static_cast<unsigned char>(pat[i]) : 0;
        };
        std::size_t i = 0;
        while (i < pat.size()) {
            unsigned char d = at(i++);
            if (d == '?') {
                std::bitset<256> any;
                any.set();
                any.reset(0);
                add_item(p, any);
            } else if (d == '*') {
                add_star(p);
            } else if (d == '[') {
                bool inverted = at(i) == '!';
                std::size_t j = i + inverted;
                std::bitset<256> set;
                bool malformed = false;
                unsigned char a = at(j++);
                do {
                    unsigned char b = a;
                    if (a == 0) {
                        malformed = true;
                        break;
                    }
                    if (at(j) == '-' && at(j + 1) != ']') {
                        b = at(j + 1);
                        if (b == 0) {
                            malformed = true;
                            break;
                        }
                        j += 2;
                    }
                    for (unsigned c = a; c <= b; ++c)
                        set.set(c);
                } while ((a = at(j++)) != ']');
                if (malformed) { // an unclosed class: '[' is an ordinary character
                    add_item(p, byte_set('['));
                    continue;
                }
                if (inverted)
                    set.flip();
                set.reset(0); // a class never matches the end of the string
                add_item(p, set);
                i = j;
            } else if (d == '\\') {
                if (i < pat.size()) // a trailing backslash matches the end, like no character
                    add_item(p, byte_set(at(i++)));
            } else {
                add_item(p, byte_set(d));
            }
        }
    }

    // Branch code, as the kernel builds it: each predicate jumps on one outcome and falls through
    // to the next instruction on the other. Labels are resolved once all code is placed.
    struct Code {
        std::vector<int> insn_label;   // per instruction: the label it jumps to
        std::vector<int> label_at;     // per label: the instruction it names
        std::vector<Predicate*> preds; // per instruction
        std::vector<bool> branch_on;
    };

    static constexpr int true_label = 0, false_label = 1;

    void generate(Code& code, int node, int t, int f, bool falls_to_true)
    {
        const Node& n = nodes_[node];
        switch (n.kind) {
        case Node::leaf: {
            Predicate& p = predicates_[n.predicate];
            bool jump_when = !falls_to_true; // falls through to t: jump to f when false
            code.preds.push_back(&p);
            code.insn_label.push_back(falls_to_true ? f : t);
            code.branch_on.push_back(jump_when != p.negate);
            break;
        }
        case Node::all: {
            int next = new_label(code);
            generate(code, n.left, next, f, true);
            code.label_at[next] = static_cast<int>(code.preds.size());
            generate(code, n.right, t, f, falls_to_true);
            break;
        }
        case Node::any: {
            int next = new_label(code);
            generate(code, n.left, t, next, false);
            code.label_at[next] = static_cast<int>(code.preds.size());
            generate(code, n.right, t, f, falls_to_true);
            break;
        }
        case Node::negation:
            generate(code, n.left, f, t, !falls_to_true);
            break;
        }
    }

    static int new_label(Code& code)
    {
        code.label_at.push_back(-1);
        return static_cast<int>(code.label_at.size() - 1);
    }

    void emit(FilterProgram& prog, int root)
    {
        Code code;
        code.label_at = {-1, -1};
        generate(code, root, true_label, false_label, true);
        int len = static_cast<int>(code.preds.size());
        code.label_at[true_label] = len;
        code.label_at[false_label] = len + 1;
        prog.len = static_cast<__u32>(len);
        int automaton = 0;
        for (int i = 0; i < len; ++i) {
            Predicate& p = *code.preds[i];
            tpkit_filter_insn& insn = prog.insns[i];
            insn = p.insn;
            insn.branch_on = code.branch_on[i];
            insn.target = static_cast<__u8>(code.label_at[code.insn_label[i]]);
            if (p.item_count >= 0) {
                auto& a = prog.automata[automaton];
                for (int item = 0; item < p.item_count; ++item)
                    for (unsigned c = 0; c < 256; ++c)
                        if (p.items_accept[item].test(c))
                            a.accept[c] |= 1u << item;
                a.star = p.star_items;
                insn.automaton = static_cast<__u8>(automaton++);
                insn.accept_bit = static_cast<__u8>(p.item_count);
            }
        }
    }

    std::string_view text_;
    const EventFormat& format_;
    std::size_t pos_ = 0;
    int nesting_ = 0; // '!' and '(' being parsed
    std::vector<Node> nodes_;
    std::vector<Predicate> predicates_;
    int automata_ = 0;
};

// Bytes [offset, offset + n) of the record; zeros past its end.
void read_bytes(std::span<const std::byte> record, std::uint64_t offset, std::size_t n, void* out)
{
    auto* dst = static_cast<unsigned char*>(out);
    std::memset(dst, 0, n);
    if (offset >= record.size())
        return;
    std::size_t avail = std::min<std::uint64_t>(n, record.size() - offset);
    std::memcpy(dst, record.data() + offset, avail);
}

// A string operand: its bytes come from the record or from the environment (comm).
struct StringSource {
    std::span<const std::byte> bytes;
    std::uint64_t start = 0;
    std::uint32_t len = 0;

    void read(std::uint64_t from, std::size_t n, void* out) const
    {
        read_bytes(bytes, start + from, n, out);
    }
};

bool prefix_equal(const StringSource& s, std::uint64_t from, std::uint32_t n,
                  const tpkit_filter_insn& insn, bool stop_at_nul)
{
    char bytes[TPKIT_FILTER_PATTERN_MAX];
    n = std::min<std::uint32_t>(n, TPKIT_FILTER_PATTERN_MAX);
    s.read(from, n, bytes);
    for (std::uint32_t i = 0; i < n; ++i) {
        if (bytes[i] != insn.pattern[i])
            return false;
        if (stop_at_nul && bytes[i] == '\0')
            break;
    }
    return true;
}

bool automaton_match(const StringSource& s, std::uint32_t n, bool to_nul,
                     const FilterProgram& prog, const tpkit_filter_insn& insn)
{
    if (insn.automaton >= TPKIT_FILTER_MAX_AUTOMATA)
        return false;
    const auto& a = prog.automata[insn.automaton];
    n = std::min<std::uint32_t>(n, TPKIT_FILTER_STRING_MAX);
    std::uint32_t state = 1;
    state |= (state & a.star) << 1;
    unsigned char bytes[256];
    bool at_nul = false;
    for (std::uint32_t from = 0; from < n && state && !at_nul; from += sizeof(bytes)) {
        std::uint32_t size = std::min<std::uint32_t>(n - from, sizeof(bytes));
        s.read(from, size, bytes);
        for (std::uint32_t i = 0; i < size; ++i) {
            unsigned char c = bytes[i];
            if (to_nul && c == 0) {
                at_nul = true;
                break;
            }
            state = (state & a.star) | ((state & a.accept[c]) << 1);
            state |= (state & a.star) << 1;
        }
    }
    return state & (1u << (insn.accept_bit & 31));
}

bool string_holds(const FilterProgram& prog, const tpkit_filter_insn& insn,
                  std::span<const std::byte> record, const FilterEnv& env)
{
    std::array<std::byte, TPKIT_FILTER_COMM_LEN> comm{};
    std::vector<std::byte> user;
    StringSource s{record, insn.offset, insn.size};
    switch (insn.source) {
    case TPKIT_FILTER_SRC_COMM:
        std::memcpy(comm.data(), env.comm.data(), std::min(env.comm.size(), comm.size()));
        s = {comm, 0, TPKIT_FILTER_COMM_LEN};
        break;
    case TPKIT_FILTER_SRC_STR_DATA_LOC:
    case TPKIT_FILTER_SRC_STR_REL_LOC: {
        std::uint32_t loc = 0;
        read_bytes(record, insn.offset, sizeof(loc), &loc);
        s.len = loc >> 16;
        s.start = loc & 0xffff;
        if (insn.source == TPKIT_FILTER_SRC_STR_REL_LOC)
            s.start += insn.offset + sizeof(loc);
        break;
    }
    case TPKIT_FILTER_SRC_STR_USER: {
        // As BPF reads it: the first TPKIT_USER_STR_MAX - 1 bytes and a NUL, a fault as "".
        std::uint64_t address = 0;
        read_bytes(record, insn.offset, sizeof(address), &address);
        std::optional<std::string> text = env.user_string ? env.user_string(address) : std::nullopt;
        std::size_t n = text ? std::min<std::size_t>(strnlen(text->data(), text->size()),
                                                     TPKIT_USER_STR_MAX - 1)
                             : 0;
        user.assign(n + 1, std::byte{0});
        if (n)
            std::memcpy(user.data(), text->data(), n);
        s = {user, 0, static_cast<std::uint32_t>(n + 1)};
        break;
    }
    }
    std::uint32_t len = s.len, plen = insn.pattern_len;
    switch (insn.op) {
    case TPKIT_FILTER_OP_STR_FULL:
        return prefix_equal(s, 0, len && len < plen + 1 ? len : plen + 1, insn, true);
    case TPKIT_FILTER_OP_STR_FRONT:
        if (len && len < plen)
            return false;
        return prefix_equal(s, 0, plen, insn, true);
    case TPKIT_FILTER_OP_STR_END:
        if (len == 0 || len - 1 < plen)
            return false;
        return prefix_equal(s, len - 1 - plen, plen, insn, false);
    case TPKIT_FILTER_OP_STR_GLOB:
    case TPKIT_FILTER_OP_STR_SCAN:
        return automaton_match(s, len ? len : TPKIT_FILTER_STRING_MAX,
                               insn.op == TPKIT_FILTER_OP_STR_GLOB || len == 0, prog, insn);
    }
    return false;
}

bool is_signed_source(std::uint8_t source)
{
    return source == TPKIT_FILTER_SRC_SIGNED || source == TPKIT_FILTER_SRC_CPU ||
           source == TPKIT_FILTER_SRC_TID;
}

bool number_holds(const FilterProgram& prog, const tpkit_filter_insn& insn,
                  std::span<const std::byte> record, const FilterEnv& env)
{
    std::uint64_t field = 0;
    if (insn.source == TPKIT_FILTER_SRC_CPU) {
        field = static_cast<std::uint64_t>(static_cast<std::int64_t>(env.cpu));
    } else if (insn.source == TPKIT_FILTER_SRC_TID) {
        field = static_cast<std::uint64_t>(static_cast<std::int64_t>(env.tid));
    } else if (insn.source == TPKIT_FILTER_SRC_EVENT_ID) {
        field = static_cast<std::uint16_t>(prog.event_id);
    } else {
        std::uint32_t size = std::min<std::uint32_t>(insn.size, 8);
        read_bytes(record, insn.offset, size, &field); // little-endian, as in BPF
        if (insn.source == TPKIT_FILTER_SRC_SIGNED)
            field = truncate_to_field(field, size, true);
    }
    std::uint64_t value = insn.value;
    bool is_signed = is_signed_source(insn.source);
    auto s = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
    switch (insn.op) {
    case TPKIT_FILTER_OP_EQ:
        return field == value;
    case TPKIT_FILTER_OP_LT:
        return is_signed ? s(field) < s(value) : field < value;
    case TPKIT_FILTER_OP_LE:
        return is_signed ? s(field) <= s(value) : field <= value;
    case TPKIT_FILTER_OP_GT:
        return is_signed ? s(field) > s(value) : field > value;
    case TPKIT_FILTER_OP_GE:
        return is_signed ? s(field) >= s(value) : field >= value;
    case TPKIT_FILTER_OP_BAND:
        return (field & value) != 0;
    }
    return false;
}

bool is_number_source(std::uint8_t source)
{
    return source == TPKIT_FILTER_SRC_UNSIGNED || source == TPKIT_FILTER_SRC_SIGNED ||
           source == TPKIT_FILTER_SRC_CPU || source == TPKIT_FILTER_SRC_TID ||
           source == TPKIT_FILTER_SRC_EVENT_ID;
}

} // namespace

FilterProgram compile_filter(std::string_view expr, const EventFormat& format)
{
    return Parser(expr, format).compile();
}

HeaderField header_field(const Field& f)
{
    if (!f.common)
        return HeaderField::none;
    if (f.name == "common_type")
        return HeaderField::type;
    if (f.name == "common_pid")
        return HeaderField::pid;
    return HeaderField::unavailable;
}

std::string header_field_unavailable(std::string_view field)
{
    return "'" + std::string(field) + "' is not visible to BPF programs at a tracepoint (the kernel "
           "fills it in after they run, from state BPF cannot read)";
}

bool filter_match(const FilterProgram& prog, std::span<const std::byte> record,
                  const FilterEnv& env)
{
    if (prog.len > TPKIT_FILTER_MAX_INSNS)
        return false;
    std::uint32_t pc = 0;
    while (pc < prog.len) {
        const tpkit_filter_insn& insn = prog.insns[pc];
        bool holds = is_number_source(insn.source) ? number_holds(prog, insn, record, env)
                                                   : string_holds(prog, insn, record, env);
        std::uint32_t next = holds == static_cast<bool>(insn.branch_on) ? insn.target : pc + 1;
        if (next <= pc)
            return false; // a malformed program: never loop
        pc = next;
    }
    return pc == prog.len;
}

std::string describe_filter(const FilterProgram& prog)
{
    static const char* const ops[] = {"==",      "<",         "<=",      ">",    ">=",  "&",
                                      "strfull", "strfront", "strend", "glob", "scan"};
    static const char* const sources[] = {"u",       "s",       "cpu",  "char[]", "data_loc",
                                          "rel_loc", "comm",    "tid",  "type",   "user"};
    std::string out;
    for (std::uint32_t i = 0; i < prog.len && i < TPKIT_FILTER_MAX_INSNS; ++i) {
        const auto& insn = prog.insns[i];
        out += std::to_string(i) + ": ";
        out += insn.source < std::size(sources) ? sources[insn.source] : "?";
        out += std::to_string(insn.size) + "@" + std::to_string(insn.offset) + " ";
        out += insn.op < std::size(ops) ? ops[insn.op] : "?";
        if (is_number_source(insn.source))
            out += " " + std::to_string(static_cast<std::int64_t>(insn.value));
        else
            out += " \"" + std::string(insn.pattern, insn.pattern_len) + "\"";
        out += std::string(" ; if ") + (insn.branch_on ? "true" : "false") + " goto ";
        if (insn.target == prog.len)
            out += "MATCH";
        else if (insn.target == prog.len + 1)
            out += "DROP";
        else
            out += std::to_string(insn.target);
        out += "\n";
    }
    return out;
}

} // namespace tpkit
