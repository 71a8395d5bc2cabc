// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "engine/kernel_text.hpp"

#include "tpkit/kernel/btf.hpp"
#include "tpkit/kernel/symbols.hpp"
#include "tpkit/kernel/syscalls.hpp"
#include "tpkit/support/json.hpp"

#include <fmt/format.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

namespace tpkit {
namespace {

// What resolve() hands libtraceevent for an address: both of the kernel's forms between markers,
// so that the text can be finished once libtraceevent has said which it wanted: for %pS it
// appends "+0x0" (the offset from the address resolve() gives back, the address itself).
constexpr char symbol_start = '\x01', symbol_short = '\x02', symbol_end = '\x03';
constexpr std::string_view offset_suffix = "+0x0";

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::uint64_t read_unsigned(const Field& f, std::span<const std::byte> record)
{
    std::uint64_t v = 0;
    if (std::uint64_t(f.offset) + f.size <= record.size())
        std::memcpy(&v, record.data() + f.offset, std::min<std::uint32_t>(f.size, 8));
    if (f.is_signed && f.size < 8 && f.size > 0) {
        unsigned shift = 64 - 8 * f.size;
        v = static_cast<std::uint64_t>(static_cast<std::int64_t>(v << shift) >> shift);
    }
    return v;
}

bool is_syscall_event(const EventFormat& format) { return format.system == "syscalls"; }

KernelText::SyscallArgs running_kernels_syscall_args()
{
    utsname name{};
    int major = 0, minor = 0;
    if (uname(&name) != 0 || std::sscanf(name.release, "%d.%d", &major, &minor) != 2)
        return KernelText::SyscallArgs::decimal_below_10;
    return std::pair(major, minor) >= std::pair(6, 18) ? KernelText::SyscallArgs::decimal_below_10
                                                       : KernelText::SyscallArgs::hex;
}

// The kernel's trace_print_symbols_seq(): the first name of the value, else the value in hex.
void append_symbolic(std::string& out, std::uint64_t value, const tep_print_flag_sym* symbols)
{
    for (const auto* s = symbols; s; s = s->next)
        if (std::strtoull(s->value, nullptr, 0) == value) {
            out += s->str;
            return;
        }
    fmt::format_to(std::back_inserter(out), "0x{:x}", value);
}

// The kernel's trace_print_flags_seq(): each name whose bits are all set, in the list's order,
// its bits then taken away; what is left over in hex.
void append_flags(std::string& out, std::uint64_t value, const char* delim,
                  const tep_print_flag_sym* flags)
{
    bool first = true;
    for (const auto* f = flags; f && value; f = f->next) {
        std::uint64_t mask = std::strtoull(f->value, nullptr, 0);
        if ((value & mask) != mask)
            continue;
        value &= ~mask;
        if (!first && delim)
            out += delim;
        first = false;
        out += f->str;
    }
    if (value) {
        if (!first && delim)
            out += delim;
        fmt::format_to(std::back_inserter(out), "0x{:x}", value);
    }
}

// The field a print argument shows, through casts: `(unsigned long)REC->call_site`.
const tep_format_field* plain_field(const tep_print_arg* arg)
{
    while (arg && arg->type == TEP_PRINT_TYPE)
        arg = arg->typecast.item;
    return arg && arg->type == TEP_PRINT_FIELD ? arg->field.field : nullptr;
}

// The conversions of a printf format, in order, as the letters after '%' that matter here:
// "pS", "ps", or the conversion letter; one "*" entry for each '*' width or precision.
std::vector<std::string> conversions(std::string_view format)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < format.size(); i++) {
        if (format[i] != '%')
            continue;
        if (++i < format.size() && format[i] == '%')
            continue;
        while (i < format.size() && std::strchr("-+ #0123456789.*hlzjLt", format[i])) {
            if (format[i] == '*')
                out.emplace_back("*");
            i++;
        }
        if (i >= format.size())
            break;
        if (format[i] == 'p' && i + 1 < format.size() && (format[i + 1] == 'S' || format[i + 1] == 's'))
            out.push_back(std::string("p") + format[i + 1]);
        else
            out.emplace_back(1, format[i]);
    }
    return out;
}

