// text_normalizer (feature/text_normalizer.h). Expected texts by hand from the option definitions
// of docs/tzrec-compatibility.md §5.10 (text_normalizer): full-width forms are U+FF01..U+FF5E =
// ASCII + 0xFEE0, U+3000 the ideographic space; the built-in stop characters are the general
// categories P*, S*, Cc, Cf (Unicode's UnicodeData.txt: ！ ， 、 。 Po, ¥ € Sc, 😀 So, U+200B U+FEFF
// Cf, U+007F Cc) without White_Space (tab, U+00A0, U+3000); traditional -> simplified pairs from
// OpenCC 1.1.6's TSCharacters (src/feature/cht2chs_table.inc), each also what `opencc -c t2s.json`
// of the Debian package opencc 1.1.6+ds1-1 prints: 繁體中文 -> 繁体中文, 後來 -> 后来, 學習機器 ->
// 学习机器, 𨋢 (U+282E2) -> 䢂 (U+4882), 㑮 (U+346E) -> 𫝈 (U+2B748). TorchEasyRec's
// tokenize_feature_test.py has TEXT_UPPER2LOWER make "ABC efg" read as "abc efg".
#include "feature/text_normalizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace tzrec::feature {
namespace text_normalizer_test {

const std::string kPath = "feature_configs[0].tokenize_feature.text_normalizer";

protos::TextNormalizer config(const std::vector<protos::TextNormalizeOption>& options, int max_length = -1,
                              const std::string& stop_char_file = "") {
  protos::TextNormalizer c;
  for (auto o : options) c.add_norm_options(o);
  if (max_length >= 0) c.set_max_length(static_cast<uint32_t>(max_length));
  if (!stop_char_file.empty()) c.set_stop_char_file(stop_char_file);
  return c;
}

std::string normalize(const std::vector<protos::TextNormalizeOption>& options, std::string_view text,
                      int max_length = -1) {
  TextNormalizer n(config(options, max_length), kPath);
  std::string out;
  n.normalize(text, &out);
  return out;
}

// A file of `bytes` in the test's temporary folder, removed with the object.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& bytes)
      : path_(::testing::TempDir() + "/text_normalizer_" + std::to_string(::getpid()) + "_" + name) {
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Normalizes with the stop characters of a file holding `stop_chars`.
std::string normalize_with_stops(const std::vector<protos::TextNormalizeOption>& options, const std::string& stop_chars,
                                 std::string_view text) {
  TempFile file("stop_chars.txt", stop_chars);
  TextNormalizer n(config(options, -1, file.path()), kPath);
  std::string out;
  n.normalize(text, &out);
  return out;
}

std::string error_of(const protos::TextNormalizer& c, const std::string& stop_char_file = "") {
  try {
    TextNormalizer n(c, kPath, stop_char_file);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TextNormalizer, CaseWidthAndSpace) {
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "ABC efg"), "abc efg");
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "\u00c9T\u00c9 \u0394"), "\u00e9t\u00e9 \u03b4");  // ÉTÉ Δ
  EXPECT_EQ(normalize({protos::TEXT_LOWER2UPPER}, "abc \u00e9"), "ABC \u00c9");
  // Ｈｅｌｌｏ！ with an ideographic space -> "Hello! "
  EXPECT_EQ(normalize({protos::TEXT_SBC2DBC}, "\uff28\uff45\uff4c\uff4c\uff4f\uff01\u3000x"), "Hello! x");
  EXPECT_EQ(normalize({protos::TEXT_SBC2DBC, protos::TEXT_UPPER2LOWER}, "\uff28\uff29"), "hi");
  EXPECT_EQ(normalize({protos::TEXT_REMOVE_SPACE}, " a b\tc\n\u3000d "), "abcd");
  // Bytes that are not UTF-8 pass through.
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "A\xff" "B"), "a\xff" "b");
}

TEST(TextNormalizer, TraditionalToSimplified) {
  EXPECT_EQ(normalize({protos::TEXT_CHT2CHS}, "繁體中文"), "繁体中文");  // 體 U+9AD4 -> 体 U+4F53
  EXPECT_EQ(normalize({protos::TEXT_CHT2CHS}, "後來"), "后来");          // 後 U+5F8C -> 后 U+540E
  EXPECT_EQ(normalize({protos::TEXT_CHT2CHS}, "學習機器"), "学习机器");
  // A key above U+FFFF, and a BMP key whose simplified form is above U+FFFF.
  EXPECT_EQ(normalize({protos::TEXT_CHT2CHS}, "\U000282E2"), "\u4882");
  EXPECT_EQ(normalize({protos::TEXT_CHT2CHS}, "\u346E"), "\U0002B748");
  // Simplified characters, other scripts and ASCII are kept; one character at a time (no phrases).
  EXPECT_EQ(normalize({protos::TEXT_CHT2CHS}, "中国 abc Ä ひらがな"), "中国 abc Ä ひらがな");
}

