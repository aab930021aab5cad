#include "config/vocab_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/error.h"

namespace tzrec::config {
namespace vocab_file_test {

using Tokens = std::vector<std::pair<std::string, int64_t>>;

std::string vocab(const std::string& name) { return std::string(TZREC_SOURCE_DIR) + "/tests/data/vocab/" + name; }

std::string write_temp(const std::string& text) {
  const std::string path = ::testing::TempDir() + "/vocab_file_test.txt";
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string error_of(const std::string& text) {
  try {
    read_vocab_file(write_temp(text), "feature_configs[0].id_feature.vocab_file");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// TorchEasyRec's test files (tests/data/vocab, from its data/test/) and the table sizes its
// id_feature_test expects of them: 4, 4, 3, 3.
TEST(VocabFile, TorchEasyRecTestFiles) {
  auto list0 = read_vocab_file(vocab("id_vocab_list_0"), "f");
  EXPECT_EQ(list0.tokens, (Tokens{{"<BLK>", 0}, {"<OOV>", 1}, {"abc", 2}, {"efg", 3}}));
  EXPECT_EQ(list0.num_embeddings, 4);
  EXPECT_EQ(read_vocab_file(vocab("id_vocab_list_1"), "f").num_embeddings, 4);
  // "token id" lines; the first line " 0" is the empty token.
  auto dict2 = read_vocab_file(vocab("id_vocab_dict_2"), "f");
  EXPECT_EQ(dict2.tokens, (Tokens{{"", 0}, {"<OOV>", 1}, {"abc", 2}, {"efg", 2}}));
  EXPECT_EQ(dict2.num_embeddings, 3);
  auto dict3 = read_vocab_file(vocab("id_vocab_dict_3"), "f");
  EXPECT_EQ(dict3.tokens, (Tokens{{"xyz", 0}, {"<OOV>", 1}, {"abc", 2}, {"efg", 2}}));
  EXPECT_EQ(dict3.num_embeddings, 3);
}

TEST(VocabFile, CrlfLinesTabsAndSparseIds) {
  const std::string path = write_temp("a\t7\r\nb 2\r\n");
  auto v = read_vocab_file(path, "f");
  EXPECT_EQ(v.tokens, (Tokens{{"a", 7}, {"b", 2}}));
  EXPECT_EQ(v.num_embeddings, 8);  // max id + 1
}

TEST(VocabFile, PathJoinsAssetDir) {
  EXPECT_EQ(vocab_file_path("v.txt", false, "/x"), "v.txt");
  EXPECT_EQ(vocab_file_path("v.txt", true, "/x"), "/x/v.txt");
}

TEST(VocabFile, MalformedFilesNameFileAndLine) {
  EXPECT_NE(error_of("a\n\nb\n").find("line 2: empty line"), std::string::npos);
  EXPECT_NE(error_of("a 0\nb\n").find("line 2: a token alone after"), std::string::npos);
  EXPECT_NE(error_of("a\nb 1\n").find("line 2: \"token id\" after"), std::string::npos);
  EXPECT_NE(error_of("a 0\nb x\n").find("line 2: id 'x' of token 'b' is not a non-negative integer"),
            std::string::npos);
  EXPECT_NE(error_of("a 0\nb -1\n").find("id '-1'"), std::string::npos);
  EXPECT_NE(error_of("a\nb\na\n").find("line 3: token 'a' is listed twice"), std::string::npos);
  EXPECT_NE(error_of("").find("is empty"), std::string::npos);
  const std::string e = error_of("a\n\n");
  EXPECT_EQ(e.rfind("feature_configs[0].id_feature.vocab_file: vocab file ", 0), 0u) << e;
}

TEST(VocabFile, MissingFileAndDefaultBucketizeValue) {
  try {
    read_vocab_file("/nonexistent/v.txt", "feature_configs[1].id_feature.vocab_file");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("feature_configs[1].id_feature.vocab_file: cannot read vocab file "
                                         "/nonexistent/v.txt"),
              std::string::npos);
  }
  try {
    load_feature_vocab_file(vocab("id_vocab_list_0"), "feature_configs[1].id_feature", false);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("feature_configs[1].id_feature.default_bucketize_value: must be set with "
                                         "vocab_file"),
              std::string::npos);
  }
  EXPECT_EQ(load_feature_vocab_file(vocab("id_vocab_list_0"), "f", true).num_embeddings, 4);
}

}  // namespace vocab_file_test
}  // namespace tzrec::config
