// parsed_features_column (feature/parsed_features_text.h): the expected lines are written by hand
// from TorchEasyRec's DataParser.dump_parsed_inputs (tzrec/datasets/data_parser.py) applied to the
// parsed values each test states: "name:value" joined by " | ", ids in decimal, float32 values as
// numpy's str() prints them, weighted ids as sorted "id:weight" strings, sequence items joined by
// the sequence_delim and an item's values by ",".
#include "feature/parsed_features_text.h"

#include <gtest/gtest.h>

#include "feature/feature_parser.h"
#include "feature/testing_config.h"

namespace tzrec::feature {
namespace parsed_features_text_test {

using testing::make_batch;
using testing::parse_config;

std::vector<std::string> lines(const data::StringColumn& c) {
  std::vector<std::string> out;
  for (int64_t r = 0; r < c.size(); ++r) out.emplace_back(c.cell(r));
  return out;
}

TEST(ParsedFeaturesText, FgNoneEveryKindOfFeature) {
  FeatureParser p(parse_config(R"(
    feature_configs { id_feature { feature_name: "cat" embedding_dim: 4 num_buckets: 100 } }
    feature_configs { id_feature { feature_name: "tags" embedding_dim: 4 hash_bucket_size: 100 weighted: true } }
    feature_configs { raw_feature { feature_name: "price" value_dim: 2 } }
    feature_configs { raw_feature { feature_name: "rb" boundaries: [1, 2, 3] embedding_dim: 4 } }
    feature_configs { sequence_id_feature { feature_name: "hist" embedding_dim: 4 num_buckets: 100 } }
    feature_configs { sequence_feature {
      sequence_name: "click" sequence_length: 50 sequence_delim: ";"
      features { id_feature { feature_name: "item" embedding_dim: 8 num_buckets: 100 value_dim: 0 } }
      features { raw_feature { feature_name: "ts" value_dim: 2 } }
    } }
  )"), false);
  // FG_NONE: the columns hold the parsed values themselves (multi-values split by \x03).
  const auto batch = p.parse(make_batch({{"cat", {"1\x03" "12", ""}},
                                         {"tags", {"7:1.5\x03" "30:0.1\x03" "5:2", "4:0.0001"}},
                                         {"price", {"0.1\x03" "-2", "123456789\x03" "1e-5"}},
                                         {"rb", {"2", "0"}},
                                         {"hist", {"7;8;9", ""}},
                                         {"click__item", {"1\x03" "2;3", "4"}},
                                         {"click__ts", {"1\x03" "2.5;3\x03" "4", "5\x03" "6"}}}));
  const auto column = parsed_features_column(p.features(), batch);
  EXPECT_EQ(column.name, "__features__");
  // "30:0.1" < "5:2.0" < "7:1.5" as strings; float32(123456789) is 123456792, numpy's shortest
  // float32 digits 123456790.0; float32(1e-5) prints 1e-05 and float32(0.0001) 1e-04.
  EXPECT_EQ(lines(column),
            (std::vector<std::string>{
                "cat:1,12 | tags:30:0.1,5:2.0,7:1.5 | price:0.1,-2.0 | rb:2 | hist:7;8;9 | click__item:1,2;3 | "
                "click__ts:1.0,2.5;3.0,4.0",
                "cat: | tags:4:1e-04 | price:123456790.0,1e-05 | rb:0 | hist: | click__item:4 | click__ts:5.0,6.0"}));
}

TEST(ParsedFeaturesText, FgDagLeavesStubsOut) {
  FeatureParser p(parse_config(R"(
    data_config { fg_mode: FG_DAG }
    feature_configs { raw_feature { feature_name: "p" expression: "item:price" stub_type: true } }
    feature_configs { raw_feature { feature_name: "q" expression: "feature:p" boundaries: [1, 10] embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "u" expression: "user:uid" hash_bucket_size: 1000 embedding_dim: 4 } }
  )"), false);
  const auto batch = p.parse(make_batch({{"price", {"5", "0.5"}}, {"uid", {"3", "3"}}}));
  // q: 5 lies in [1, 10) -> bucket 1, 0.5 below 1 -> bucket 0; u: std::hash("3") % 1000, taken
  // from the batch (the id itself is what the parser tests check).
  const int64_t u = batch.sparse_features["u"].values[0].item<int64_t>();
  const std::string ustr = std::to_string(u);
  EXPECT_EQ(lines(parsed_features_column(p.features(), batch)),
            (std::vector<std::string>{"q:1 | u:" + ustr, "q:0 | u:" + ustr}));
}

}  // namespace parsed_features_text_test
}  // namespace tzrec::feature