// The C priority of a binary operator as libtraceevent numbers them (lower binds tighter), 0 for
// any other.
int binary_priority(std::string_view op)
{
    static constexpr std::pair<std::string_view, int> table[] = {
        {"*", 6},  {"/", 6},  {"%", 6},  {"+", 7},  {"-", 7},  {"<<", 8}, {">>", 8},
        {"<", 9},  {">", 9},  {"<=", 9}, {">=", 9}, {"==", 10}, {"!=", 10}, {"&", 11},
        {"^", 12}, {"|", 13}, {"&&", 14}, {"||", 15}};
    for (auto [name, priority] : table)
        if (op == name)
            return priority;
    return 0;
}

bool is_binary(const tep_print_arg* arg)
{
    return arg && arg->type == TEP_PRINT_OP && arg->op.left && arg->op.left->type != TEP_PRINT_NULL &&
           binary_priority(arg->op.op) != 0;
}

// libtraceevent groups operators of one priority from the right: `a - b - c` as a - (b - c).
// C groups them from the left: rotate each such chain (parenthesized groups are typecasts by
// then, see prepare_print_fmt, and stay whole).
void group_from_the_left(tep_print_arg* arg)
{
    if (!arg)
        return;
    while (is_binary(arg) && is_binary(arg->op.right) &&
           binary_priority(arg->op.op) == binary_priority(arg->op.right->op.op)) {
        // a X (b Y c) -> (a X b) Y c, in place: the node stays the top of its tree.
        tep_print_arg* right = arg->op.right;
        tep_print_arg* c = right->op.right;
        std::swap(arg->op.op, right->op.op);
        std::swap(arg->op.prio, right->op.prio);
        right->op.right = right->op.left;
        right->op.left = arg->op.left;
        arg->op.left = right;
        arg->op.right = c;
    }
    switch (arg->type) {
    case TEP_PRINT_OP:
        group_from_the_left(arg->op.left);
        group_from_the_left(arg->op.right);
        break;
    case TEP_PRINT_TYPE:
        group_from_the_left(arg->typecast.item);
        break;
    case TEP_PRINT_FLAGS:
        group_from_the_left(arg->flags.field);
        break;
    case TEP_PRINT_SYMBOL:
        group_from_the_left(arg->symbol.field);
        break;
    case TEP_PRINT_FUNC:
        for (tep_print_arg* a = arg->func.args; a; a = a->next)
            group_from_the_left(a);
        break;
    default:
        break;
    }
}

// What the functions tpkit adds to print fmts (jiffies, kernel strings) read: the record being
// printed. libtraceevent calls them without a context of their own.
struct Printing {
    const EventFormat* format;
    std::span<const std::byte> record;
    const UserStrings* strings;
    std::uint64_t jiffies;
};
thread_local const Printing* printing = nullptr;

char jiffies_function[] = "__tpkit_jiffies";
char kernel_string_function[] = "__tpkit_kernel_string";

unsigned long long print_jiffies(trace_seq*, unsigned long long*)
{
    return printing ? printing->jiffies : 0;
}

// The string a `char *` field points to, read at the event: what the kernel's %s prints, with
// its "(null)" and "(efault)".
unsigned long long print_kernel_string(trace_seq* s, unsigned long long* args)
{
    std::uint64_t address = args[0];
    if (!address) {
        trace_seq_puts(s, "(null)");
        return address;
    }
    std::optional<UserString> text;
    if (printing)
        for (const Field& f : printing->format->fields)
            if (is_kernel_string(*printing->format, f) && read_unsigned(f, printing->record) == address &&
                (text = printing->strings->find(*printing->format, f)))
                break;
    if (text && !text->fault)
        trace_seq_printf(s, "%.*s", static_cast<int>(text->text.size()), text->text.data());
    else
        trace_seq_puts(s, "(efault)");
    return address;
}

} // namespace

