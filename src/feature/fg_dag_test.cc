// FG_DAG inputs (feature/fg_dag.h). Expected values: TorchEasyRec's docs/source/feature/data.md
// example (a lookup keyed by "feature:age_binning", the bucket of raw_feature age with boundaries
// [18, 25, 30], and one keyed by "const:age1"), computed by hand.
#include "feature/fg_dag.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "feature/feature_registry.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace fg_dag_test {

using testing::Floats;
using testing::floats_of;
using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;

std::pair<Ids, Ids> bag(const sparse::Batch& b, const std::string& key) {
  auto j = b.sparse_features[key];
  return {ids_of(j.values), ids_of(j.lengths)};
}

// The docs' example; the consumers come before their producer in the config.
const char* kDocsExample = R"(
  feature_configs { lookup_feature { feature_name: "lookup_age_feat" map: "item:age_map" key: "feature:age_binning"
                                     embedding_dim: 16 boundaries: [0, 1, 2, 3, 4] } }
  feature_configs { lookup_feature { feature_name: "lookup_age_const" map: "item:age_map" key: "const:age1"
                                     embedding_dim: 16 boundaries: [0, 1, 2, 3, 4] } }
  feature_configs { raw_feature { feature_name: "age_binning" expression: "user:age" embedding_dim: 16
                                  boundaries: [18, 25, 30] } })";

TEST(FgDag, DocsExample) {
  auto p = parser(kDocsExample, "fg_mode: FG_DAG");
  // The added columns are not read from the data.
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"age_map", "age"}));
  auto b = p.parse(make_batch({{"age_map", {"1:3.5\x1d" "2:1\x1d" "age1:2", "3:0.5\x1d" "age1:9", "0:1"}},
                               {"age", {"20", "40", ""}}}));
  // age 20 -> bucket 1 -> key "1" -> 3.5 -> bucket 4 of [0..4]; age 40 -> bucket 3 -> 0.5 -> 1;
  // no age: default 0 -> bucket 0 -> key "0" -> 1 -> bucket 2.
  EXPECT_EQ(bag(b, "age_binning"), (std::pair<Ids, Ids>{{1, 3, 0}, {1, 1, 1}}));
  EXPECT_EQ(bag(b, "lookup_age_feat"), (std::pair<Ids, Ids>{{4, 1, 2}, {1, 1, 1}}));
  // const:age1 -> key "age1" -> 2 -> bucket 3; 9 -> bucket 5; no entry: default 0 -> bucket 1.
  EXPECT_EQ(bag(b, "lookup_age_const"), (std::pair<Ids, Ids>{{3, 5, 1}, {1, 1, 1}}));
  // The KJT keeps config order.
  EXPECT_EQ(b.sparse_features.keys(),
            (std::vector<std::string>{"lookup_age_feat", "lookup_age_const", "age_binning"}));
}

// A chain: raw a (dense) -> expr e = 2a (dense) -> raw b over feature:e with boundaries; and a
// hashed id feature's id as another feature's input.
TEST(FgDag, ChainsOfDenseAndSparseOutputs) {
  auto p = parser(R"(
    feature_configs { raw_feature { feature_name: "b" expression: "feature:e" boundaries: [5] embedding_dim: 4 } }
    feature_configs { expr_feature { feature_name: "e" expression: "a * 2" variables: ["feature:a"] } }
    feature_configs { raw_feature { feature_name: "a" expression: "user:x" } }
    feature_configs { id_feature { feature_name: "h" expression: "user:s" num_buckets: 10 embedding_dim: 4 } }
    feature_configs { raw_feature { feature_name: "hv" expression: "feature:h" } })",
                  "fg_mode: FG_DAG");
  auto b = p.parse(make_batch({{"x", {"1.5", "3"}}, {"s", {"7", "2"}}}));
  EXPECT_EQ(floats_of(b.dense_features["e"]), (Floats{3, 6}));
  EXPECT_EQ(bag(b, "b"), (std::pair<Ids, Ids>{{0, 1}, {1, 1}}));
  EXPECT_EQ(floats_of(b.dense_features["hv"]), (Floats{7, 2}));
}

