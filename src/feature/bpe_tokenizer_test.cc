// bpe_tokenizer (feature/bpe_tokenizer.h). Expected ids:
//   - TorchEasyRec's tokenize_feature_test.py (data/test/tokenizer.json, GPT-NeoX): "abc efg" ->
//     19758 299 16054, "xyz" -> 35609, "hij" -> 73 1944, "0" -> 17 (its sequence test's default),
//     table size 50277;
//   - the other strings on tests/data/tokenizer/small_tokenizer.json: the ids printed by
//     tests/data/tokenizer/make_small_tokenizer.py, an independent Python implementation run on the
//     full GPT-NeoX file (the cut file keeps the merges these strings use, in their order);
//   - the hand-made tokenizers below: merges applied by hand;
//   - truncation / padding: the ids of the same text without them, cut and padded by hand as the
//     tokenizers library's TruncationParams / PaddingParams describe (tokenizer_post_process.h).
#include "feature/bpe_tokenizer.h"

#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::feature {
namespace bpe_tokenizer_test {

using Ids = std::vector<int64_t>;

const std::string kSmall = std::string(TZREC_SOURCE_DIR) + "/tests/data/tokenizer/small_tokenizer.json";

Ids encode(const TextTokenizer& t, std::string_view text) {
  Ids ids;
  t.encode(text, &ids);
  return ids;
}

std::shared_ptr<const BpeTokenizer> small() {
  static const auto tok = BpeTokenizer::load(kSmall, "feature_configs[0].tokenize_feature.vocab_file");
  return tok;
}

TEST(BpeTokenizer, TorchEasyRecVectors) {
  const auto t = small();
  EXPECT_EQ(t->vocab_size(), 50277);
  EXPECT_EQ(encode(*t, "abc efg"), (Ids{19758, 299, 16054}));
  EXPECT_EQ(encode(*t, "xyz"), (Ids{35609}));
  EXPECT_EQ(encode(*t, "hij"), (Ids{73, 1944}));
  EXPECT_EQ(encode(*t, "0"), (Ids{17}));
  EXPECT_EQ(encode(*t, ""), (Ids{}));
}

TEST(BpeTokenizer, SplitPatternBytesAndAddedTokens) {
  const auto t = small();
  // Contractions, punctuation runs, digits.
  EXPECT_EQ(encode(*t, "Hello, world! It's 2024."), (Ids{12092, 13, 1533, 2, 733, 434, 1384, 1348, 15}));
  EXPECT_EQ(encode(*t, "we'll they're"), (Ids{664, 1833, 597, 1472}));
  // Multi-byte letters; "  " is an added (normalized) token of GPT-NeoX (50276).
  EXPECT_EQ(encode(*t, "h\u00e9llo  w\u00f6rld"), (Ids{73, 860, 48620, 50276, 88, 6592, 392}));
  // NFC: e + combining acute composes to é first.
  EXPECT_EQ(encode(*t, "he\u0301llo  wo\u0308rld"), (Ids{73, 860, 48620, 50276, 88, 6592, 392}));
  EXPECT_EQ(encode(*t, "\u4e2d\u6587\u5206\u8bcd"), (Ids{13609, 20855, 18434, 11894, 224}));
  // Line breaks stay apart (\s+(?!\S) leaves the last one, which \s+ then takes alone); runs of
  // spaces are the added tokens "  " (50276) and "   " (50275).
  EXPECT_EQ(encode(*t, "a\n\nb  c   "), (Ids{66, 187, 187, 67, 50276, 68, 50275}));
  // A special token in the raw text.
  EXPECT_EQ(encode(*t, "<|endoftext|>abc"), (Ids{0, 19758}));
}

TEST(BpeTokenizer, RepeatedWordsAndThreads) {
  const auto t = small();
  const Ids once = encode(*t, "abc efg");
  std::vector<Ids> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 200; ++k) got[i] = encode(*t, "abc efg");
    });
  }
  for (auto& th : threads) th.join();
  for (const Ids& g : got) EXPECT_EQ(g, once);
}