struct KernelText::Event {
    tep_event* parsed = nullptr; // null: libtraceevent could not parse it
    enum class Extra { symbolic, flags, symbol, symbol_with_offset };
    struct FieldExtra {
        Extra kind;
        const tep_print_arg* arg;
        std::string zero_text = {}; // `REC->f ? __print_flags(REC->f, ...) : "none"`: "none"
    };
    std::map<std::string, FieldExtra, std::less<>> extras;
};

KernelText::KernelText(std::filesystem::path kallsyms, std::filesystem::path btf)
    : tep_(tep_alloc()), syscall_args_(running_kernels_syscall_args()), seq_(std::make_unique<trace_seq>()), kallsyms_path_(std::move(kallsyms)),
      btf_path_(std::move(btf))
{
    if (!tep_)
        throw std::bad_alloc();
    trace_seq_init(seq_.get());
    tep_set_loglevel(TEP_LOG_NONE); // a print fmt it cannot follow falls back to the fields
    tep_set_long_size(tep_, sizeof(long));
    tep_set_page_size(tep_, 4096);
    tep_set_file_bigendian(tep_, TEP_LITTLE_ENDIAN);
    tep_set_local_bigendian(tep_, TEP_LITTLE_ENDIAN);
    tep_set_function_resolver(tep_, &KernelText::resolve, this);
    // jiffies takes an argument it ignores: libtraceevent parses a call without any wrongly.
    tep_register_print_function(tep_, print_jiffies, TEP_FUNC_ARG_LONG, jiffies_function,
                                TEP_FUNC_ARG_LONG, TEP_FUNC_ARG_VOID);
    tep_register_print_function(tep_, print_kernel_string, TEP_FUNC_ARG_LONG,
                                kernel_string_function, TEP_FUNC_ARG_LONG, TEP_FUNC_ARG_VOID);
}

KernelText::~KernelText()
{
    trace_seq_destroy(seq_.get());
    tep_free(tep_);
}

std::optional<std::int64_t> KernelText::enumerator(std::string_view name)
{
    if (!enumerators_) {
        try {
            enumerators_ = std::make_unique<std::map<std::string, std::int64_t, std::less<>>>(
                (btf_path_.empty() ? Btf::load_vmlinux() : Btf::load(btf_path_)).enumerators());
        } catch (const std::exception&) {
            // No BTF: such names stay names, and libtraceevent prints their values as numbers.
            enumerators_ = std::make_unique<std::map<std::string, std::int64_t, std::less<>>>();
        }
    }
    auto it = enumerators_->find(name);
    if (it == enumerators_->end())
        return std::nullopt;
    return it->second;
}

