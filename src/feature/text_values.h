// Small, allocation-free helpers to split cells and parse numbers from text (no torch).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace tzrec::feature {

inline std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The next sep in s from start (npos when none); a one-byte separator — the common case — is
// searched with memchr instead of a substring search.
inline size_t find_separator(std::string_view s, std::string_view sep, size_t start) {
  return sep.size() == 1 ? s.find(sep[0], start) : s.find(sep, start);
}

// Calls fn(token) for every sep-separated token of s, empty tokens included ("a,,b" -> a, "", b).
// sep must not be empty.
template <typename Fn>
inline void for_each_token(std::string_view s, std::string_view sep, Fn&& fn) {
  size_t start = 0;
  while (true) {
    const size_t pos = find_separator(s, sep, start);
    if (pos == std::string_view::npos) {
      fn(s.substr(start));
      return;
    }
    fn(s.substr(start, pos - start));
    start = pos + sep.size();
  }
}

// Whole-token decimal integer (surrounding spaces and a leading '+' allowed).
inline bool parse_int64(std::string_view s, int64_t* out) {
  s = trim_spaces(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Whole-token decimal / scientific / inf number (surrounding spaces and a leading '+' allowed).
// NaN is rejected: it would silently poison training.
inline bool parse_double(std::string_view s, double* out) {
  s = trim_spaces(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && !std::isnan(*out);
}

}  // namespace tzrec::feature
