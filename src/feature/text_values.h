// Small, allocation-free helpers to split cells and parse numbers from text (no torch).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tzrec::feature {

inline std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// a == b for short texts compared many times over (map keys, terms): sizes first, then the bytes
// in a loop, inline — a memcmp call per comparison costs more than the comparison.
inline bool equal_short_text(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// The first position of the byte c in a short text (npos when none): an inline loop, for the many
// short texts (map entries) where a find call per text would cost more than the search.
inline size_t find_in_short_text(std::string_view s, char c) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == c) return i;
  }
  return std::string_view::npos;
}

// The positions of one byte in a text, in order, found many bytes at a time (with SSE2, windows
// of up to 64 bytes: four 16-byte compares merged into one 64-bit mask; else 8 bytes in a 64-bit
// word): one branch per window instead of one per byte (or one memchr call per token) —
// separators between short tokens, such as the ids of a sequence, are a few bytes apart.
// kWatch: the windows are also searched for a second byte, and watched_seen() tells whether any
// window searched so far held it — a cell's other separator noticed in the same pass over its
// bytes, without a search of the cell before it.
template <bool kWatch>
class BasicByteFinder {
 public:
  BasicByteFinder(std::string_view s, char c, char watched = '\0')
      : p_(s.data()), n_(s.size()), c_(c), watched_(watched) {}

  // The next position of the byte; size() of the text once there is none left. Forced inline: in
  // large token loops the compiler would call it once per token.
  inline __attribute__((always_inline)) size_t next() {
    if (matches_ == 0 && !next_window_with_match()) return n_;
    const size_t pos = base_ + static_cast<size_t>(__builtin_ctzll(matches_)) / kBitsPerByte;
    matches_ &= matches_ - 1;
    return pos;
  }

  // kWatch: whether a window searched so far held the watched byte. Every byte before the last
  // position next() returned has been searched (and, once next() returned size(), every byte).
  bool watched_seen() const { return watched_seen_; }

 private:
#if defined(__SSE2__)
  static constexpr size_t kBitsPerByte = 1;  // bit k for byte k of the window
  // The matches of the 16 bytes at p; with kWatch, notes whether the watched byte is among them.
  uint64_t block_matches(const char* p, __m128i c, __m128i w) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (kWatch) watched_seen_ |= _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, w)) != 0;
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, c)));
  }
  // The matches of the bytes from pos_ on, at most 64 of them (all that are left when fewer than
  // 64 are); moves pos_ past them.
  uint64_t window_matches() {
    const __m128i c = _mm_set1_epi8(c_);
    const __m128i w = _mm_set1_epi8(watched_);
    const char* p = p_ + pos_;
    const size_t left = n_ - pos_;
    if (left >= 64) {
      pos_ += 64;
      return block_matches(p, c, w) | (block_matches(p + 16, c, w) << 16) |
             (block_matches(p + 32, c, w) << 32) | (block_matches(p + 48, c, w) << 48);
    }
    uint64_t m = 0;
    if (n_ < 16) {  // a text shorter than a block, one byte at a time: a block read would run past it
      for (size_t q = 0; q < left; ++q) {
        m |= static_cast<uint64_t>(p[q] == c_) << q;
        if constexpr (kWatch) watched_seen_ |= p[q] == watched_;
      }
    } else {
      size_t q = 0;
      for (; left - q >= 16; q += 16) m |= block_matches(p + q, c, w) << q;
      // The text's last bytes, read as its final block: the bits of bytes before them shifted out
      // (the watched byte may then be noticed in bytes already searched: it was there).
      if (q < left) m |= (block_matches(p_ + n_ - 16, c, w) >> (16 - (left - q))) << q;
    }
    pos_ = n_;
    return m;
  }
#else
  static constexpr size_t kBitsPerByte = 8;  // bit 8k + 7 for byte k of the window
  // The matches of the 8 bytes from pos_ on (of those left when fewer are); moves pos_ past them.
  uint64_t window_matches() {
    const size_t left = n_ - pos_;
    if (left < 8) {
      uint64_t m = 0;
      for (size_t q = 0; q < left; ++q) {
        m |= static_cast<uint64_t>(p_[pos_ + q] == c_) << (8 * q + 7);
        if constexpr (kWatch) watched_seen_ |= p_[pos_ + q] == watched_;
      }
      pos_ = n_;
      return m;
    }
    uint64_t w = 0;
    std::memcpy(&w, p_ + pos_, 8);
    pos_ += 8;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    if constexpr (kWatch) watched_seen_ |= word_matches(w, watched_) != 0;
    return word_matches(w, c_);
  }
  // Bit 7 of each byte of w equal to c: the additions stay inside each byte (no false matches).
  static uint64_t word_matches(uint64_t w, char c) {
    constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
    const uint64_t x = w ^ (0x0101010101010101ULL * static_cast<unsigned char>(c));
    return ~(((x & kLow7) + kLow7) | x | kLow7);
  }