// The format text with its print fmt made the kernel's where libtraceevent differs:
//  - plain %p as %016lx (the kernel's %px);
//  - %#x as 0x%x (the width less 2): the kernel's vsnprintf prints 0x0 for zero, C's 0;
//  - a tab or newline in the format as \t or \n: libtraceevent cannot parse them raw (maple_tree);
//  - a parenthesized right operand, `x & (A | B)`, as `x & (u64)(A | B)`: libtraceevent parses
//    the group as x & A | B; a typecast it keeps whole (u64: no change to the value);
//  - jiffies as a function giving the value read at the event (libtraceevent's is 0);
//  - a `char *` field into kernel memory as a function printing its string read at the event;
//  - enumerators the kernel compiled in but the text only names replaced by their values.
std::string KernelText::prepare_print_fmt(std::string_view text, const EventFormat& format)
{
    constexpr std::string_view marker = "print fmt: \"";
    std::size_t at = text.find(marker);
    if (at == std::string_view::npos)
        return std::string(text);
    std::string out(text.substr(0, at + marker.size()));
    std::size_t i = at + marker.size();
    for (; i < text.size() && text[i] != '"'; i++) {
        if (text[i] == '\\' && i + 1 < text.size()) {
            out += text[i++];
            out += text[i];
            continue;
        }
        if (text[i] == '%' && i + 1 < text.size() && text[i + 1] == '%') {
            out += "%%";
            i++;
            continue;
        }
        if (text[i] == '%' && i + 1 < text.size() && text[i + 1] == 'p' &&
            (i + 2 >= text.size() || !std::isalnum(static_cast<unsigned char>(text[i + 2])))) {
            out += "%016lx";
            i++;
            continue;
        }
        if (text[i] == '%' && i + 1 < text.size() && text[i + 1] == '#') {
            // %#[flags][width][length]x: the prefix written out, its two columns off the width.
            // A width padded with spaces would put the spaces before the prefix: left as C's.
            std::size_t end = i + 1;
            while (end < text.size() && std::strchr("-+ #0", text[end]))
                end++;
            std::string flags(text.substr(i + 2, end - i - 2));
            std::size_t width_end = end;
            while (width_end < text.size() && std::isdigit(static_cast<unsigned char>(text[width_end])))
                width_end++;
            int width = width_end > end ? std::stoi(std::string(text.substr(end, width_end - end))) : 0;
            std::size_t conv = width_end;
            while (conv < text.size() && std::strchr("hlzjt", text[conv]))
                conv++;
            bool hex = conv < text.size() && (text[conv] == 'x' || text[conv] == 'X');
            bool padded_left = width && flags.find_first_of("0-") == std::string::npos;
            if (hex && !padded_left) {
                out += text[conv] == 'x' ? "0x%" : "0X%";
                out += flags;
                if (width > 2)
                    out += std::to_string(width - 2);
                out += text.substr(width_end, conv + 1 - width_end);
                i = conv;
                continue;
            }
        }
        if (text[i] == '\t' || text[i] == '\n') {
            out += text[i] == '\t' ? "\\t" : "\\n";
            continue;
        }
        out += text[i];
    }
    if (i < text.size())
        out += text[i++]; // the format's closing quote
    // The arguments: identifiers outside strings, neither fields (REC->x) nor functions
    // (x(...)), that BTF knows as enumerators. Only names in capitals are looked up: enumerators
    // are, C's type words are not, and most events then never need BTF read.
    bool in_string = false;
    while (i < text.size()) {
        char c = text[i];
        if (in_string) {
            out += c;
            if (c == '\\' && i + 1 < text.size())
                out += text[++i];
            else if (c == '"')
                in_string = false;
            i++;
            continue;
        }
        if (c == '"') {
            in_string = true;
            out += c;
            i++;
            continue;
        }
        if (c == '(') {
            // After a binary operator whose left operand ends just before it.
            std::size_t op_end = out.find_last_not_of(' ');
            std::size_t op_start = out.find_last_not_of("+-*/%&|^<>=!", op_end);
            std::size_t operand = op_start == std::string::npos
                                      ? std::string::npos
                                      : out.find_last_not_of(' ', op_start);
            if (op_end != std::string::npos && op_start != op_end &&
                binary_priority(std::string_view(out).substr(op_start + 1, op_end - op_start)) &&
                operand != std::string::npos &&
                (is_identifier_char(out[operand]) || out[operand] == ')' || out[operand] == ']'))
                out += "(u64)";
        }
        if (!is_identifier_char(c) || std::isdigit(static_cast<unsigned char>(c))) {
            // Numbers stay whole: "0x10UL" is no identifier.
            if (std::isdigit(static_cast<unsigned char>(c)))
                while (i < text.size() && is_identifier_char(text[i]))
                    out += text[i++];
            else
                out += text[i++];
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && is_identifier_char(text[end]))
            end++;
        std::string_view word = text.substr(i, end - i);
        std::size_t next = text.find_first_not_of(' ', end);
        bool member = text.compare(i - 2, 2, "->") == 0 || text[i - 1] == '.';
        bool call = next != std::string_view::npos && text[next] == '(';
        bool record = text.compare(end, 2, "->") == 0;
        if (record) {
            std::size_t name_end = end + 2;
            while (name_end < text.size() && is_identifier_char(text[name_end]))
                name_end++;
            const Field* f = format.field(text.substr(end + 2, name_end - end - 2));
            if (f && is_kernel_string(format, *f)) {
                fmt::format_to(std::back_inserter(out), "{}({})", kernel_string_function,
                               text.substr(i, name_end - i));
                i = name_end;
                continue;
            }
        }
        if (word == "jiffies" && !member && !call && !record) {
            fmt::format_to(std::back_inserter(out), "{}(0)", jiffies_function);
            i = end;
            continue;
        }
        std::optional<std::int64_t> value;
        bool capitals = std::none_of(word.begin(), word.end(),
                                     [](char ch) { return std::islower(static_cast<unsigned char>(ch)); });
        if (!member && !call && !record && capitals)
            value = enumerator(word);
        if (value)
            fmt::format_to(std::back_inserter(out), "{}", *value);
        else
            out += word;
        i = end;
    }
    return out;
}

