// The text_normalizer of tokenize_feature (docs/tzrec-compatibility.md §5.10, TokenizeFeature):
// rewrites a text before it is tokenized, as TorchEasyRec's "<feature_name>__text_norm" stub
// feature of the feature generator.
//
// Options (TextNormalizer.norm_options), applied in this order to each Unicode character:
//   TEXT_SBC2DBC       full-width forms U+FF01..U+FF5E -> ASCII U+0021..U+007E, U+3000 -> ' '
//   TEXT_LOWER2UPPER   simple upper-case mapping (Unicode, ICU)
//   TEXT_UPPER2LOWER   simple lower-case mapping (Unicode, ICU)
//   TEXT_REMOVE_SPACE  drops White_Space characters (spaces, tabs, line breaks, U+3000, ...)
// then max_length keeps the first max_length characters (code points). Bytes that are not UTF-8
// are kept as they are.
// Refused as "not supported yet": TEXT_CHT2CHS, TEXT_FILTER and TEXT_SPLITCHRS (their tables and
// rules are the feature generator's own), stop_char_file, and an empty norm_options (the feature
// generator's default includes TEXT_CHT2CHS and TEXT_FILTER). TEXT_LOWER2UPPER together with
// TEXT_UPPER2LOWER is a ConfigError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class TextNormalizer {
 public:
  // `path` names the message in errors ("feature_configs[0].tokenize_feature.text_normalizer").
  TextNormalizer(const protos::TextNormalizer& c, const std::string& path);

  // The normalized form of `text` in *out (replaced).
  void normalize(std::string_view text, std::string* out) const;

 private:
  bool sbc2dbc_ = false;
  bool to_upper_ = false;
  bool to_lower_ = false;
  bool remove_space_ = false;
  int64_t max_length_ = -1;  // -1: no limit
};

}  // namespace tzrec::feature
