// text_normalizer (feature/text_normalizer.h). Expected texts by hand from the option definitions
// (full-width forms are U+FF01..U+FF5E = ASCII + 0xFEE0, U+3000 the ideographic space) and
// TorchEasyRec's tokenize_feature_test.py, whose TEXT_UPPER2LOWER makes "ABC efg" read as "abc efg".
#include "feature/text_normalizer.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::feature {
namespace text_normalizer_test {

const std::string kPath = "feature_configs[0].tokenize_feature.text_normalizer";

std::string normalize(std::vector<protos::TextNormalizeOption> options, std::string_view text, int max_length = -1) {
  protos::TextNormalizer c;
  for (auto o : options) c.add_norm_options(o);
  if (max_length >= 0) c.set_max_length(static_cast<uint32_t>(max_length));
  TextNormalizer n(c, kPath);
  std::string out;
  n.normalize(text, &out);
  return out;
}

TEST(TextNormalizer, Options) {
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "ABC efg"), "abc efg");
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "\u00c9T\u00c9 \u0394"), "\u00e9t\u00e9 \u03b4");  // ÉTÉ Δ
  EXPECT_EQ(normalize({protos::TEXT_LOWER2UPPER}, "abc \u00e9"), "ABC \u00c9");
  // Ｈｅｌｌｏ！ with an ideographic space -> "Hello! "
  EXPECT_EQ(normalize({protos::TEXT_SBC2DBC}, "\uff28\uff45\uff4c\uff4c\uff4f\uff01\u3000x"), "Hello! x");
  EXPECT_EQ(normalize({protos::TEXT_SBC2DBC, protos::TEXT_UPPER2LOWER}, "\uff28\uff29"), "hi");
  EXPECT_EQ(normalize({protos::TEXT_REMOVE_SPACE}, " a b\tc\n\u3000d "), "abcd");
  // max_length counts characters of the result: 中文 is two.
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "\u4e2d\u6587AB", 3), "\u4e2d\u6587a");
  EXPECT_EQ(normalize({protos::TEXT_REMOVE_SPACE}, "a b c", 2), "ab");
  // Bytes that are not UTF-8 pass through.
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "A\xff" "B"), "a\xff" "b");
}

TEST(TextNormalizer, RefusedAndBadOptions) {
  auto error = [](std::vector<protos::TextNormalizeOption> options, bool stop_chars = false, int max_length = -1) {
    protos::TextNormalizer c;
    for (auto o : options) c.add_norm_options(o);
    if (stop_chars) c.set_stop_char_file("stop_char");
    if (max_length >= 0) c.set_max_length(static_cast<uint32_t>(max_length));
    try {
      TextNormalizer n(c, kPath);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error({protos::TEXT_UPPER2LOWER, protos::TEXT_CHT2CHS}),
            "not supported yet: " + kPath + ".norm_options[1]: TEXT_CHT2CHS");
  EXPECT_EQ(error({protos::TEXT_FILTER}), "not supported yet: " + kPath + ".norm_options[0]: TEXT_FILTER");
  EXPECT_EQ(error({protos::TEXT_SPLITCHRS}), "not supported yet: " + kPath + ".norm_options[0]: TEXT_SPLITCHRS");
  EXPECT_NE(error({}).find("not supported yet: " + kPath + ".norm_options empty"), std::string::npos);
  EXPECT_NE(error({protos::TEXT_UPPER2LOWER}, true).find("not supported yet: " + kPath + ".stop_char_file"),
            std::string::npos);
  EXPECT_NE(error({protos::TEXT_UPPER2LOWER, protos::TEXT_LOWER2UPPER}).find("contradict"), std::string::npos);
  EXPECT_EQ(error({protos::TEXT_UPPER2LOWER}, false, 0),
            kPath + ".max_length: must be > 0 (leave it unset for no limit)");
}

}  // namespace text_normalizer_test
}  // namespace tzrec::feature