void KernelText::add(const EventFormat& format, std::string_view format_text)
{
    Event event;
    if (format_text.find("%pS") != std::string_view::npos ||
        format_text.find("%ps") != std::string_view::npos)
        needs_symbols_ = true;
    if (!is_syscall_event(format)) {
        std::string text = prepare_print_fmt(format_text, format);
        tep_event* parsed = nullptr;
        if (tep_parse_format(tep_, &parsed, text.data(), text.size(), format.system.c_str()) == 0 &&
            parsed && !(parsed->flags & TEP_EVENT_FL_FAILED))
            event.parsed = parsed;
        if (event.parsed)
            for (tep_print_arg* arg = event.parsed->print_fmt.args; arg; arg = arg->next)
                group_from_the_left(arg);
    }
    if (event.parsed) {
        auto convs = conversions(event.parsed->print_fmt.format);
        std::size_t conv = 0;
        for (const tep_print_arg* arg = event.parsed->print_fmt.args; arg; arg = arg->next, conv++) {
            while (conv < convs.size() && convs[conv] == "*") {
                arg = arg->next;
                conv++;
            }
            if (!arg)
                break;
            // `REC->f ? NAMES(REC->f) : "text"`: the names, and the text for 0.
            const tep_print_arg* shown = arg;
            std::string zero_text;
            if (arg->type == TEP_PRINT_OP && std::strcmp(arg->op.op, "?") == 0 && arg->op.right &&
                arg->op.right->type == TEP_PRINT_OP && std::strcmp(arg->op.right->op.op, ":") == 0 &&
                arg->op.right->op.right && arg->op.right->op.right->type == TEP_PRINT_ATOM) {
                shown = arg->op.right->op.left;
                zero_text = arg->op.right->op.right->atom.atom;
            }
            const tep_format_field* condition = shown == arg ? nullptr : plain_field(arg->op.left);
            auto names_of = [&](const tep_print_arg* field_arg) {
                const auto* f = plain_field(field_arg);
                return f && (shown == arg || f == condition) ? f : nullptr;
            };
            if (shown && shown->type == TEP_PRINT_SYMBOL) {
                if (const auto* f = names_of(shown->symbol.field))
                    event.extras.emplace(f->name, Event::FieldExtra{Event::Extra::symbolic, shown, zero_text});
            } else if (shown && shown->type == TEP_PRINT_FLAGS) {
                if (const auto* f = names_of(shown->flags.field))
                    event.extras.emplace(f->name, Event::FieldExtra{Event::Extra::flags, shown, zero_text});
            } else if (conv < convs.size() && (convs[conv] == "pS" || convs[conv] == "ps")) {
                if (const auto* f = plain_field(arg))
                    event.extras.emplace(f->name,
                                         Event::FieldExtra{convs[conv] == "pS"
                                                               ? Event::Extra::symbol_with_offset
                                                               : Event::Extra::symbol,
                                                           arg});
            }
        }
    }
    events_[format.id] = std::move(event);
}