// A hand-made byte-level BPE: symbols a b c, space (Ġ) and merges in the given order.
std::string mini(const std::string& merges, const std::string& pre = R"({"type": "ByteLevel", "add_prefix_space": false})",
                 const std::string& extra_model = "") {
  return R"({"normalizer": null, "pre_tokenizer": )" + pre + R"(, "added_tokens": [],
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "\u0120": 3, "ab": 4, "bc": 5, "abc": 6,
    "\u0120a": 7, "\u0120ab": 8}, "merges": )" + merges + extra_model + "}}";
}

TEST(BpeTokenizer, MergesApplyByRank) {
  // "b c" ranks before "a b": abc -> a + bc (ids 0, 5); the other order: ab + c (4, 2).
  EXPECT_EQ(encode(*BpeTokenizer::from_json(mini(R"(["b c", "a b"])"), "t"), "abc"), (Ids{0, 5}));
  EXPECT_EQ(encode(*BpeTokenizer::from_json(mini(R"(["a b", "b c"])"), "t"), "abc"), (Ids{4, 2}));
  // Pairs written as lists (newer tokenizer.json files), and merges building on merges.
  EXPECT_EQ(encode(*BpeTokenizer::from_json(mini(R"([["a", "b"], ["ab", "c"]])"), "t"), "abc"), (Ids{6}));
  // " ab": the space joins the word (Ġ a -> Ġa, Ġa b -> Ġab).
  EXPECT_EQ(encode(*BpeTokenizer::from_json(mini(R"(["\u0120 a", "\u0120a b"])"), "t"), "c ab"), (Ids{2, 8}));
  // add_prefix_space puts a space before the text.
  const auto prefixed =
      BpeTokenizer::from_json(mini(R"(["\u0120 a", "\u0120a b"])", R"({"type": "ByteLevel", "add_prefix_space": true})"), "t");
  EXPECT_EQ(encode(*prefixed, "ab"), (Ids{8}));
  // ignore_merges: a word in the vocab is taken whole.
  const auto whole = BpeTokenizer::from_json(mini("[]", R"({"type": "ByteLevel", "add_prefix_space": false})",
                                                  R"(, "ignore_merges": true)"),
                                             "t");
  EXPECT_EQ(encode(*whole, "abc"), (Ids{6}));
  // Symbols outside the vocab are dropped without unk_token ('d').
  EXPECT_EQ(encode(*BpeTokenizer::from_json(mini("[]"), "t"), "adb"), (Ids{0, 1}));
  EXPECT_EQ(BpeTokenizer::from_json(mini("[]"), "t")->vocab_size(), 9);
}

// Added tokens of one byte ("b"), two that share their first bytes ("cab" before "ca": the
// longest of those starting at a position), a special one matched in the raw text ("<x>"), and a
// text ending on a token's first byte. By hand, HuggingFace's leftmost-longest matching:
// "cabcac b<x>a" = cab | ca | "c " | b | <x> | "a", the plain pieces through the byte-level BPE
// (no merges: c = 2, Ġ = 3, a = 0).
TEST(BpeTokenizer, AddedTokensOfOneOrMoreBytes) {
  std::string json = mini("[]");
  const std::string added = R"("added_tokens": [{"id": 20, "content": "b"}, {"id": 21, "content": "ca"},
    {"id": 22, "content": "cab"}, {"id": 23, "content": "<x>", "special": true}])";
  json.replace(json.find(R"("added_tokens": [])"), std::string(R"("added_tokens": [])").size(), added);
  const auto t = BpeTokenizer::from_json(json, "t");
  EXPECT_EQ(encode(*t, "cabcac b<x>a"), (Ids{22, 21, 2, 3, 20, 23, 0}));
  EXPECT_EQ(encode(*t, "ac"), (Ids{0, 2}));
  EXPECT_EQ(encode(*t, "c"), (Ids{2}));
  EXPECT_EQ(encode(*t, "bb"), (Ids{20, 20}));
}

