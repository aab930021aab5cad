// vocab_file on id, combo, lookup and match features (config/vocab_file.h), and the assets that
// carry the files into export packages and next to fg.json (feature/assets.h). Expected values:
// TorchEasyRec's id_feature_test.py test_id_feature_with_vocab_file (its four vocab files, copied
// to tests/data/vocab) and hand computation from docs/source/feature/feature.md (vocab_file).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "feature/assets.h"
#include "feature/feature_registry.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace vocab_file_feature_test {

using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;

std::string vocab(const std::string& name) { return std::string(TZREC_SOURCE_DIR) + "/tests/data/vocab/" + name; }

std::pair<Ids, Ids> bag(const sparse::Batch& b, const std::string& key) {
  auto j = b.sparse_features[key];
  return {ids_of(j.values), ids_of(j.lengths)};
}

std::string id_feature(const std::string& name, const std::string& file, const std::string& default_value) {
  return "feature_configs { id_feature { feature_name: \"" + name + "\" expression: \"user:id_str\" vocab_file: \"" +
         vocab(file) + "\" default_bucketize_value: 1 default_value: \"" + default_value +
         "\" embedding_dim: 16 pooling: \"mean\" } }";
}

// test_id_feature_with_vocab_file: input ["abc\x1defg", "", "hij"].
TEST(VocabFileFeature, IdFeatureAsTorchEasyRec) {
  const std::string features = id_feature("l0", "id_vocab_list_0", "") + id_feature("l1", "id_vocab_list_1", "xyz") +
                               id_feature("d2", "id_vocab_dict_2", "") + id_feature("d3", "id_vocab_dict_3", "xyz");
  auto p = parser(features, "fg_mode: FG_NORMAL");
  const auto& built = p.features();
  ASSERT_EQ(built.size(), 4u);
  EXPECT_EQ(built[0]->info().num_embeddings, 4);
  EXPECT_EQ(built[1]->info().num_embeddings, 4);
  EXPECT_EQ(built[2]->info().num_embeddings, 3);
  EXPECT_EQ(built[3]->info().num_embeddings, 3);
  auto b = p.parse(make_batch({{"id_str", {"abc\x1d" "efg", "", "hij"}}}));
  EXPECT_EQ(bag(b, "l0"), (std::pair<Ids, Ids>{{2, 3, 1}, {2, 0, 1}}));
  EXPECT_EQ(bag(b, "l1"), (std::pair<Ids, Ids>{{2, 3, 0, 1}, {2, 1, 1}}));
  EXPECT_EQ(bag(b, "d2"), (std::pair<Ids, Ids>{{2, 2, 1}, {2, 0, 1}}));
  EXPECT_EQ(bag(b, "d3"), (std::pair<Ids, Ids>{{2, 2, 0, 1}, {2, 1, 1}}));
}

// FG_NONE reads ids; the vocab file still sizes the table (ids outside it are a DataError).
TEST(VocabFileFeature, FgNoneSizesTheTable) {
  auto p = parser("feature_configs { id_feature { feature_name: \"v\" expression: \"user:v\" vocab_file: \"" + vocab("id_vocab_dict_2") +
                  "\" default_bucketize_value: 1 embedding_dim: 4 } }");
  EXPECT_EQ(p.features()[0]->info().num_embeddings, 3);
  EXPECT_EQ(bag(p.parse(make_batch({{"v", {"2", "0"}}})), "v"), (std::pair<Ids, Ids>{{2, 0}, {1, 1}}));
  EXPECT_THROW(p.parse(make_batch({{"v", {"3"}}})), DataError);
}

// combo_feature (hash of the joined values looked up as text), lookup_feature and match_feature
// (the map values looked up) with a vocab file: tokens -> their ids, anything else ->
// default_bucketize_value.
TEST(VocabFileFeature, ComboLookupMatch) {
  const std::string file = vocab("id_vocab_list_1");  // xyz 0, <OOV> 1, abc 2, efg 3
  auto p = parser(
      "feature_configs { combo_feature { feature_name: \"c\" expression: [\"user:a\", \"item:b\"] vocab_file: \"" +
          file +
          "\" default_bucketize_value: 1 embedding_dim: 4 } }"
          "feature_configs { lookup_feature { feature_name: \"l\" map: \"user:m\" key: \"item:k\" vocab_file: \"" +
          file +
          "\" default_bucketize_value: 0 embedding_dim: 4 } }"
          "feature_configs { match_feature { feature_name: \"t\" nested_map: \"user:n\" pkey: \"item:p\" skey: "
          "\"item:s\" vocab_file: \"" +
          file + "\" default_bucketize_value: 1 embedding_dim: 4 } }",
      "fg_mode: FG_NORMAL");
  EXPECT_EQ(p.features()[0]->info().num_embeddings, 4);
  EXPECT_EQ(p.features()[2]->info().num_embeddings, 4);
  auto b = p.parse(make_batch({{"a", {"ab", "x"}},
                               {"b", {"c", "y"}},
                               {"m", {"k1:abc\x1dk2:efg", "k1:zzz"}},
                               {"k", {"k2", "k1"}},
                               {"n", {"p1^s1:efg", "p1^s1:qq"}},
                               {"p", {"p1", "p1"}},
                               {"s", {"s1", "s1"}}}));
  // combo "ab_c" and "x_y" are not in the file: default_bucketize_value 1.
  EXPECT_EQ(bag(b, "c"), (std::pair<Ids, Ids>{{1, 1}, {1, 1}}));
  EXPECT_EQ(bag(b, "l"), (std::pair<Ids, Ids>{{3, 0}, {1, 1}}));
  EXPECT_EQ(bag(b, "t"), (std::pair<Ids, Ids>{{3, 1}, {1, 1}}));
}

