// for_each_token against a plain find loop, and parse_double's plain-decimal path against
// std::from_chars (bit for bit), on random texts that hit the block scans' tails and edges.
#include "feature/text_values.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tzrec::feature {
namespace text_values_test {

std::vector<std::string> tokens_by_find(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + sep.size();
  }
}

std::vector<std::string> tokens(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  for_each_token(s, sep, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

TEST(TextValues, TokensEqualAFindLoop) {
  EXPECT_EQ(tokens("", ";"), std::vector<std::string>{""});
  EXPECT_EQ(tokens("a;;b;", ";"), (std::vector<std::string>{"a", "", "b", ""}));
  EXPECT_EQ(tokens("a||b|c", "||"), (std::vector<std::string>{"a", "b|c"}));
  std::mt19937_64 rng(11);
  const std::string alphabet = std::string("ab;,|") + '\0' + '\x1d';
  for (int i = 0; i < 20000; ++i) {
    // Lengths around the 8- and 16-byte blocks and the 64-byte windows, the separator anywhere
    // (also the NUL byte).
    std::string s(rng() % 200, 'x');
    // Half of them with few separators: windows without a match.
    for (char& c : s) c = i % 2 == 0 || rng() % 24 == 0 ? alphabet[rng() % alphabet.size()] : 'x';
    for (const std::string sep : {std::string(";"), std::string(1, '\0'), std::string("\x1d"),
                                  std::string(";;")}) {
      ASSERT_EQ(tokens(s, sep), tokens_by_find(s, sep)) << "'" << s << "'";
    }
  }
}

bool from_chars_double(std::string_view s, double* out) {
  s = trim_spaces(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && !std::isnan(*out);
}

void expect_as_from_chars(const std::string& s) {
  double got = 0, want = 0;
  const bool ok = parse_double(s, &got);
  ASSERT_EQ(ok, from_chars_double(s, &want)) << "'" << s << "'";
  if (ok) {
    ASSERT_EQ(std::memcmp(&got, &want, sizeof(got)), 0) << "'" << s << "' " << got << " " << want;
  }
}

TEST(TextValues, ParseDoubleEqualsFromChars) {
  for (const char* s :
       {"0", "-0", "-0.0", "0.1", "101.385", "-7.125", "9007199254740992", "9007199254740993",
        "1234567890123456789", "12345678901234567890", "0.0000000000000000000001",
        "0.00000000000000000000001", " 1.5 ", "+1.5", "1.", ".5", "-.5", "-", "", "1e5", "inf",
        "nan", "0x10", "1.5.5", "3.14159265358979323846264"}) {
    expect_as_from_chars(s);
  }
  std::mt19937_64 rng(12);
  for (int i = 0; i < 200000; ++i) {
    const int exponent = static_cast<int>(rng() % 120) - 80;
    const double x = std::ldexp(static_cast<double>(rng() >> 11), exponent);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(rng() % 20), (rng() & 1) ? x : -x);
    expect_as_from_chars(buf);
    std::snprintf(buf, sizeof(buf), "%.*g", static_cast<int>(rng() % 18) + 1, x);
    expect_as_from_chars(buf);
    std::string digits(rng() % 24, '0');
    for (char& c : digits) c = "0123456789.-"[rng() % 12];
    expect_as_from_chars(digits);
  }
}

}  // namespace text_values_test
}  // namespace tzrec::feature
