// Small text helpers used across the engine (no torch).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tzrec {

// `s` without leading and trailing white space (spaces, tabs, CR, LF, VT, FF).
std::string trim(const std::string& s);

// The items of `text` split at ',', each without leading / trailing spaces and tabs; empty items
// are dropped ("a, b,,c" → {"a", "b", "c"}; command-line lists).
std::vector<std::string> split_comma_list(const std::string& text);

// A tensor shape as "[2, 3]" (error messages, listings).
std::string format_shape(const std::vector<int64_t>& shape);

// This machine's host name, or "localhost" when it cannot be read.
std::string host_name();

// Whether `s` ends with `suffix` (file-name extensions).
bool ends_with(std::string_view s, std::string_view suffix);

// Appends the decimal digits of `v` to `out` (no locale, no allocation beyond the append).
void append_int(std::string* out, int64_t v);

}  // namespace tzrec