TEST(VocabFileFeature, ConfigErrorsNameTheField) {
  auto error_of = [](const std::string& features) -> std::string {
    try {
      build_features(parse_config("data_config { fg_mode: FG_NORMAL } " + features));
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("feature_configs { id_feature { feature_name: \"v\" expression: \"user:v\" vocab_file: \"" + vocab("id_vocab_list_0") +
                     "\" embedding_dim: 4 } }")
                .find("feature_configs[0].id_feature.default_bucketize_value: must be set with vocab_file"),
            std::string::npos);
  EXPECT_NE(error_of("feature_configs { lookup_feature { feature_name: \"v\" map: \"user:m\" key: \"item:k\" "
                     "vocab_file: \"missing.txt\" default_bucketize_value: 1 embedding_dim: 4 } }")
                .find("feature_configs[0].lookup_feature.vocab_file: cannot read vocab file missing.txt"),
            std::string::npos);
  // default_bucketize_value must be a row of the file's table.
  EXPECT_NE(error_of("feature_configs { id_feature { feature_name: \"v\" expression: \"user:v\" vocab_file: \"" + vocab("id_vocab_dict_2") +
                     "\" default_bucketize_value: 3 embedding_dim: 4 } }")
                .find("default_bucketize_value: 3 is outside the table [0, 3)"),
            std::string::npos);
  // asset_dir is joined to the file name.
  EXPECT_EQ(error_of("feature_configs { id_feature { feature_name: \"v\" expression: \"user:v\" vocab_file: \"id_vocab_list_0\" asset_dir: "
                     "\"" + std::string(TZREC_SOURCE_DIR) + "/tests/data/vocab\" default_bucketize_value: 1 "
                     "embedding_dim: 4 } }"),
            "");
}

// TorchEasyRec's _copy_assets: "<stem>_<md5><ext>" in the target directory, the config pointing at
// the copy (asset_dir set or cleared); an export package's config rebased where it is loaded.
TEST(VocabFileFeature, AssetsAreCopiedAndTheConfigPointsAtThem) {
  const std::string dir = ::testing::TempDir() + "/vocab_assets_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  auto config = parse_config(
      "data_config { fg_mode: FG_DAG } "
      "feature_configs { id_feature { feature_name: \"a\" expression: \"user:a\" hash_bucket_size: 10 "
      "embedding_dim: 4 } }"
      "feature_configs { sequence_feature { sequence_name: \"s\" sequence_length: 5 sequence_delim: \";\" "
      "features { id_feature { feature_name: \"v\" expression: \"item:v\" vocab_file: \"" +
      vocab("id_vocab_list_0") + "\" default_bucketize_value: 1 embedding_dim: 4 } } } }");
  EXPECT_EQ(asset_file_name(vocab("id_vocab_list_0")), "id_vocab_list_0_583794bd44eb2c6d83336c71258521e8");
  relocate_assets(&config, dir, "/packages/model");
  const auto& v = config.feature_configs(1).sequence_feature().features(0).id_feature();
  EXPECT_EQ(v.vocab_file(), "id_vocab_list_0_583794bd44eb2c6d83336c71258521e8");
  EXPECT_EQ(v.asset_dir(), "/packages/model");
  EXPECT_FALSE(config.feature_configs(0).id_feature().has_asset_dir());
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/" + v.vocab_file()));
  rebase_asset_dirs(&config, dir);
  EXPECT_EQ(config.feature_configs(1).sequence_feature().features(0).id_feature().asset_dir(), dir);
  EXPECT_NO_THROW(build_features(config));  // the copy is read from its new place
  EXPECT_THROW(asset_file_name(dir + "/missing"), IoError);
  std::filesystem::remove_all(dir);
}

}  // namespace vocab_file_feature_test
}  // namespace tzrec::feature
