// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A tool's man page (generated part) and its option list for shell completion, both read from
// the CLI::App that --help prints, so that neither can drift from the code.
#include "cli_docs.hpp"

#include <CLI/CLI.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace tpkit {
namespace {

// Text as roff shows it: no request at a line's start, backslashes and minus signs escaped,
// characters beyond ASCII (…, →) as \[uXXXX], which groff reads whatever its input encoding.
std::string roff_text(std::string_view text)
{
    std::string out;
    bool line_start = true;
    for (std::size_t i = 0; i < text.size(); i++) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (line_start && (c == '.' || c == '\''))
            out += "\\&";
        line_start = c == '\n';
        if (c == '\\') {
            out += "\\e";
        } else if (c == '-') {
            out += "\\-";
        } else if (c >= 0xc0) {
            // a UTF-8 sequence: its lead byte's high bits say how long it is
            std::size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            char32_t code = c & (0x3f >> (length - 1));
            for (std::size_t k = 1; k < length && i + 1 < text.size(); k++)
                code = (code << 6) | (static_cast<unsigned char>(text[++i]) & 0x3f);
            out += fmt::format("\\[u{:04X}]", static_cast<std::uint32_t>(code));
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

// Lines trimmed on the left; each a line of its own in the page.
std::string roff_lines(std::string_view text)
{
    std::string out;
    std::istringstream in{std::string(text)};
    for (std::string line; std::getline(in, line);) {
        line.erase(0, line.find_first_not_of(" \t"));
        if (line.empty())
            continue;
        if (!out.empty())
            out += "\n.br\n";
        out += roff_text(line);
    }
    return out;
}

bool shown(const CLI::Option* option)
{
    return !option->get_group().empty();
}

} // namespace

bool takes_value(const CLI::Option* option)
{
    return option->get_expected_max() != 0;
}

std::string value_name(const CLI::Option* option)
{
    if (!option->get_option_text().empty())
        return option->get_option_text();
    std::string type = option->get_type_name();
    if (auto colon = type.rfind(':'); colon != std::string::npos)
        type.erase(0, colon + 1);
    type = type.substr(0, type.find(' '));
    // CLI11's names of C++ types, and the "N" of any count: the option's own name says more.
    if (type.empty() || type == "TEXT" || type == "UINT" || type == "INT" || type == "FLOAT" ||
        type == "N" || type == "POSITIVE") {
        type = option->get_single_name();
        std::transform(type.begin(), type.end(), type.begin(),
                       [](unsigned char c) { return c == '-' ? '_' : char(std::toupper(c)); });
    }
    return type;
}

namespace {

std::string option_heading(const CLI::Option* option)
{
    std::string heading;
    for (const auto& name : option->get_snames())
        heading += fmt::format("{}\\fB\\-{}\\fR", heading.empty() ? "" : ", ", roff_text(name));
    for (const auto& name : option->get_lnames())
        heading += fmt::format("{}\\fB\\-\\-{}\\fR", heading.empty() ? "" : ", ", roff_text(name));
    if (takes_value(option))
        heading += fmt::format(" \\fI{}\\fR", roff_text(value_name(option)));
    if (option->get_expected_max() > 1)
        heading += " ...";
    return heading;
}

std::string positional_synopsis(const CLI::Option* option)
{
    std::string text = fmt::format("\\fI{}\\fR", roff_text(option->get_name()));
    if (option->get_expected_max() > 1)
        text += "...";
    return option->get_required() ? text : "[" + text + "]";
}

} // namespace

std::string man_page_generated(const CLI::App& app)
{
    const auto options = app.get_options(shown);
    std::string summary = app.get_description().substr(0, app.get_description().find('\n'));
    if (!summary.empty()) {
        summary[0] = char(std::tolower(static_cast<unsigned char>(summary[0])));
        if (summary.back() == '.')
            summary.pop_back();
    }
    std::string page = fmt::format(".SH NAME\n{} \\- {}\n", roff_text(app.get_name()),
                                   roff_text(summary));
    page += fmt::format(".SH SYNOPSIS\n.B {}\n[\\fIOPTIONS\\fR]", roff_text(app.get_name()));
    for (const auto* option : options)
        if (!option->nonpositional())
            page += " " + positional_synopsis(option);
    page += "\n.SH OPTIONS\n";
    for (const auto* option : options) {
        if (option->nonpositional())
            continue;
        page += fmt::format(".TP\n\\fI{}\\fR\n{}\n", roff_text(option->get_name()),
                            roff_lines(option->get_description()));
    }
    for (const auto* option : options) {
        if (!option->nonpositional())
            continue;
        page += fmt::format(".TP\n{}\n{}\n", option_heading(option),
                            roff_lines(option->get_description()));
    }
    // --help's examples, the commands with their comments, as they are.
    std::string footer = app.get_footer();
    if (auto start = footer.find("EXAMPLES:\n"); start != std::string::npos) {
        page += ".SH EXAMPLES\n.nf\n";
        page += roff_text(footer.substr(start + 10));
        if (page.back() != '\n')
            page += '\n';
        page += ".fi\n";
    }
    return page;
}

std::string completion_options(const CLI::App& app, const CompletionValues& values)
{
    std::string out;
    for (const auto* option : app.get_options(shown)) {
        if (!option->nonpositional())
            continue;
        std::string names;
        for (const auto& name : option->get_snames())
            names += (names.empty() ? "-" : " -") + name;
        for (const auto& name : option->get_lnames())
            names += (names.empty() ? "--" : " --") + name;
        out += names;
        if (takes_value(option)) {
            auto found = values.find(option->get_name());
            out += found == values.end() || found->second.empty() ? " =" : " = " + found->second;
        }
        out += '\n';
    }
    return out;
}

} // namespace tpkit