#endif

  // Moves to the next window holding the byte (false: none left); out of next(), once per window.
  __attribute__((noinline)) bool next_window_with_match() {
    while (matches_ == 0) {
      if (pos_ >= n_) return false;
      base_ = pos_;
      matches_ = window_matches();
    }
    return true;
  }

  const char* p_;
  size_t n_;
  char c_;
  char watched_;
  size_t pos_ = 0;             // the next byte to search
  size_t base_ = 0;            // where the window of matches_ starts
  uint64_t matches_ = 0;       // a bit per matching byte of that window not returned yet
  bool watched_seen_ = false;  // kWatch: a searched window held watched_
};

using ByteFinder = BasicByteFinder<false>;

// Calls fn(token) for every sep-separated token of s, empty tokens included ("a,,b" -> a, "", b).
// sep must not be empty. Each loop calls fn at one place, where it can be inlined.
template <typename Fn>
inline void for_each_token(std::string_view s, std::string_view sep, Fn&& fn) {
  if (sep.size() == 1) {
    ByteFinder separators(s, sep[0]);
    for (size_t start = 0;;) {
      const size_t pos = separators.next();
      fn(std::string_view(s.data() + start, pos - start));
      if (pos == s.size()) return;
      start = pos + 1;
    }
  }
  for (size_t start = 0;;) {
    const size_t found = s.find(sep, start);
    const size_t pos = found == std::string_view::npos ? s.size() : found;
    fn(std::string_view(s.data() + start, pos - start));
    if (found == std::string_view::npos) return;
    start = pos + sep.size();
  }
}

// The first tokens of s separated by the byte `sep` (empty tokens included), at most max_tokens:
// calls fn(k, token) for token k = 0, 1, ... until fn returns false. Returns how many fn accepted;
// *watched_seen (when not null): whether the byte `watched` may be in one of the tokens passed to
// fn — false means none of them holds it (true may also come from bytes past the last token).
template <typename Fn>
inline size_t for_each_leading_token(std::string_view s, char sep, size_t max_tokens, Fn&& fn,
                                     char watched = '\0', bool* watched_seen = nullptr) {
  auto tokens = [&](auto&& separators) {
    size_t k = 0;
    for (size_t start = 0; k < max_tokens;) {
      const size_t pos = separators.next();
      if (!fn(k, std::string_view(s.data() + start, pos - start))) break;
      ++k;
      if (pos == s.size()) break;
      start = pos + 1;
    }
    return k;
  };
  if (watched_seen == nullptr) return tokens(ByteFinder(s, sep));
  BasicByteFinder<true> separators(s, sep, watched);
  const size_t k = tokens(separators);
  *watched_seen = separators.watched_seen();
  return k;
}

