// fg_mode FG_BUCKETIZE (docs/tzrec-compatibility.md §5.2; TorchEasyRec's data.md "fg_mode=FG_BUCKETIZE"):
// each feature's column, named after it, holds feature-generation output before bucketization —
// what the same config's FG writes with `create_fg_json --remove_bucketizer` — and only the
// bucketizer (hash_bucket_size, num_buckets, vocab_*, boundaries) runs. Expected values are computed
// by hand from §5.4 (vocab_list ids: [default, "<OOV>", ...list]; num_buckets: the integer itself;
// boundaries: the number of boundaries <= the value), or are the ids FG_NORMAL gives for the raw
// inputs whose FG output the FG_BUCKETIZE column holds (FG_NORMAL = bucketize(FG without bucketizer)).
#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_registry.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace fg_bucketize_test {

using testing::Floats;
using testing::floats_of;
using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;

const std::string kBucketize = "fg_mode: FG_BUCKETIZE";

std::pair<Ids, Ids> bag(const sparse::Batch& b, const std::string& key) {
  auto j = b.sparse_features[key];
  return {ids_of(j.values), ids_of(j.lengths)};
}

TEST(FgBucketize, IdFeatures) {
  auto p = parser(R"(
    feature_configs { id_feature { feature_name: "n" expression: "user:n_in" num_buckets: 10 embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "v" expression: "user:v_in" vocab_list: ["x", "y"] embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "w" expression: "user:w_in" num_buckets: 10 weighted: true
                                   embedding_dim: 4 } }
    feature_configs { sequence_id_feature { feature_name: "s" expression: "user:s_in" sequence_delim: ";"
                                            sequence_length: 3 num_buckets: 10 embedding_dim: 4 } })",
                  kBucketize);
  // The columns are named after the features (as FG_NONE), not after their inputs.
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"n", "v", "w", "s"}));
  auto b = p.parse(make_batch({{"n", {"3\x03" "7", ""}},
                               {"v", {"y\x03z", "x"}},
                               {"w", {"3:0.5\x03" "7:2", "1:1"}},
                               {"s", {"1;2;3;4", ""}}}));
  EXPECT_EQ(bag(b, "n"), (std::pair<Ids, Ids>{{3, 7}, {2, 0}}));
  EXPECT_EQ(bag(b, "v"), (std::pair<Ids, Ids>{{3, 1, 2}, {2, 1}}));  // y -> 3, z -> <OOV> 1, x -> 2
  EXPECT_EQ(bag(b, "w"), (std::pair<Ids, Ids>{{3, 7, 1}, {2, 1}}));
  EXPECT_EQ(floats_of(b.sparse_features["w"].weights), (Floats{0.5f, 2, 1}));
  // FG output is not truncated again (as FG_NONE); an empty history stays empty.
  EXPECT_EQ(bag(b, "s"), (std::pair<Ids, Ids>{{1, 2, 3, 4}, {4, 0}}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("s")), (Ids{4, 0}));
}

TEST(FgBucketize, HashedValuesMatchFgNormal) {
  const std::string features = R"(
    feature_configs { id_feature { feature_name: "h" expression: "user:h_in" hash_bucket_size: 1000 embedding_dim: 4 } }
    feature_configs { combo_feature { feature_name: "c" expression: ["user:a", "item:b"] hash_bucket_size: 1000
                                      embedding_dim: 4 } })";
  auto normal = parser(features, "fg_mode: FG_NORMAL")
                    .parse(make_batch({{"h_in", {"apple\x1d" "pear"}}, {"a", {"ua"}}, {"b", {"ia\x1dib"}}}));
  // FG output before bucketization: the id feature's tokens, the combo's crossed texts (§5.10).
  auto bucketized =
      parser(features, kBucketize).parse(make_batch({{"h", {"apple\x03pear"}}, {"c", {"ua_ia\x03ua_ib"}}}));
  EXPECT_EQ(bag(bucketized, "h"), bag(normal, "h"));
  EXPECT_EQ(bag(bucketized, "c"), bag(normal, "c"));
  EXPECT_EQ(bag(bucketized, "c").second, (Ids{2}));
}

