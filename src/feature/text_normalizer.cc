#include "feature/text_normalizer.h"

#include <fmt/format.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "base/error.h"

namespace tzrec::feature {

TextNormalizer::TextNormalizer(const protos::TextNormalizer& c, const std::string& path) {
  if (c.has_stop_char_file()) {
    throw NotSupportedError(path + ".stop_char_file (the stop characters of TEXT_FILTER)");
  }
  if (c.norm_options_size() == 0) {
    throw NotSupportedError(path +
                            ".norm_options empty: the feature generator's default (TEXT_LOWER2UPPER, TEXT_SBC2DBC, "
                            "TEXT_CHT2CHS, TEXT_FILTER) includes TEXT_CHT2CHS and TEXT_FILTER; list the options, e.g. "
                            "norm_options: [TEXT_UPPER2LOWER, TEXT_SBC2DBC]");
  }
  for (int i = 0; i < c.norm_options_size(); ++i) {
    const auto option = static_cast<protos::TextNormalizeOption>(c.norm_options(i));
    switch (option) {
      case protos::TEXT_SBC2DBC:
        sbc2dbc_ = true;
        break;
      case protos::TEXT_LOWER2UPPER:
        to_upper_ = true;
        break;
      case protos::TEXT_UPPER2LOWER:
        to_lower_ = true;
        break;
      case protos::TEXT_REMOVE_SPACE:
        remove_space_ = true;
        break;
      default:
        throw NotSupportedError(fmt::format("{}.norm_options[{}]: {}", path, i, protos::TextNormalizeOption_Name(option)));
    }
  }
  if (to_upper_ && to_lower_) {
    throw ConfigError(path + ".norm_options: TEXT_LOWER2UPPER and TEXT_UPPER2LOWER contradict each other; keep one");
  }
  if (c.has_max_length()) {
    if (c.max_length() == 0) throw ConfigError(path + ".max_length: must be > 0 (leave it unset for no limit)");
    max_length_ = c.max_length();
  }
}

void TextNormalizer::normalize(std::string_view text, std::string* out) const {
  out->clear();
  out->reserve(text.size());
  const auto n = static_cast<int32_t>(text.size());
  int64_t chars = 0;
  for (int32_t i = 0; i < n;) {
    if (max_length_ >= 0 && chars >= max_length_) break;
    const int32_t start = i;
    UChar32 c = 0;
    U8_NEXT(text.data(), i, n, c);
    if (c < 0) {  // not UTF-8: kept as is
      out->append(text.data() + start, static_cast<size_t>(i - start));
      ++chars;
      continue;
    }
    if (sbc2dbc_) {
      if (c >= 0xFF01 && c <= 0xFF5E) {
        c -= 0xFEE0;
      } else if (c == 0x3000) {
        c = ' ';
      }
    }
    if (to_upper_) {
      c = c < 0x80 ? (c >= 'a' && c <= 'z' ? c - 32 : c) : u_toupper(c);
    } else if (to_lower_) {
      c = c < 0x80 ? (c >= 'A' && c <= 'Z' ? c + 32 : c) : u_tolower(c);
    }
    if (remove_space_ && (c == ' ' || u_isUWhiteSpace(c))) continue;
    char buf[U8_MAX_LENGTH];
    int32_t len = 0;
    U8_APPEND_UNSAFE(buf, len, c);
    out->append(buf, static_cast<size_t>(len));
    ++chars;
  }
}

}  // namespace tzrec::feature