void KernelText::add_file(const EventFormat& format, const std::filesystem::path& file)
{
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    add(format, text.str());
}

const KernelText::Event* KernelText::find(const EventFormat& format) const
{
    auto it = events_.find(format.id);
    return it == events_.end() ? nullptr : &it->second;
}

void KernelText::read_kallsyms()
{
    if (kallsyms_ || kallsyms_failed_)
        return;
    try {
        kallsyms_ = std::make_unique<KernelSymbols>(kallsyms_path_);
    } catch (const std::exception&) {
        kallsyms_failed_ = true; // addresses then print as numbers, as the kernel's would
    }
}

bool reads_jiffies(const EventFormat& format)
{
    // jiffies as a word of its own among the arguments (after the format string), not a member
    // (->jiffies) nor part of a longer name
    std::size_t args = format.print_fmt.find('"');
    while (args != std::string::npos && (args = format.print_fmt.find('"', args + 1)) != std::string::npos &&
           format.print_fmt[args - 1] == '\\')
        ;
    if (args == std::string::npos)
        return false;
    for (std::size_t at = format.print_fmt.find("jiffies", args); at != std::string::npos;
         at = format.print_fmt.find("jiffies", at + 1)) {
        std::size_t end = at + 7;
        bool alone = (at == 0 || !is_identifier_char(format.print_fmt[at - 1])) &&
                     (end == format.print_fmt.size() || !is_identifier_char(format.print_fmt[end]));
        bool member = at >= 2 && (format.print_fmt.compare(at - 2, 2, "->") == 0 ||
                                  format.print_fmt[at - 1] == '.');
        if (alone && !member)
            return true;
    }
    return false;
}

void KernelText::read_privileged_files()
{
    if (needs_symbols_)
        read_kallsyms();
}

std::string KernelText::symbol_text(std::uint64_t address, bool with_offset)
{
    read_kallsyms();
    std::optional<Symbol> symbol = kallsyms_ ? kallsyms_->find(address) : std::nullopt;
    if (!symbol || (symbol->size && symbol->offset >= symbol->size))
        return fmt::format("0x{:x}", address);
    std::string text = symbol->name;
    if (with_offset)
        fmt::format_to(std::back_inserter(text), "+0x{:x}/0x{:x}", symbol->offset, symbol->size);
    if (!symbol->module.empty())
        fmt::format_to(std::back_inserter(text), " [{}]", symbol->module);
    return text;
}

char* KernelText::resolve(void* self, unsigned long long* address, char** module)
{
    auto& text = *static_cast<KernelText*>(self);
    *module = nullptr;
    text.resolved_.clear();
    text.resolved_ += symbol_start;
    text.resolved_ += text.symbol_text(*address, true);
    text.resolved_ += symbol_short;
    text.resolved_ += text.symbol_text(*address, false);
    text.resolved_ += symbol_end;
    text.resolutions_++;
    return text.resolved_.data();
}

