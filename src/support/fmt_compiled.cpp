// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// fmt's compiled part, built once into libtpkit. With FMT_HEADER_ONLY every file that formats
// compiled it again (a third of a tool's compile time); libfmt.so would load the shared C++
// runtime into tools that link their own (TPKIT_STATIC_CXX_RUNTIME). Without FMT_HEADER_ONLY,
// format-inl.h defines fmt's out-of-line functions here, and the templates that fmt's headers
// only declare are instantiated below for char, the one character type tpkit formats.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template void buffer<char>::append(const char* begin, const char* end);
template void vformat_to(buffer<char>& buf, string_view format_str,
                         basic_format_args<buffer_context<char>> args, locale_ref loc);

} // namespace detail
FMT_END_NAMESPACE