// Whole-token decimal integer (surrounding spaces and a leading '+' allowed).
inline bool parse_int64(std::string_view s, int64_t* out) {
  s = trim_spaces(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

namespace text_detail {

// 10^0 .. 10^22: the powers of ten that are exact doubles.
inline constexpr double kExactPowersOf10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                              1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

}  // namespace text_detail

// A plain decimal ("-12.375", "42"; at least one digit on each side of a '.') whose digits,
// read as an integer m, are at most 2^53 and whose decimals are at most 22: m and 10^decimals
// are then exact doubles and their quotient is the correctly rounded value — what from_chars
// gives (Clinger's fast path), without its general algorithm. False for anything else.
inline bool parse_plain_decimal(std::string_view s, double* out) {
  auto is_digit = [](char c) { return static_cast<unsigned>(c - '0') < 10; };
  const char* p = s.data();
  const char* const end = p + s.size();
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  uint64_t m = 0;
  const char* const digits = p;
  for (; p != end && is_digit(*p); ++p) m = m * 10 + static_cast<unsigned>(*p - '0');
  if (p == digits) return false;
  auto num_digits = p - digits;
  decltype(num_digits) num_decimals = 0;
  if (p != end && *p == '.') {
    const char* const decimals = ++p;
    for (; p != end && is_digit(*p); ++p) m = m * 10 + static_cast<unsigned>(*p - '0');
    num_decimals = p - decimals;
    if (num_decimals == 0) return false;
    num_digits += num_decimals;
  }
  // 19 digits cannot overflow m; longer numbers are left to from_chars.
  if (p != end || num_digits > 19 || m > (uint64_t{1} << 53) || num_decimals > 22) return false;
  const double v = static_cast<double>(m) / text_detail::kExactPowersOf10[num_decimals];
  *out = negative ? -v : v;
  return true;
}

#if defined(__SSE2__)
namespace text_detail {

// The value of the k (1 to 8) decimal digits at p, with 8 bytes readable from p (x86: little-endian).
inline uint64_t digits_value(const char* p, unsigned k) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  v <<= 8 * (8 - k);  // the digits to the word's top bytes, zeros (leading zero digits) below
  v = (v & 0x0F0F0F0F0F0F0F0FULL) * 2561 >> 8;               // pairs of digits
  v = (v & 0x00FF00FF00FF00FFULL) * 6553601 >> 16;           // groups of four
  return (v & 0x0000FFFF0000FFFFULL) * 42949672960001ULL >> 32;  // all eight
}

}  // namespace text_detail
#endif

// parse_plain_decimal() for a text s inside a buffer readable up to `readable_end`: with 18 bytes
// readable from s's start, a token of at most 16 bytes with at most 8 digits on each side of its
// '.' is classified by two 16-byte compares and its digits read 8 at a time, without a branch per
// byte (the loops' exits mispredict on numbers of varying length); anything else, and a text near
// the buffer's end, goes through parse_plain_decimal. Same results as parse_plain_decimal. (The
// 8-byte read of the decimals starts at most 10 bytes into s: 18 bytes.)
inline bool parse_plain_decimal_in(std::string_view s, const char* readable_end, double* out) {
#if defined(__SSE2__)
  const char* const p = s.data();
  const size_t n = s.size();
  if (n - 1 < 16 && readable_end - p >= 18) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const unsigned in = (1u << n) - 1;
    const unsigned dot = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('.')))) & in;
    const unsigned digit = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(
                               _mm_cmpgt_epi8(bytes, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(bytes, _mm_set1_epi8('9' + 1))))) &
                           in;
    const unsigned negative = p[0] == '-';
    // After the sign, only digits and at most one '.'.
    if ((digit | dot) == (in & ~negative) && (dot & (dot - 1)) == 0) {
      const unsigned at = dot == 0 ? static_cast<unsigned>(n) : static_cast<unsigned>(__builtin_ctz(dot));
      const unsigned int_digits = at - negative;
      const unsigned decimals = dot == 0 ? 0 : static_cast<unsigned>(n) - at - 1;
      if (int_digits - 1 < 8 && (dot == 0 || decimals - 1 < 8)) {
        static constexpr uint64_t kScale[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
        uint64_t m = text_detail::digits_value(p + negative, int_digits);
        if (decimals > 0) m = m * kScale[decimals] + text_detail::digits_value(p + at + 1, decimals);
        if (m <= (uint64_t{1} << 53)) {
          const double v = static_cast<double>(m) / text_detail::kExactPowersOf10[decimals];
          *out = negative ? -v : v;
          return true;
        }
      }
    }
  }
#endif
  (void)readable_end;
  return parse_plain_decimal(s, out);
}

namespace text_detail {

// parse_double() for any text; kept out of line.
__attribute__((noinline)) inline bool parse_any_double(std::string_view s, double* out) {
  s = trim_spaces(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  if (parse_plain_decimal(s, out)) return true;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && !std::isnan(*out);
}

}  // namespace text_detail

// Whole-token decimal / scientific / inf number (surrounding spaces and a leading '+' allowed).
// NaN is rejected: it would silently poison training. A plain decimal, the common case, has
// nothing to trim: parsed inline.
inline bool parse_double(std::string_view s, double* out) {
  return parse_plain_decimal(s, out) || text_detail::parse_any_double(s, out);
}

// parse_double() for a text s inside a buffer readable up to `readable_end` (parse_plain_decimal_in).
inline bool parse_double_in(std::string_view s, const char* readable_end, double* out) {
  return parse_plain_decimal_in(s, readable_end, out) || text_detail::parse_any_double(s, out);
}

}  // namespace tzrec::feature