bool KernelText::append(std::string& out, const EventFormat& format,
                        std::span<const std::byte> record, const UserStrings& strings,
                        std::uint64_t jiffies)
{
    const Event* event = find(format);
    if (is_syscall_event(format)) {
        // The kernel's print_syscall_enter() and print_syscall_exit().
        bool enter = format.name.starts_with("sys_enter_");
        std::string_view call = std::string_view(format.name).substr(enter ? 10 : 9);
        out += "sys_";
        out += call;
        if (!enter) {
            const Field* ret = format.field("ret");
            fmt::format_to(std::back_inserter(out), " -> 0x{:x}", ret ? read_unsigned(*ret, record) : 0);
            return true;
        }
        out += '(';
        bool first = true;
        for (const Field& f : format.fields) {
            if (f.common || f.name == "__syscall_nr")
                continue;
            if (!first)
                out += ", ";
            first = false;
            out += f.name;
            out += ": ";
            if (auto text = strings.find(format, f); text && !text->fault) {
                append_user_string(out, *text);
                continue;
            }
            std::uint64_t v = read_unsigned(f, record);
            if (syscall_args_ == SyscallArgs::hex)
                fmt::format_to(std::back_inserter(out), "{:x}", v);
            else if (v < 10)
                fmt::format_to(std::back_inserter(out), "{}", v);
            else
                fmt::format_to(std::back_inserter(out), "0x{:x}", v);
        }
        out += ')';
        return true;
    }
    if (!event || !event->parsed)
        return false;
    out += format.name;
    out += ": ";
    tep_record r{};
    r.data = const_cast<std::byte*>(record.data());
    r.size = static_cast<int>(record.size());
    trace_seq& seq = *seq_;
    trace_seq_reset(&seq); // its buffer kept from event to event
    resolutions_ = 0;
    Printing now{&format, record, &strings, jiffies};
    printing = &now;
    tep_print_event(tep_, &seq, &r, "%s", TEP_PRINT_INFO);
    printing = nullptr;
    trace_seq_terminate(&seq);
    std::string_view printed(seq.buffer, seq.len);
    if (resolutions_ == 0) {
        out += printed;
    } else {
        // Each resolved address: the long form when libtraceevent added the offset, else the
        // short one.
        while (!printed.empty()) {
            std::size_t start = printed.find(symbol_start);
            std::size_t mid = printed.find(symbol_short, start);
            std::size_t end = printed.find(symbol_end, mid);
            if (start == std::string_view::npos || end == std::string_view::npos) {
                out += printed;
                break;
            }
            out += printed.substr(0, start);
            std::string_view rest = printed.substr(end + 1);
            if (rest.starts_with(offset_suffix)) {
                out += printed.substr(start + 1, mid - start - 1);
                rest.remove_prefix(offset_suffix.size());
            } else {
                out += printed.substr(mid + 1, end - mid - 1);
            }
            printed = rest;
        }
    }
    return true;
}

void KernelText::append_json_extras(std::string& out, const EventFormat& format, const Field& f,
                                    std::span<const std::byte> record)
{
    scratch_.clear();
    if (is_syscall_number(format, f)) {
        if (auto name = syscall_name(static_cast<std::uint32_t>(read_unsigned(f, record))))
            scratch_ = *name;
    } else if (is_syscall_return(format, f)) {
        if (auto text = syscall_error_text(static_cast<std::int64_t>(read_unsigned(f, record))))
            scratch_ = *text;
    } else if (const Event* event = find(format)) {
        auto it = event->extras.find(f.name);
        if (it == event->extras.end())
            return;
        std::uint64_t value = read_unsigned(f, record);
        if (value == 0 && !it->second.zero_text.empty()) {
            scratch_ = it->second.zero_text;
        } else switch (it->second.kind) {
        case Event::Extra::symbolic:
            append_symbolic(scratch_, value, it->second.arg->symbol.symbols);
            break;
        case Event::Extra::flags:
            append_flags(scratch_, value, it->second.arg->flags.delim, it->second.arg->flags.flags);
            break;
        case Event::Extra::symbol:
        case Event::Extra::symbol_with_offset:
            scratch_ = symbol_text(value, it->second.kind == Event::Extra::symbol_with_offset);
            break;
        }
    }
    if (scratch_.empty())
        return;
    out += ',';
    append_json_string(out, f.name + "_sym");
    out += ':';
    append_json_string(out, scratch_);
}

} // namespace tpkit
