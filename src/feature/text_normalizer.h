// The text_normalizer of tokenize_feature (docs/tzrec-compatibility.md §5.10, text_normalizer):
// rewrites a text before it is tokenized, as TorchEasyRec's "<feature_name>__text_norm" stub
// feature of the feature generator (pyfg, whose tables are not public).
//
// Options (TextNormalizer.norm_options); an empty list is pyfg's default TEXT_LOWER2UPPER,
// TEXT_SBC2DBC, TEXT_CHT2CHS, TEXT_FILTER. Applied to each Unicode character in this order:
//   TEXT_SBC2DBC       full-width forms U+FF01..U+FF5E -> ASCII U+0021..U+007E, U+3000 -> ' '
//   TEXT_CHT2CHS       traditional -> simplified Chinese, one character at a time, by OpenCC's
//                      TSCharacters dictionary (cht2chs_table.inc; this engine's choice of table)
//   TEXT_LOWER2UPPER   simple upper-case mapping (Unicode, ICU)
//   TEXT_UPPER2LOWER   simple lower-case mapping (Unicode, ICU); with TEXT_LOWER2UPPER a ConfigError
//   TEXT_FILTER        drops the stop characters: every code point of stop_char_file (a UTF-8 file;
//                      line ends '\n' and a line's trailing '\r' excepted), else this engine's own
//                      set: general categories P* and S*, Cc and Cf, except White_Space characters
//   TEXT_REMOVE_SPACE  drops White_Space characters (spaces, tabs, line breaks, U+3000, ...)
// then on the result:
//   TEXT_SPLITCHRS     one ASCII space between a Han character (Unicode Script=Han) and each
//                      neighbour, except next to a White_Space character; none added at the ends.
// A text longer than max_length bytes is kept as it is (not normalized, not truncated). Bytes that
// are not UTF-8 are kept as they are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <unicode/umachine.h>

#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class TextNormalizer {
 public:
  // `path` names the message in errors ("feature_configs[0].tokenize_feature.text_normalizer").
  // `stop_char_file` is where the config's stop_char_file is read from (joined to the feature's
  // asset_dir); empty: stop_char_file as configured. ConfigError at <path>.stop_char_file when the
  // file cannot be read or is not UTF-8.
  TextNormalizer(const protos::TextNormalizer& c, const std::string& path, const std::string& stop_char_file = "");

  // The normalized form of `text` in *out (replaced).
  void normalize(std::string_view text, std::string* out) const;

 private:
  bool is_stop(UChar32 c) const {
    if (c <= 0xFFFF) return (stop_bmp_[static_cast<uint32_t>(c) >> 6] >> (c & 63)) & 1;
    return stop_supplementary(c);
  }
  bool stop_supplementary(UChar32 c) const;
  void read_stop_chars(const std::string& file, const std::string& field_path);

  bool sbc2dbc_ = false;
  bool cht2chs_ = false;
  bool to_upper_ = false;
  bool to_lower_ = false;
  bool filter_ = false;
  bool remove_space_ = false;
  bool split_chars_ = false;
  uint64_t max_length_ = UINT64_MAX;  // bytes; unset: no limit
  std::vector<uint64_t> stop_bmp_;    // TEXT_FILTER: one bit per BMP code point
  bool builtin_stops_ = true;         // supplementary stop characters by category, else the list below
  std::vector<UChar32> stop_supplementary_;  // sorted: stop_char_file's code points above U+FFFF
};

}  // namespace tzrec::feature
