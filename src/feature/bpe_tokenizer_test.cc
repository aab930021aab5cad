// bpe_tokenizer (feature/bpe_tokenizer.h). Expected ids:
//   - TorchEasyRec's tokenize_feature_test.py (data/test/tokenizer.json, GPT-NeoX): "abc efg" ->
//     19758 299 16054, "xyz" -> 35609, "hij" -> 73 1944, "0" -> 17 (its sequence test's default),
//     table size 50277;
//   - the other strings on tests/data/tokenizer/small_tokenizer.json: the ids printed by
//     tests/data/tokenizer/make_small_tokenizer.py, an independent Python implementation run on the
//     full GPT-NeoX file (the cut file keeps the merges these strings use, in their order);
//   - the hand-made tokenizers below: merges applied by hand.
#include "feature/bpe_tokenizer.h"

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

}  // namespace bpe_tokenizer_test
}  // namespace tzrec::feature
