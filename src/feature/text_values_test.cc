// for_each_token against a plain find loop, and parse_double's plain-decimal path and
// parse_short_decimal against std::from_chars (bit for bit), on random texts that hit the block
// scans' tails and edges.
#include "feature/text_values.h"

#include <gtest/gtest.h>

#include <algorithm>
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
    // Lengths around the 8- and 16-byte blocks, the separator anywhere (also the NUL byte).
    std::string s(rng() % 70, 'x');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
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

// parse_short_decimal reads 8 bytes past its text: each text is placed in a buffer followed by
// `after` (digits, a point, separators: bytes that must not change the result). Whenever it
// accepts a text, std::from_chars must give the same double bit for bit; and it must accept every
// plain decimal of at most 8 digits on each side of the point (else the fast path would never run).
void expect_short_as_from_chars(const std::string& s, const std::string& after) {
  std::string buffer = s + after + std::string(8, '7');
  double got = 0, want = 0;
  const bool ok = parse_short_decimal(std::string_view(buffer.data(), s.size()), &got);
  size_t whole = s.find('.');
  const size_t sign = !s.empty() && s[0] == '-' ? 1 : 0;
  if (whole == std::string::npos) whole = s.size();
  bool plain = s.size() > sign && s.find_first_not_of("0123456789.", sign) == std::string::npos &&
                     std::count(s.begin(), s.end(), '.') <= 1 && whole > sign && whole - sign <= 8 &&
                     (whole == s.size() || (s.size() - whole - 1 >= 1 && s.size() - whole - 1 <= 8));
  if (plain) {  // and its digits, read as one integer, at most 2^53 (as parse_plain_decimal asks)
    uint64_t m = 0;
    for (char c : s) m = c >= '0' && c <= '9' ? m * 10 + static_cast<uint64_t>(c - '0') : m;
    plain = m <= (uint64_t{1} << 53);
  }
  ASSERT_EQ(ok, plain) << "'" << s << "' followed by '" << after << "'";
  if (ok) {
    ASSERT_TRUE(from_chars_double(s, &want)) << "'" << s << "'";
    ASSERT_EQ(std::memcmp(&got, &want, sizeof(got)), 0) << "'" << s << "' " << got << " " << want;
  }
}

TEST(TextValues, ShortDecimalsEqualFromChars) {
  for (const char* s : {"0", "-0", "-0.0", "0.1", "101.385", "-7.125", "12345678", "123456789", "99999999.99999999",
                        "90071992.54740992", "90071992.54740993",
                        "0.00000001", "0.000000001", "1.", ".5", "-.5", "-", "", "--1", "1e5", "1.5.5", " 1",
                        "1 ", "+1", "1;2", "\x80" "1", "1\xb0", "12345678.9"}) {
    for (const char* after : {"", ";", "5", ".5", "\xff"}) expect_short_as_from_chars(s, after);
  }
  std::mt19937_64 rng(34);
  const std::string alphabet = "0123456789.-;x\x80\xb9\xff/:";
  for (int i = 0; i < 300000; ++i) {
    char buf[64];
    const double x = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 40) - 60);
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(rng() % 10), (rng() & 1) ? x : -x);
    std::string after(rng() % 3, '0');
    for (char& c : after) c = alphabet[rng() % alphabet.size()];
    expect_short_as_from_chars(buf, after);
    std::string mixed(rng() % 19, '0');
    for (char& c : mixed) c = alphabet[rng() % (rng() % 4 == 0 ? alphabet.size() : 11)];
    expect_short_as_from_chars(mixed, after);
  }
}

}  // namespace text_values_test
}  // namespace tzrec::feature