TEST(TextNormalizer, BuiltInStopCharacters) {
  EXPECT_EQ(normalize({protos::TEXT_FILTER}, "a,b.c!d?e-f_g@h#i$j%k^l&m*n(o)p[q]r{s}t~u`v'w\"x/y\\z|+=<>:;"),
            "abcdefghijklmnopqrstuvwxyz");
  // CJK and full-width punctuation (Po, Ps, Pe), currency (Sc), emoji (So, above U+FFFF).
  EXPECT_EQ(normalize({protos::TEXT_FILTER}, "你好，世界。「引号」、！"), "你好世界引号");
  EXPECT_EQ(normalize({protos::TEXT_FILTER}, "¥100€ \U0001F600 ok"), "100  ok");
  // Controls and format characters, but not the White_Space ones.
  EXPECT_EQ(normalize({protos::TEXT_FILTER}, "a\x01" "b\x7f" "c\u200b" "d\ufeff" "e\x1c" "f"), "abcdef");
  EXPECT_EQ(normalize({protos::TEXT_FILTER}, "a\tb\nc\u00a0d\u3000e f"), "a\tb\nc\u00a0d\u3000e f");
  // Letters, digits and marks are kept: é, 中, 々 (Lm), 〇 (Nl), ½ (No), a combining acute (Mn).
  EXPECT_EQ(normalize({protos::TEXT_FILTER}, "\u00e9中々〇5\u00bde\u0301"), "\u00e9中々〇5\u00bde\u0301");
  // Bytes that are not UTF-8 pass through.
  EXPECT_EQ(normalize({protos::TEXT_FILTER}, "a\xff!"), "a\xff");
}

TEST(TextNormalizer, DefaultOptions) {
  // Empty norm_options: TEXT_LOWER2UPPER, TEXT_SBC2DBC, TEXT_CHT2CHS, TEXT_FILTER.
  // Ｈｅｌｌｏ，繁體！ abc -> Hello,繁體! abc (SBC2DBC) -> Hello,繁体! abc (CHT2CHS)
  //   -> HELLO,繁体! ABC (LOWER2UPPER) -> HELLO繁体 ABC (FILTER: , and !; the space is kept)
  EXPECT_EQ(normalize({}, "\uff28\uff45\uff4c\uff4c\uff4f\uff0c繁體\uff01 abc"), "HELLO繁体 ABC");
  EXPECT_EQ(normalize({}, "後來，我們"), "后来我们");  // 們 U+5011 -> 们 U+4EEC
}

TEST(TextNormalizer, StopCharFile) {
  // Every code point of every line; '\n' and the '\r' before it are line ends, the file replaces
  // the built-in set (',' and '!' are kept).
  EXPECT_EQ(normalize_with_stops({protos::TEXT_FILTER}, "#\r\n中文\n\U0001F600", "a#b,中文\U0001F600x!\r"),
            "ab,x!\r");
  // A '\r' inside a line, and one ending the last line (no '\n').
  EXPECT_EQ(normalize_with_stops({protos::TEXT_FILTER}, "a\rb\n", "xa\rby"), "xy");
  EXPECT_EQ(normalize_with_stops({protos::TEXT_FILTER}, "a\r", "xa\ry"), "x\ry");
  // An empty file: nothing is a stop character.
  EXPECT_EQ(normalize_with_stops({protos::TEXT_FILTER}, "", "a,b!"), "a,b!");
  // Without TEXT_FILTER the file is read but nothing is removed.
  EXPECT_EQ(normalize_with_stops({protos::TEXT_UPPER2LOWER}, "a", "Aa"), "aa");
}

