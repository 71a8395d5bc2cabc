// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The kernel's event filter string matching, for tests that check tpkit's compiled filters
// against it (filter_test.cpp, the filter fuzz target).
#pragma once

#include <cctype>
#include <cstring>
#include <string>

// The kernel's string matching, transcribed from kernel/trace/trace_events_filter.c
// (filter_parse_regex, regex_match_*) and lib/glob.c (glob_match), as an independent reference.
namespace kernel_ref {

inline bool glob_match(const char* pat, const char* str)
{
    const char *back_pat = nullptr, *back_str = nullptr;
    for (;;) {
        unsigned char c = *str++;
        unsigned char d = *pat++;
        switch (d) {
        case '?':
            if (c == '\0')
                return false;
            break;
        case '*':
            if (*pat == '\0')
                return true;
            back_pat = pat;
            back_str = --str;
            break;
        case '[': {
            if (c == '\0')
                return false;
            bool match = false, inverted = (*pat == '!');
            const char* cls = pat + inverted;
            unsigned char a = *cls++;
            do {
                unsigned char b = a;
                if (a == '\0')
                    goto literal;
                if (cls[0] == '-' && cls[1] != ']') {
                    b = cls[1];
                    if (b == '\0')
                        goto literal;
                    cls += 2;
                }
                match |= (a <= c && c <= b);
            } while ((a = *cls++) != ']');
            if (match == inverted)
                goto backtrack;
            pat = cls;
        } break;
        case '\\':
            d = *pat++;
            [[fallthrough]];
        default:
        literal:
            if (c == d) {
                if (d == '\0')
                    return true;
                break;
            }
        backtrack:
            if (c == '\0' || !back_pat)
                return false;
            pat = back_pat;
            str = ++back_str;
            break;
        }
    }
}

// `FIELD ~ "pattern"` over a string of `len` bytes (the kernel's len: array size or data_loc
// length).
inline bool tilde(std::string pattern, const char* str, int len)
{
    bool negate = false;
    enum { full, front, middle, end, glob } type = full;
    if (!pattern.empty() && pattern[0] == '!') {
        negate = true;
        pattern.erase(0, 1);
    }
    std::string search = pattern;
    if (pattern.empty() || !std::isdigit(static_cast<unsigned char>(pattern[0]))) {
        std::size_t n = pattern.size();
        for (std::size_t i = 0; i < n; ++i) {
            if (pattern[i] == '*') {
                if (i == 0) {
                    type = end;
                } else if (i == n - 1) {
                    type = type == end ? middle : front;
                    pattern.resize(i);
                    break;
                } else {
                    type = glob;
                    break;
                }
            } else if (std::strchr("[?\\", pattern[i])) {
                type = glob;
                break;
            }
        }
        search = pattern;
        if (type != glob && !pattern.empty() && pattern[0] == '*')
            search = pattern.substr(1);
    }
    int rlen = static_cast<int>(search.size());
    bool r = false;
    switch (type) {
    case full:
        r = len ? std::strncmp(str, search.c_str(), len) == 0 : std::strcmp(str, search.c_str()) == 0;
        break;
    case front:
        r = !(len && len < rlen) && std::strncmp(str, search.c_str(), rlen) == 0;
        break;
    case middle: { // strnstr: every window of rlen bytes within the first len bytes
        if (rlen == 0) {
            r = true;
            break;
        }
        if (len == 0) { // a string of unknown length: strstr, up to its NUL
            r = std::strstr(str, search.c_str()) != nullptr;
            break;
        }
        for (int at = 0; at + rlen <= len && !r; ++at)
            r = std::memcmp(str + at, search.data(), rlen) == 0;
        break;
    }
    case end:
        r = len - 1 >= rlen && std::memcmp(str + len - 1 - rlen, search.data(), rlen) == 0;
        break;
    case glob:
        r = glob_match(search.c_str(), str);
        break;
    }
    return r != negate;
}

} // namespace kernel_ref
