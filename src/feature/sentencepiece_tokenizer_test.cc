// sentencepiece_tokenizer (feature/sentencepiece_tokenizer.h) on TorchEasyRec's test model
// (tests/data/tokenizer/spiece.model). Expected ids: TorchEasyRec's tokenize_feature_test.py
// (test_tokenize_feature_sentencepiece): "abc efg" -> 703 75 3 15 89 122, "hij" -> 7102 354, the
// default "xyz" -> 3 226 63 172.
#include "feature/sentencepiece_tokenizer.h"

#include <fstream>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::feature {
namespace sentencepiece_tokenizer_test {

using Ids = std::vector<int64_t>;

const std::string kModel = std::string(TZREC_SOURCE_DIR) + "/tests/data/tokenizer/spiece.model";
const std::string kField = "feature_configs[0].tokenize_feature.vocab_file";

Ids encode(const TextTokenizer& t, std::string_view text) {
  Ids ids;
  t.encode(text, &ids);
  return ids;
}

TEST(SentencePieceTokenizer, TorchEasyRecVectors) {
  const SentencePieceTokenizer t(kModel, kField);
  EXPECT_EQ(encode(t, "abc efg"), (Ids{703, 75, 3, 15, 89, 122}));
  EXPECT_EQ(encode(t, "hij"), (Ids{7102, 354}));
  EXPECT_EQ(encode(t, "xyz"), (Ids{3, 226, 63, 172}));
  EXPECT_EQ(encode(t, ""), (Ids{}));
  // Every id is a row of the table.
  for (int64_t id : encode(t, "Hello, world! \u4e2d\u6587 123")) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, t.vocab_size());
  }
}

TEST(SentencePieceTokenizer, BadFilesAreNamed) {
  try {
    SentencePieceTokenizer("/nonexistent/spiece.model", kField);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(kField + ": SentencePiece model '/nonexistent/spiece.model' cannot be read"),
              std::string::npos)
        << e.what();
  }
  const std::string bad = std::string(TZREC_SOURCE_DIR) + "/tests/data/tokenizer/small_tokenizer.json";
  try {
    SentencePieceTokenizer(bad, kField);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("small_tokenizer.json' is not a SentencePiece model"), std::string::npos)
        << e.what();
  }
}

}  // namespace sentencepiece_tokenizer_test
}  // namespace tzrec::feature