TEST(TextNormalizer, Order) {
  // SBC2DBC first: full-width ！ becomes ASCII !, which is then filtered; without SBC2DBC the
  // full-width one is not a stop character of this file.
  EXPECT_EQ(normalize_with_stops({protos::TEXT_FILTER, protos::TEXT_SBC2DBC}, "!", "a\uff01b"), "ab");
  EXPECT_EQ(normalize_with_stops({protos::TEXT_FILTER}, "!", "a\uff01b"), "a\uff01b");
  // CHT2CHS before FILTER: 體 becomes 体, a stop character.
  EXPECT_EQ(normalize_with_stops({protos::TEXT_FILTER, protos::TEXT_CHT2CHS}, "体", "繁體"), "繁");
  // Case mapping before FILTER: a becomes A, a stop character.
  EXPECT_EQ(normalize_with_stops({protos::TEXT_FILTER, protos::TEXT_LOWER2UPPER}, "A", "abA"), "B");
  // SBC2DBC before case mapping, whatever the listed order.
  EXPECT_EQ(normalize({protos::TEXT_LOWER2UPPER, protos::TEXT_SBC2DBC}, "\uff48i"), "HI");
  // SBC2DBC turns U+3000 into a space, a stop character of this file.
  EXPECT_EQ(normalize_with_stops({protos::TEXT_FILTER, protos::TEXT_SBC2DBC}, " ", "a\u3000b"), "ab");
  // SPLITCHRS last: the spaces it adds are not removed by REMOVE_SPACE.
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS, protos::TEXT_REMOVE_SPACE}, "中 文 a b"), "中 文 ab");
  // FILTER before SPLITCHRS: the removed comma leaves no space behind.
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS, protos::TEXT_FILTER}, "中，文"), "中 文");
}

TEST(TextNormalizer, SplitChars) {
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS}, "abc中文def"), "abc 中 文 def");
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS}, "中 文"), "中 文");
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS}, "中文"), "中 文");
  // Nothing added at the ends or next to White_Space (spaces kept as they are).
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS}, " 中文 "), " 中 文 ");
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS}, "中\t文\u3000字"), "中\t文\u3000字");
  // Non-Han neighbours: digits, punctuation (Script=Common), kana; ASCII words stay whole.
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS}, "中1，文かな ab cd"), "中 1， 文 かな ab cd");
  // Han beyond the BMP (U+20000) and 々 (Script=Han).
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS}, "a\U00020000々"), "a \U00020000 々");
  // Bytes that are not UTF-8 are a non-Han neighbour.
  EXPECT_EQ(normalize({protos::TEXT_SPLITCHRS}, "中\xff" "文"), "中 \xff 文");
}

TEST(TextNormalizer, MaxLength) {
  // max_length counts bytes of the input; a longer text is kept as it is, not truncated.
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "ABC", 3), "abc");
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "ABCD", 3), "ABCD");
  // 中文A is 3 + 3 + 1 = 7 bytes.
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "\u4e2d\u6587A", 7), "\u4e2d\u6587a");
  EXPECT_EQ(normalize({protos::TEXT_UPPER2LOWER}, "\u4e2d\u6587A", 6), "\u4e2d\u6587A");
  EXPECT_EQ(normalize({}, "繁體！", 8), "繁體！");
}

TEST(TextNormalizer, BadConfigs) {
  EXPECT_EQ(error_of(config({protos::TEXT_UPPER2LOWER, protos::TEXT_LOWER2UPPER})),
            kPath + ".norm_options: TEXT_LOWER2UPPER and TEXT_UPPER2LOWER contradict each other; keep one");
  EXPECT_EQ(error_of(config({protos::TEXT_UPPER2LOWER}, 0)),
            kPath + ".max_length: must be > 0 (leave it unset to normalize texts of any length)");
  const std::string missing = ::testing::TempDir() + "/text_normalizer_missing_stop_chars.txt";
  EXPECT_EQ(error_of(config({protos::TEXT_FILTER}, -1, "stop_chars.txt"), missing),
            kPath + ".stop_char_file: cannot read stop character file " + missing +
                "; check the path (relative paths are read from the working directory, or from asset_dir when it is "
                "set)");
  // The configured name is read as it is when no resolved path is given.
  EXPECT_EQ(error_of(config({protos::TEXT_FILTER}, -1, missing)).rfind(kPath + ".stop_char_file: cannot read", 0), 0u);
  EXPECT_EQ(error_of(config({protos::TEXT_FILTER}, -1, ::testing::TempDir())),
            kPath + ".stop_char_file: cannot read stop character file " + ::testing::TempDir() +
                "; check the path (relative paths are read from the working directory, or from asset_dir when it is "
                "set)");
  TempFile bad("bad_stop_chars.txt", "ok\n\xff\n");
  EXPECT_EQ(error_of(config({protos::TEXT_FILTER}, -1, bad.path())),
            kPath + ".stop_char_file: stop character file " + bad.path() + " line 2 is not UTF-8; save it as UTF-8");
}

}  // namespace text_normalizer_test
}  // namespace tzrec::feature