template <typename E>
std::string error_of(const std::string& json) {
  try {
    BpeTokenizer::from_json(json, "feature_configs[0].tokenize_feature.vocab_file: tokenizer 'x.json'");
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

TEST(BpeTokenizer, BadFilesAreNamed) {
  EXPECT_THROW(BpeTokenizer::load("/nonexistent/tokenizer.json", "feature_configs[0].tokenize_feature.vocab_file"),
               ConfigError);
  try {
    BpeTokenizer::load("/nonexistent/tokenizer.json", "feature_configs[0].tokenize_feature.vocab_file");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("feature_configs[0].tokenize_feature.vocab_file: tokenizer "
                                         "'/nonexistent/tokenizer.json' cannot be read"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NE(error_of<ConfigError>("{not json").find("x.json' is not valid JSON"), std::string::npos);
  EXPECT_NE(error_of<ConfigError>(R"({"pre_tokenizer": {"type": "ByteLevel"}})").find("has no \"model\""),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>(mini(R"(["a d"])")).find("model.merges[0] uses 'd', which is not in model.vocab"),
            std::string::npos);
  EXPECT_NE(error_of<ConfigError>(mini(R"(["abc"])")).find("is not two symbols"), std::string::npos);
}

TEST(BpeTokenizer, UnsupportedPartsAreRefusedByName) {
  const std::string m = mini(R"(["a b"])");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = m;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_NE(error_of<NotSupportedError>(with("\"normalizer\": null", R"("normalizer": {"type": "Lowercase"})"))
                .find("not supported yet: feature_configs[0].tokenize_feature.vocab_file: tokenizer 'x.json': "
                      "normalizer 'Lowercase'"),
            std::string::npos);
  EXPECT_NE(error_of<NotSupportedError>(with(R"({"type": "ByteLevel", "add_prefix_space": false})",
                                             R"({"type": "Whitespace"})"))
                .find("pre_tokenizer 'Whitespace'"),
            std::string::npos);
  EXPECT_NE(error_of<NotSupportedError>(with(R"("type": "BPE")", R"("type": "WordPiece")")).find("model type"),
            std::string::npos);
  EXPECT_NE(error_of<NotSupportedError>(with(R"("added_tokens": [])",
                                             R"("added_tokens": [{"id": 9, "content": "<m>", "lstrip": true}])"))
                .find("with lstrip"),
            std::string::npos);
  EXPECT_NE(error_of<NotSupportedError>(with(R"("merges": )", R"("byte_fallback": true, "merges": )"))
                .find("byte_fallback"),
            std::string::npos);
  // Supported normalizers: NFC (as GPT-NeoX), NFKC, a Sequence of one.
  EXPECT_NO_THROW(BpeTokenizer::from_json(with("\"normalizer\": null", R"("normalizer": {"type": "NFKC"})"), "t"));
  EXPECT_NO_THROW(BpeTokenizer::from_json(
      with("\"normalizer\": null", R"("normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}]})"), "t"));
}

// The small GPT-NeoX tokenizer with its "truncation": null / "padding": null replaced.
std::shared_ptr<const BpeTokenizer> small_with(const std::string& truncation, const std::string& padding) {
  std::ifstream in(kSmall);
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  json.replace(json.find("\"truncation\": null"), 18, "\"truncation\": " + truncation);
  json.replace(json.find("\"padding\": null"), 15, "\"padding\": " + padding);
  return BpeTokenizer::from_json(json, "t");
}

TEST(BpeTokenizer, TruncationAndPaddingCutAndFillEachText) {
  const std::string text = "Hello, world! It's 2024.";
  const Ids full = {12092, 13, 1533, 2, 733, 434, 1384, 1348, 15};  // SplitPatternBytesAndAddedTokens
  // Right keeps the first max_length ids, Left the last; shorter texts stay as they are.
  const auto right = small_with(R"({"direction": "Right", "max_length": 4, "strategy": "LongestFirst", "stride": 2})",
                                "null");
  EXPECT_EQ(encode(*right, text), (Ids{12092, 13, 1533, 2}));
  EXPECT_EQ(encode(*right, "xyz"), (Ids{35609}));
  const auto left = small_with(R"({"direction": "Left", "max_length": 4, "strategy": "OnlyFirst", "stride": 0})", "null");
  EXPECT_EQ(encode(*left, text), (Ids{434, 1384, 1348, 15}));
  // Older files without "direction": Right.
  EXPECT_EQ(encode(*small_with(R"({"max_length": 2})", "null"), text), (Ids{12092, 13}));
  EXPECT_EQ(encode(*small_with(R"({"max_length": 0})", "null"), text), (Ids{}));

  // Fixed(n): pad_id up to n, after (Right) or before (Left) the ids; longer texts stay.
  const auto fixed = small_with(
      "null", R"({"strategy": {"Fixed": 4}, "direction": "Right", "pad_to_multiple_of": null, "pad_id": 1, )"
              R"("pad_type_id": 0, "pad_token": "<|padding|>"})");
  EXPECT_EQ(encode(*fixed, "hij"), (Ids{73, 1944, 1, 1}));
  EXPECT_EQ(encode(*fixed, text), full);
  const auto fixed_left = small_with("null", R"({"strategy": {"Fixed": 4}, "direction": "Left", "pad_id": 1})");
  EXPECT_EQ(encode(*fixed_left, "hij"), (Ids{1, 1, 73, 1944}));
  // BatchLongest: one text is its own batch, so only pad_to_multiple_of pads it (9 ids → 12).
  EXPECT_EQ(encode(*small_with("null", R"({"strategy": "BatchLongest", "pad_id": 1})"), text), full);
  Ids twelve = full;
  twelve.insert(twelve.end(), 3, 1);
  EXPECT_EQ(encode(*small_with("null", R"({"strategy": "BatchLongest", "pad_to_multiple_of": 4, "pad_id": 1})"), text),
            twelve);
  // Both: truncated to 3, then padded to a multiple of 4; each encode() call is one text.
  const auto both = small_with(R"({"max_length": 3})", R"({"strategy": {"Fixed": 2}, "pad_to_multiple_of": 4, "pad_id": 0})");
  Ids ids = {99};
  both->encode(text, &ids);
  both->encode("hij", &ids);
  EXPECT_EQ(ids, (Ids{99, 12092, 13, 1533, 0, 73, 1944, 0, 0}));
}

TEST(BpeTokenizer, BadTruncationAndPaddingAreConfigErrors) {
  const auto error = [](const std::string& truncation, const std::string& padding) {
    try {
      small_with(truncation, padding);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error(R"({"max_length": 4, "strategy": "OnlySecond"})", "null")
                .find("t: truncation.strategy OnlySecond truncates the second text of a pair"),
            std::string::npos);
  EXPECT_NE(error(R"({"stride": 1})", "null").find("t: truncation has no max_length"), std::string::npos);
  EXPECT_NE(error(R"({"max_length": -1})", "null").find("t: truncation.max_length must be a non-negative integer"),
            std::string::npos);
  EXPECT_NE(error(R"({"max_length": 4, "direction": "Up"})", "null")
                .find("t: truncation.direction must be \"Left\" or \"Right\""),
            std::string::npos);
  EXPECT_NE(error("null", R"({"strategy": "Longest"})").find("t: padding.strategy must be \"BatchLongest\" or"),
            std::string::npos);
  EXPECT_NE(error("null", R"({"strategy": "BatchLongest", "pad_id": 50277})")
                .find("t: padding.pad_id 50277 is outside the vocabulary (ids 0 to 50276)"),
            std::string::npos);
}

}  // namespace bpe_tokenizer_test
}  // namespace tzrec::feature