TEST(FgBucketize, NumbersThroughBoundaries) {
  auto p = parser(R"(
    feature_configs { raw_feature { feature_name: "age" expression: "user:age" boundaries: [18, 25, 30]
                                    normalizer: "method=log10" embedding_dim: 4 } }
    feature_configs { raw_feature { feature_name: "price" expression: "item:price" normalizer: "method=log10" } }
    feature_configs { sequence_raw_feature { feature_name: "ages" expression: "user:ages" sequence_delim: ";"
                                             sequence_length: 5 boundaries: [18, 25, 30] embedding_dim: 4 } }
    feature_configs { lookup_feature { feature_name: "l" map: "user:m" key: "item:k" boundaries: [0, 1, 2, 3, 4]
                                       embedding_dim: 4 } })",
                  kBucketize);
  auto b = p.parse(make_batch({{"age", {"20\x03" "40", "18"}},
                               {"price", {"2.5", "100"}},
                               {"ages", {"17;25;31", "30"}},
                               {"l", {"3.5", "-1"}}}));
  EXPECT_EQ(bag(b, "age"), (std::pair<Ids, Ids>{{1, 3, 1}, {2, 1}}));
  // Dense values are FG output already: no normalizer (it ran in feature generation).
  EXPECT_EQ(floats_of(b.dense_features["price"]), (Floats{2.5f, 100}));
  EXPECT_EQ(bag(b, "ages"), (std::pair<Ids, Ids>{{0, 2, 3, 3}, {3, 1}}));
  EXPECT_EQ(bag(b, "l"), (std::pair<Ids, Ids>{{4, 0}, {1, 1}}));
}

// The other types read their column through the same reader (lookup_values.h OwnEncodedColumn):
// numbers through boundaries, texts through the text bucketizers.
TEST(FgBucketize, OtherFeatureTypes) {
  auto p = parser(R"(
    feature_configs { overlap_feature { feature_name: "o" query: "user:q" title: "item:t" method: "query_common_ratio"
                                        boundaries: [0.3, 0.6] embedding_dim: 4 } }
    feature_configs { kv_dot_product { feature_name: "k" query: "user:q" document: "item:d" boundaries: [1, 10]
                                       embedding_dim: 4 } }
    feature_configs { bool_mask_feature { feature_name: "b" expression: ["user:v", "user:m"] num_buckets: 10
                                          embedding_dim: 4 } }
    feature_configs { expr_feature { feature_name: "e" expression: "a + b" variables: ["user:a", "user:b"]
                                     boundaries: [0, 5] embedding_dim: 4 } })",
                  kBucketize);
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"o", "k", "b", "e"}));
  auto b = p.parse(make_batch({{"o", {"0.5", "0.6"}}, {"k", {"12", "0.5"}}, {"b", {"4\x03" "2", "9"}},
                               {"e", {"-1", "5"}}}));
  EXPECT_EQ(bag(b, "o"), (std::pair<Ids, Ids>{{1, 2}, {1, 1}}));
  EXPECT_EQ(bag(b, "k"), (std::pair<Ids, Ids>{{2, 0}, {1, 1}}));
  EXPECT_EQ(bag(b, "b"), (std::pair<Ids, Ids>{{4, 2, 9}, {2, 1}}));
  EXPECT_EQ(bag(b, "e"), (std::pair<Ids, Ids>{{0, 2}, {1, 1}}));
}

TEST(FgBucketize, Errors) {
  auto p = parser(R"(
    feature_configs { raw_feature { feature_name: "age" expression: "user:age" boundaries: [18, 25, 30]
                                    embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "n" expression: "user:n" num_buckets: 10 embedding_dim: 4 } })",
                  kBucketize);
  try {
    p.parse(make_batch({{"age", {"20", "old"}}, {"n", {"1", "2"}}}));
    ADD_FAILURE() << "a text value went through boundaries";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv line 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("value 'old' of raw feature age is not a number"), std::string::npos)
        << e.what();
  }
  try {
    p.parse(make_batch({{"age", {"20", "21"}}, {"n", {"1", "12"}}}));
    ADD_FAILURE() << "an id outside num_buckets was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range [0, 10)"), std::string::npos) << e.what();
  }
  try {
    build_features(parse_config(R"(data_config { fg_mode: FG_BUCKETIZE }
      feature_configs { match_feature { feature_name: "m" nested_map: "user:m" pkey: "item:p" skey: "item:s"
                                        hash_bucket_size: 10 embedding_dim: 4 } })"));
    ADD_FAILURE() << "match_feature hash_bucket_size under FG_BUCKETIZE was accepted";
  } catch (const NotSupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("feature_configs[0].match_feature.hash_bucket_size under "
                                         "data_config.fg_mode FG_BUCKETIZE"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace fg_bucketize_test
}  // namespace tzrec::feature