// stub_type (TorchEasyRec's feature.md: an intermediate result of FG, not an output feature): under
// FG_DAG the stub is evaluated for its consumers and left out of the batch; under FG_NONE it is not
// read at all (data_parser.py skips stub features); FG_NORMAL refuses it, as TorchEasyRec does.
std::string with_stub_binning() {
  std::string config = kDocsExample;
  const std::string boundaries = "boundaries: [18, 25, 30]";
  config.replace(config.find(boundaries), boundaries.size(), boundaries + " stub_type: true");
  return config;
}

TEST(FgDag, StubFeatureFeedsItsConsumersOnly) {
  auto p = parser(with_stub_binning(), "fg_mode: FG_DAG");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"age_map", "age"}));
  auto b = p.parse(make_batch({{"age_map", {"1:3.5\x1d" "2:1\x1d" "age1:2", "3:0.5\x1d" "age1:9", "0:1"}},
                               {"age", {"20", "40", ""}}}));
  // The same lookups as DocsExample.
  EXPECT_EQ(bag(b, "lookup_age_feat"), (std::pair<Ids, Ids>{{4, 1, 2}, {1, 1, 1}}));
  EXPECT_EQ(b.sparse_features.keys(), (std::vector<std::string>{"lookup_age_feat", "lookup_age_const"}));
}

TEST(FgDag, StubFeatureUnderOtherModes) {
  auto none = parser(with_stub_binning(), "fg_mode: FG_NONE");
  EXPECT_EQ(none.input_columns(), (std::vector<std::string>{"lookup_age_feat", "lookup_age_const"}));
  auto b = none.parse(make_batch({{"lookup_age_feat", {"4"}}, {"lookup_age_const", {"3"}}}));
  EXPECT_EQ(b.sparse_features.keys(), (std::vector<std::string>{"lookup_age_feat", "lookup_age_const"}));
  try {
    build_features(parse_config("data_config { fg_mode: FG_NORMAL } " + with_stub_binning()));
    ADD_FAILURE() << "FG_NORMAL accepted a stub feature";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("feature_configs[2].raw_feature.stub_type: fg_mode FG_NORMAL does not "
                                         "evaluate intermediate (stub_type) features"),
              std::string::npos)
        << e.what();
  }
}

// FG_NORMAL reads feature: and const: inputs from columns of that name (TorchEasyRec's data.md).
TEST(FgDag, FgNormalReadsColumns) {
  auto p = parser(kDocsExample, "fg_mode: FG_NORMAL");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"age_map", "age_binning", "age1", "age"}));
}

std::string error_of(const std::string& features) {
  try {
    build_features(parse_config("data_config { fg_mode: FG_DAG } " + features));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FgDag, Errors) {
  EXPECT_NE(error_of(R"(feature_configs { raw_feature { feature_name: "a" expression: "feature:nope" } })")
                .find("feature_configs[0].raw_feature: input 'feature:nope' names no feature"),
            std::string::npos);
  EXPECT_NE(error_of(R"(feature_configs { raw_feature { feature_name: "a" expression: "feature:b" } }
                        feature_configs { raw_feature { feature_name: "b" expression: "feature:a" } })")
                .find("(a cycle)"),
            std::string::npos);
  EXPECT_NE(error_of(R"(feature_configs { raw_feature { feature_name: "a" expression: "feature:a" } })")
                .find("feature_configs[0].raw_feature: its feature: inputs lead back to feature a"),
            std::string::npos);
  EXPECT_NE(error_of(R"(feature_configs { sequence_raw_feature { feature_name: "s" expression: "item:s"
                                                                 sequence_delim: ";" sequence_length: 3 } }
                        feature_configs { raw_feature { feature_name: "a" expression: "feature:s" } })")
                .find("not supported yet: feature_configs[1].raw_feature input 'feature:s': the output of a sequence "
                      "feature"),
            std::string::npos);
  EXPECT_NE(error_of(R"(feature_configs { sequence_raw_feature { feature_name: "s" expression: "feature:x"
                                                                 sequence_delim: ";" sequence_length: 3 } })")
                .find("not supported yet: feature_configs[0].sequence_raw_feature.expression 'feature:x' as an input "
                      "of a sequence's items"),
            std::string::npos);
  EXPECT_NE(error_of(R"(feature_configs { raw_feature { feature_name: "a" expression: "other:x" } })")
                .find("side 'other' of 'other:x' is not user, item, context, feature or const"),
            std::string::npos);
}

}  // namespace fg_dag_test
}  // namespace tzrec::feature
