// for_each_token, for_each_leading_token (with its watched byte) and find_in_short_text against
// find, parse_double's plain-decimal path against std::from_chars (bit for bit), and the
// block-wise plain-decimal parse against the byte loop, on random texts that hit the block scans'
// tails and edges.
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

TEST(TextValues, FindInShortTextEqualsFind) {
  std::mt19937_64 rng(17);
  const std::string alphabet = std::string("ab:^,") + '\0';
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 40, 'x');
    for (char& c : s) c = rng() % 6 == 0 ? alphabet[rng() % alphabet.size()] : 'x';
    for (const char c : {':', '^', ',', '\0'}) {
      ASSERT_EQ(find_in_short_text(s, c), std::string_view(s).find(c)) << "'" << s << "'";
    }
  }
}

// for_each_leading_token watching a second byte: the tokens are those of a find loop (cut at
// max_tokens), and the watched byte is reported whenever a token passed holds it; when it is
// reported though no token passed holds it, it is in the text past them (windows searched ahead).
TEST(TextValues, LeadingTokensNoticeTheWatchedByte) {
  std::mt19937_64 rng(13);
  const std::string alphabet = std::string("ab;;;,|") + '\0' + '\x1d';
  size_t seen_in_tokens = 0, seen_ahead = 0;
  for (int i = 0; i < 40000; ++i) {
    std::string s(rng() % 200, 'x');
    for (char& c : s) c = rng() % 8 == 0 ? alphabet[rng() % alphabet.size()] : 'x';
    const size_t max_tokens = 1 + rng() % 40;
    for (const char watched : {'\x1d', ',', '\0'}) {
      std::vector<std::string> got;
      bool seen = false;
      const size_t n = for_each_leading_token(
          s, ';', max_tokens,
          [&](size_t k, std::string_view t) {
            EXPECT_EQ(k, got.size());
            got.emplace_back(t);
            return true;
          },
          watched, &seen);
      std::vector<std::string> want = tokens_by_find(s, ";");
      if (want.size() > max_tokens) want.resize(max_tokens);
      ASSERT_EQ(got, want) << "'" << s << "'";
      ASSERT_EQ(n, want.size());
      bool in_tokens = false;
      for (const auto& t : want) in_tokens = in_tokens || t.find(watched) != std::string::npos;
      ASSERT_TRUE(seen || !in_tokens) << "'" << s << "' watching " << int(watched);
      if (seen && !in_tokens) {
        ASSERT_NE(s.find(watched), std::string::npos) << "'" << s << "'";
        ++seen_ahead;
      }
      seen_in_tokens += in_tokens;
      // All tokens passed: reported exactly when the text holds it.
      if (want.size() < max_tokens) ASSERT_EQ(seen, s.find(watched) != std::string::npos) << "'" << s << "'";
    }
  }
  EXPECT_GT(seen_in_tokens, 1000u);
  EXPECT_GT(seen_ahead, 100u);
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

// parse_plain_decimal_in (16 bytes classified at once, digits read 8 at a time) against
// parse_plain_decimal (a byte loop): the same acceptance and the same bits, for tokens of 0–20 bytes
// of digits, signs, dots and other bytes at random places in a larger buffer, with every distance
// from the token to the end of what may be read (under 18 bytes: the byte loop's path).
TEST(TextValues, PlainDecimalInEqualsTheByteLoop) {
  for (const char* s : {"0", "-0", "0.0", "-0.0", "12345678.12345678", "123456789.1", "1.123456789",
                        "-12345678.1234567", "9007199254740992", "99999999.99999999", "1.", ".5", "-", "-.5",
                        "1..2", "1.2.3", "--1", "1-2", "+1", " 1"}) {
    std::string buf = std::string(s) + std::string(18, ';');
    for (size_t readable : {std::strlen(s), buf.size()}) {
      double a = 1, b = 2;
      const bool ra = parse_plain_decimal(std::string_view(s), &a);
      const bool rb = parse_plain_decimal_in(std::string_view(buf.data(), std::strlen(s)), buf.data() + readable, &b);
      ASSERT_EQ(ra, rb) << "'" << s << "'";
      if (ra) ASSERT_EQ(std::memcmp(&a, &b, sizeof(a)), 0) << "'" << s << "'";
    }
  }
  std::mt19937_64 rng(5);
  const std::string alphabet = std::string("01234567890123456789012345678901234567890..-e+ x;") + '\x80';
  size_t accepted = 0;
  for (int i = 0; i < 400000; ++i) {
    char buf[64];
    for (char& c : buf) c = alphabet[rng() % alphabet.size()];
    const size_t len = rng() % 21, start = rng() % 8;
    const size_t readable = start + len + rng() % (64 - start - len + 1);
    const std::string_view s(buf + start, len);
    double a = 1, b = 2;
    const bool ra = parse_plain_decimal(s, &a);
    const bool rb = parse_plain_decimal_in(s, buf + readable, &b);
    ASSERT_EQ(ra, rb) << "'" << s << "'";
    if (ra) ASSERT_EQ(std::memcmp(&a, &b, sizeof(a)), 0) << "'" << s << "'";
    accepted += ra;
  }
  EXPECT_GT(accepted, 50000u);  // the random tokens reach the fast path, not only the rejections
}

}  // namespace text_values_test
}  // namespace tzrec::feature
