#include "base/python_float.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace tzrec {

namespace {

// A finite, non-zero number's shortest round-trip digits (of a float or a double: T) laid out in
// fixed notation, or in scientific notation when `scientific(decpt)` says so, where the value is
// 0.<digits> × 10^decpt.
template <typename T, typename Scientific>
std::string shortest_repr(T v, Scientific scientific) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);  // "-d.ddde+XX"
  const size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  const int exp = std::stoi(sci.substr(e_pos + 1));
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  const int decpt = exp + 1;
  std::string out = negative ? "-" : "";
  if (scientific(decpt)) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', std::abs(exp));
    return out;
  }
  if (decpt <= 0) {
    out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else if (static_cast<size_t>(decpt) >= digits.size()) {
    out += digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
  }
  return out;
}

}  // namespace

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  return shortest_repr(v, [](int decpt) { return decpt <= -4 || decpt > 16; });
}

std::string numpy_float32_str(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  const double magnitude = std::fabs(static_cast<double>(v));
  const bool scientific = magnitude < 1e-4 || magnitude >= 1e16;
  return shortest_repr(v, [scientific](int) { return scientific; });
}

}  // namespace tzrec
