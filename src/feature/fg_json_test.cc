// fg.json (feature/fg_json.h and each type's fg_json_entries()). Expected documents are written by
// hand, key by key in the order TorchEasyRec's code inserts them:
//   - tzrec/features/feature_test.py test_create_fg_json and test_create_fg_json_remove_bucketizer
//     (the features this engine has: cat_a, int_a, combo_c, lookup_d, match_e,
//     click_seq_int_simple and the click_seq group; its assertEqual ignores key order, the order
//     here is the insertion order of id_feature.py, raw_feature.py, combo_feature.py,
//     lookup_feature.py, match_feature.py and BaseFeature.fg_json / create_fg_json in feature.py);
//   - the other cases from those _fg_json() methods and docs/source/feature/feature.md;
//   - the text from Python's json.dump(doc, f, indent=4) (tools/create_fg_json.py), run on the
//     same document by hand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "feature/feature.h"
#include "feature/fg_json.h"
#include "feature/testing_config.h"

namespace tzrec::feature {
namespace fg_json_test {

using testing::parse_config;

void expect_json(const nlohmann::ordered_json& actual, const std::string& expected) {
  EXPECT_EQ(actual.dump(2), nlohmann::ordered_json::parse(expected).dump(2));
}

nlohmann::ordered_json fg_json_of(const std::string& config_text, const FgJsonOptions& options = {}) {
  return create_fg_json(parse_config(config_text), options);
}

// TorchEasyRec's vocab file data/test/id_vocab_list_0 (tests/data/vocab); its copy is named
// id_vocab_list_0_583794bd44eb2c6d83336c71258521e8 in TorchEasyRec's test.
const std::string kVocabList0 = std::string(TZREC_SOURCE_DIR) + "/tests/data/vocab/id_vocab_list_0";

// TorchEasyRec's feature_test.py _create_test_feature_cfgs (minus expr_f — see the ExprFeature test — and
// token_g, whose type this engine does not have), with embedding_dim.
const std::string kTorchEasyRecFeatures = R"(
  data_config { fg_mode: FG_DAG }
  feature_configs { id_feature { feature_name: "cat_a" expression: "item:cat_a" num_buckets: 100 embedding_dim: 8 } }
  feature_configs { raw_feature { feature_name: "int_a" expression: "item:int_a" boundaries: [1, 2, 3]
                                  embedding_dim: 8 } }
  feature_configs { combo_feature { feature_name: "combo_c" expression: ["user:combo_uc", "item:combo_ic"]
                                    hash_bucket_size: 1000 embedding_dim: 8 } }
  feature_configs { lookup_feature { feature_name: "lookup_d" map: "user:map_d" key: "item:key_d"
                                     vocab_list: ["a", "b", "c"] embedding_dim: 8 } }
  feature_configs { match_feature { feature_name: "match_e" nested_map: "user:nested_map" pkey: "item:key_e"
                                    skey: "item:key_f" vocab_dict { key: "e" value: 2 } vocab_dict { key: "f" value: 3 }
                                    vocab_dict { key: "g" value: 4 } embedding_dim: 8 } }
  feature_configs { sequence_id_feature { feature_name: "click_seq_cat_simple" expression: "item:click_seq_cat_simple"
                                          sequence_length: 50 sequence_delim: ";" vocab_file: ")" +
                                          kVocabList0 + R"(" default_bucketize_value: 0 embedding_dim: 8 } }
  feature_configs { sequence_raw_feature { feature_name: "click_seq_int_simple" expression: "user:click_seq_int_simple"
                                           sequence_length: 50 sequence_delim: ";" } }
  feature_configs { sequence_feature {
    sequence_name: "click_seq" sequence_length: 50 sequence_delim: ";" sequence_pk: "user:click_seq"
    features { id_feature { feature_name: "cat_a" expression: "item:cat_a" hash_bucket_size: 10 embedding_dim: 8 } }
    features { raw_feature { feature_name: "int_a" expression: "item:int_a" boundaries: [7, 8, 9] embedding_dim: 8 } }
  } }
)";

// The document of kTorchEasyRecFeatures with click_seq_cat_simple's vocab_file `vocab_file`.
std::string torch_easy_rec_fg_json(const std::string& vocab_file) {
  return R"({"features": [
    {"feature_type": "id_feature", "feature_name": "cat_a", "default_value": "", "expression": "item:cat_a",
     "value_type": "string", "need_prefix": false, "num_buckets": 100, "value_dim": 0},
    {"feature_type": "raw_feature", "feature_name": "int_a", "default_value": "0", "expression": "item:int_a",
     "value_type": "float", "boundaries": [1.0, 2.0, 3.0]},
    {"feature_type": "combo_feature", "feature_name": "combo_c", "default_value": "",
     "expression": ["user:combo_uc", "item:combo_ic"], "value_type": "string", "need_prefix": false, "value_dim": 0,
     "hash_bucket_size": 1000},
    {"feature_type": "lookup_feature", "feature_name": "lookup_d", "map": "user:map_d", "key": "item:key_d",
     "default_value": "0", "value_type": "string", "needDiscrete": true, "needKey": false, "combiner": "",
     "vocab_list": ["0", "<OOV>", "a", "b", "c"], "default_bucketize_value": 1, "value_dim": 1},
    {"feature_type": "match_feature", "feature_name": "match_e", "user": "user:nested_map", "category": "item:key_e",
     "item": "item:key_f", "matchType": "hit", "default_value": "0", "value_type": "string", "needDiscrete": true,
     "show_category": false, "show_item": false, "vocab_dict": {"e": 2, "f": 3, "g": 4, "0": 0},
     "default_bucketize_value": 1, "value_dim": 1},
    {"feature_type": "sequence_id_feature", "feature_name": "click_seq_cat_simple", "default_value": "0",
     "expression": "item:click_seq_cat_simple", "value_type": "string", "need_prefix": false,
     "vocab_file": ")" + vocab_file + R"(", "default_bucketize_value": 0, "value_dim": 1, "sequence_delim": ";",
     "sequence_length": 50},
    {"feature_type": "sequence_raw_feature", "feature_name": "click_seq_int_simple", "default_value": "0",
     "expression": "user:click_seq_int_simple", "value_type": "float", "sequence_delim": ";", "sequence_length": 50},
    {"sequence_name": "click_seq", "sequence_length": 50, "sequence_delim": ";", "sequence_pk": "user:click_seq",
     "features": [
       {"feature_type": "id_feature", "feature_name": "cat_a", "default_value": "0", "expression": "item:cat_a",
        "value_type": "string", "need_prefix": false, "hash_bucket_size": 10, "value_dim": 1},
       {"feature_type": "raw_feature", "feature_name": "int_a", "default_value": "0", "expression": "item:int_a",
        "value_type": "float", "boundaries": [7.0, 8.0, 9.0]}]}
  ]})";
}

TEST(FgJson, TorchEasyRecCreateFgJson) {
  expect_json(fg_json_of(kTorchEasyRecFeatures), torch_easy_rec_fg_json(kVocabList0));
}

// create_fg_json(features, asset_dir=...): the vocab file is copied into asset_dir under the name
// TorchEasyRec's test expects, and the entry names the copy.
TEST(FgJson, TorchEasyRecCreateFgJsonWithAssetDir) {
  const std::string dir = ::testing::TempDir() + "/fg_json_assets_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  FgJsonOptions options;
  options.asset_dir = dir;
  const std::string copy = "id_vocab_list_0_583794bd44eb2c6d83336c71258521e8";
  expect_json(fg_json_of(kTorchEasyRecFeatures, options), torch_easy_rec_fg_json(copy));
  std::ifstream in(dir + "/" + copy);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_EQ(bytes.str(), "<BLK>\n<OOV>\nabc\nefg\n");
  std::filesystem::remove_all(dir);
}

TEST(FgJson, TorchEasyRecRemoveBucketizer) {
  FgJsonOptions options;
  options.remove_bucketizer = true;
  expect_json(fg_json_of(kTorchEasyRecFeatures, options), R"({"features": [
    {"feature_type": "id_feature", "feature_name": "cat_a", "default_value": "", "expression": "item:cat_a",
     "value_type": "string", "need_prefix": false, "value_dim": 0},
    {"feature_type": "raw_feature", "feature_name": "int_a", "default_value": "0", "expression": "item:int_a",
     "value_type": "float"},
    {"feature_type": "combo_feature", "feature_name": "combo_c", "default_value": "",
     "expression": ["user:combo_uc", "item:combo_ic"], "value_type": "string", "need_prefix": false, "value_dim": 0},
    {"feature_type": "lookup_feature", "feature_name": "lookup_d", "map": "user:map_d", "key": "item:key_d",
     "default_value": "0", "value_type": "string", "needDiscrete": true, "needKey": false, "combiner": "",
     "default_bucketize_value": 1, "value_dim": 1},
    {"feature_type": "match_feature", "feature_name": "match_e", "user": "user:nested_map", "category": "item:key_e",
     "item": "item:key_f", "matchType": "hit", "default_value": "0", "value_type": "string", "needDiscrete": true,
     "show_category": false, "show_item": false, "default_bucketize_value": 1, "value_dim": 1},
    {"feature_type": "sequence_id_feature", "feature_name": "click_seq_cat_simple", "default_value": "0",
     "expression": "item:click_seq_cat_simple", "value_type": "string", "need_prefix": false,
     "default_bucketize_value": 0, "value_dim": 1, "sequence_delim": ";", "sequence_length": 50},
    {"feature_type": "sequence_raw_feature", "feature_name": "click_seq_int_simple", "default_value": "0",
     "expression": "user:click_seq_int_simple", "value_type": "float", "sequence_delim": ";", "sequence_length": 50},
    {"sequence_name": "click_seq", "sequence_length": 50, "sequence_delim": ";", "sequence_pk": "user:click_seq",
     "features": [
       {"feature_type": "id_feature", "feature_name": "cat_a", "default_value": "0", "expression": "item:cat_a",
        "value_type": "string", "need_prefix": false, "value_dim": 1},
       {"feature_type": "raw_feature", "feature_name": "int_a", "default_value": "0", "expression": "item:int_a",
        "value_type": "float"}]}
  ]})");
}

// tools/create_fg_json.py: "reserves" after "features", names as given (stripped).
TEST(FgJson, Reserves) {
  FgJsonOptions options;
  options.reserves = std::vector<std::string>{"label", "request_id"};
  const auto doc = fg_json_of(R"(feature_configs { id_feature { feature_name: "u" expression: "user:u"
                                 hash_bucket_size: 7 embedding_dim: 4 } })",
                              options);
  expect_json(doc, R"({"features": [
    {"feature_type": "id_feature", "feature_name": "u", "default_value": "", "expression": "user:u",
     "value_type": "string", "need_prefix": false, "hash_bucket_size": 7, "value_dim": 0}],
    "reserves": ["label", "request_id"]})");
}

// IdFeature._fg_json: separator only when not "\x1d"; hash_bucket_size > vocab_list > vocab_dict >
// num_buckets; vocab_list with default_bucketize_value as is; weighted; value_dim as configured;
// fg_value_type overrides value_type in place; sequence_id_feature gets the "sequence_" prefix,
// sequence_delim, sequence_length and default "0".
TEST(FgJson, IdFeature) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { id_feature { feature_name: "a" expression: "user:a" separator: "," hash_bucket_size: 100
                                   num_buckets: 5 embedding_dim: 4 weighted: true fg_value_type: "string" } }
    feature_configs { id_feature { feature_name: "b" expression: "item:b" vocab_list: ["x", "y"]
                                   default_bucketize_value: 1 value_dim: 1 default_value: "x" embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "c" expression: "item:c" default_value: "m" embedding_dim: 4
                                   vocab_dict { key: "z" value: 4 } vocab_dict { key: "m" value: 3 }
                                   vocab_dict { key: "k" value: 2 } } }
    feature_configs { sequence_id_feature { feature_name: "s" expression: "user:s" sequence_length: 20
                                            sequence_delim: "|" num_buckets: 9 embedding_dim: 4 } }
  )"),
              R"({"features": [
    {"feature_type": "id_feature", "feature_name": "a", "default_value": "", "expression": "user:a",
     "value_type": "string", "need_prefix": false, "separator": ",", "hash_bucket_size": 100, "weighted": true,
     "value_dim": 0},
    {"feature_type": "id_feature", "feature_name": "b", "default_value": "x", "expression": "item:b",
     "value_type": "string", "need_prefix": false, "vocab_list": ["x", "y"], "default_bucketize_value": 1,
     "value_dim": 1},
    {"feature_type": "id_feature", "feature_name": "c", "default_value": "m", "expression": "item:c",
     "value_type": "string", "need_prefix": false, "vocab_dict": {"k": 2, "m": 0, "z": 4},
     "default_bucketize_value": 1, "value_dim": 0},
    {"feature_type": "sequence_id_feature", "feature_name": "s", "default_value": "0", "expression": "user:s",
     "value_type": "string", "need_prefix": false, "num_buckets": 9, "value_dim": 1, "sequence_delim": "|",
     "sequence_length": 20}
  ]})");
}

// RawFeature._fg_json: separator and value_dim only for value_dim > 1, normalizer when set.
TEST(FgJson, RawFeature) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { raw_feature { feature_name: "p" expression: "item:p" normalizer: "method=log10" } }
    feature_configs { raw_feature { feature_name: "v" expression: "user:v" value_dim: 3 separator: ","
                                    default_value: "1" } }
    feature_configs { raw_feature { feature_name: "w" expression: "user:w" value_dim: 2 } }
  )"),
              R"({"features": [
    {"feature_type": "raw_feature", "feature_name": "p", "default_value": "0", "expression": "item:p",
     "value_type": "float", "normalizer": "method=log10"},
    {"feature_type": "raw_feature", "feature_name": "v", "default_value": "1", "expression": "user:v",
     "value_type": "float", "separator": ",", "value_dim": 3},
    {"feature_type": "raw_feature", "feature_name": "w", "default_value": "0", "expression": "user:w",
     "value_type": "float", "value_dim": 2}
  ]})");
}

// ComboFeature._fg_json: value_dim is the configured field; vocab_list gets [default, "<OOV>"].
TEST(FgJson, ComboFeature) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { combo_feature { feature_name: "c" expression: ["user:a", "item:b"] vocab_list: ["1_2"]
                                      value_dim: 2 separator: ";" embedding_dim: 4 } }
  )"),
              R"({"features": [
    {"feature_type": "combo_feature", "feature_name": "c", "default_value": "", "expression": ["user:a", "item:b"],
     "value_type": "string", "need_prefix": false, "value_dim": 2, "separator": ";",
     "vocab_list": ["", "<OOV>", "1_2"], "default_bucketize_value": 1}
  ]})");
}

// ExprFeature._fg_json: TorchEasyRec's expr_f of feature_test.py test_create_fg_json (its config and
// its expected entry); separator, fill_missing and value_dim written only when set, a sequence's
// empty default "0" and the sequence_ prefix (BaseFeature.fg_json).
TEST(FgJson, ExprFeature) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_DAG }
    feature_configs { expr_feature { feature_name: "expr_f" expression: "int_g+int_h"
                                     variables: ["item:int_g", "item:int_h"] boundaries: [4, 5, 6] embedding_dim: 8 } }
  )"),
              R"({"features": [
    {"feature_type": "expr_feature", "feature_name": "expr_f", "default_value": "0", "expression": "int_g+int_h",
     "variables": ["item:int_g", "item:int_h"], "value_type": "float", "boundaries": [4.0, 5.0, 6.0]}
  ]})");
  expect_json(fg_json_of(R"pb(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { sequence_expr_feature { feature_name: "e" expression: "dot(a, b)" variables: ["user:a", "item:b"]
                                              separator: ";" fill_missing: 0.5 value_dim: 2 default_value: ""
                                              sequence_length: 20 sequence_delim: "|" } }
  )pb"),
              R"json({"features": [
    {"feature_type": "sequence_expr_feature", "feature_name": "e", "default_value": "0", "expression": "dot(a, b)",
     "variables": ["user:a", "item:b"], "value_type": "float", "separator": ";", "fill_missing": 0.5,
     "value_dim": 2, "sequence_delim": "|", "sequence_length": 20}
  ]})json");
}

// LookupFeature._fg_json: numeric values keep value_type "float" and the lower-cased combiner (no
// value_dim); combiner "" or need_discrete write value_dim; boundaries after the normalizer.
TEST(FgJson, LookupFeatureNumeric) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { lookup_feature { feature_name: "l1" map: "user:m" key: "item:k" combiner: "MEAN"
                                       normalizer: "method=log10" } }
    feature_configs { lookup_feature { feature_name: "l2" map: "user:m" key: "item:k" combiner: ""
                                       boundaries: [0.5, 1.5] embedding_dim: 4 } }
    feature_configs { lookup_feature { feature_name: "l3" map: "user:m" key: "item:k" need_discrete: true
                                       value_dim: 0 boundaries: [0.5] embedding_dim: 4 separator: "," } }
  )"),
              R"({"features": [
    {"feature_type": "lookup_feature", "feature_name": "l1", "map": "user:m", "key": "item:k", "default_value": "0",
     "value_type": "float", "needDiscrete": false, "needKey": false, "combiner": "mean",
     "normalizer": "method=log10"},
    {"feature_type": "lookup_feature", "feature_name": "l2", "map": "user:m", "key": "item:k", "default_value": "0",
     "value_type": "float", "needDiscrete": false, "needKey": false, "combiner": "", "boundaries": [0.5, 1.5],
     "value_dim": 1},
    {"feature_type": "lookup_feature", "feature_name": "l3", "map": "user:m", "key": "item:k", "default_value": "0",
     "value_type": "float", "needDiscrete": true, "needKey": false, "combiner": "", "separator": ",",
     "boundaries": [0.5], "value_dim": 0}
  ]})");
}

// LookupFeature._fg_json with value_dim > 1: a stub lookup "<name>__lookup" of texts (defaults
// joined by value_separator) and a raw_feature reading it; in a grouped sequence the raw entry lists
// the stub in sequence_fields.
TEST(FgJson, LookupFeatureValueDim) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { lookup_feature { feature_name: "vec" map: "user:m" key: "item:k" value_dim: 3
                                       value_separator: "|" default_value: "0.5" normalizer: "method=log10" } }
    feature_configs { sequence_feature {
      sequence_name: "hist" sequence_length: 10 sequence_delim: ";"
      features { lookup_feature { feature_name: "sv" map: "user:m" key: "item:k" value_dim: 2 boundaries: [1]
                                  embedding_dim: 4 sequence_fields: ["k"] } }
    } }
  )"),
              R"({"features": [
    {"feature_type": "lookup_feature", "feature_name": "vec__lookup", "map": "user:m", "key": "item:k",
     "default_value": "0.5|0.5|0.5", "value_type": "string", "needDiscrete": true, "needKey": false, "combiner": "",
     "value_dim": 1, "stub_type": true},
    {"feature_type": "raw_feature", "feature_name": "vec", "default_value": "0.5", "expression": "feature:vec__lookup",
     "separator": "|", "value_dim": 3, "value_type": "float", "normalizer": "method=log10"},
    {"sequence_name": "hist", "sequence_length": 10, "sequence_delim": ";", "sequence_pk": "user:hist",
     "features": [
       {"feature_type": "lookup_feature", "feature_name": "sv__lookup", "map": "user:m", "key": "item:k",
        "default_value": "0,0", "value_type": "string", "needDiscrete": true, "needKey": false, "combiner": "",
        "value_dim": 1, "stub_type": true, "sequence_fields": ["k"]},
       {"feature_type": "raw_feature", "feature_name": "sv", "default_value": "0", "expression": "feature:sv__lookup",
        "separator": ",", "value_dim": 2, "value_type": "float", "boundaries": [1.0],
        "sequence_fields": ["sv__lookup"]}]}
  ]})");
}

// MatchFeature._fg_json: "ALL" makes matchType "multihit"; a text bucketizer makes the values
// discrete strings with value_dim; a dense match writes no value_dim. A stand-alone sequence gets
// the sequence keys appended.
TEST(FgJson, MatchFeature) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { match_feature { feature_name: "m1" nested_map: "user:nm" pkey: "ALL" skey: "item:s"
                                      hash_bucket_size: 100 show_skey: true embedding_dim: 4 } }
    feature_configs { match_feature { feature_name: "m2" nested_map: "user:nm" pkey: "item:p" skey: "item:s"
                                      normalizer: "method=log10" } }
    feature_configs { sequence_match_feature { feature_name: "m3" nested_map: "user:nm" pkey: "item:p"
                                               skey: "item:s" num_buckets: 10 value_dim: 0 embedding_dim: 4
                                               sequence_length: 5 sequence_delim: ";" } }
  )"),
              R"({"features": [
    {"feature_type": "match_feature", "feature_name": "m1", "user": "user:nm", "category": "ALL", "item": "item:s",
     "matchType": "multihit", "default_value": "0", "value_type": "string", "needDiscrete": true,
     "show_category": false, "show_item": true, "hash_bucket_size": 100, "value_dim": 1},
    {"feature_type": "match_feature", "feature_name": "m2", "user": "user:nm", "category": "item:p", "item": "item:s",
     "matchType": "hit", "default_value": "0", "value_type": "float", "needDiscrete": false,
     "show_category": false, "show_item": false, "normalizer": "method=log10"},
    {"feature_type": "sequence_match_feature", "feature_name": "m3", "user": "user:nm", "category": "item:p",
     "item": "item:s", "matchType": "hit", "default_value": "0", "value_type": "string", "needDiscrete": true,
     "show_category": false, "show_item": false, "num_buckets": 10, "value_dim": 0, "sequence_delim": ";",
     "sequence_length": 5}
  ]})");
}

// zch (docs/tzrec-compatibility.md §5.12): id_feature.py, combo_feature.py, lookup_feature.py and
// match_feature.py write hash_bucket_size MAX_HASH_BUCKET_SIZE (2^63 - 1) in place of every other
// bucketizer; a lookup's value_type becomes "string", which makes it needDiscrete with combiner ""
// and value_dim (need_discrete not set); a match's value_type "string" and needDiscrete true.
// (custom_feature and bool_mask_feature: their own tests, custom_feature_test.cc and
// bool_mask_feature_test.cc.)
TEST(FgJson, ZchFeatures) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { id_feature { feature_name: "i" expression: "user:i" num_buckets: 10 embedding_dim: 4
                                   zch { zch_size: 100 lfu {} } } }
    feature_configs { combo_feature { feature_name: "c" expression: ["user:a", "item:b"] hash_bucket_size: 10
                                      embedding_dim: 4 zch { zch_size: 100 lfu {} } } }
    feature_configs { sequence_combo_feature { feature_name: "sc" expression: ["user:a", "item:b"] vocab_list: ["x"]
                                               embedding_dim: 4 sequence_length: 5 sequence_delim: ";"
                                               zch { zch_size: 100 lru {} } } }
    feature_configs { lookup_feature { feature_name: "l" map: "user:m" key: "item:k" boundaries: [0.5]
                                       embedding_dim: 4 zch { zch_size: 100 lfu {} } } }
    feature_configs { match_feature { feature_name: "m" nested_map: "user:nm" pkey: "item:p" skey: "item:s"
                                      embedding_dim: 4 zch { zch_size: 100 lfu {} } } }
  )"),
              R"({"features": [
    {"feature_type": "id_feature", "feature_name": "i", "default_value": "", "expression": "user:i",
     "value_type": "string", "need_prefix": false, "hash_bucket_size": 9223372036854775807, "value_dim": 0},
    {"feature_type": "combo_feature", "feature_name": "c", "default_value": "", "expression": ["user:a", "item:b"],
     "value_type": "string", "need_prefix": false, "value_dim": 0, "hash_bucket_size": 9223372036854775807},
    {"feature_type": "sequence_combo_feature", "feature_name": "sc", "default_value": "0",
     "expression": ["user:a", "item:b"], "value_type": "string", "need_prefix": false, "value_dim": 0,
     "hash_bucket_size": 9223372036854775807, "sequence_delim": ";", "sequence_length": 5},
    {"feature_type": "lookup_feature", "feature_name": "l", "map": "user:m", "key": "item:k", "default_value": "0",
     "value_type": "string", "needDiscrete": true, "needKey": false, "combiner": "",
     "hash_bucket_size": 9223372036854775807, "value_dim": 1},
    {"feature_type": "match_feature", "feature_name": "m", "user": "user:nm", "category": "item:p", "item": "item:s",
     "matchType": "hit", "default_value": "0", "value_type": "string", "needDiscrete": true,
     "show_category": false, "show_item": false, "hash_bucket_size": 9223372036854775807, "value_dim": 1}
  ]})");
}

// dynamicemb: the same entries as zch (TorchEasyRec's _fg_json tests `zch or dynamicemb`).
TEST(FgJson, DynamicembFeatures) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { id_feature { feature_name: "i" expression: "user:i" num_buckets: 10 embedding_dim: 4
                                   dynamicemb { max_capacity: 100 } } }
    feature_configs { lookup_feature { feature_name: "l" map: "user:m" key: "item:k" boundaries: [0.5]
                                       embedding_dim: 4 dynamicemb { max_capacity: 100 } } }
  )"),
              R"({"features": [
    {"feature_type": "id_feature", "feature_name": "i", "default_value": "", "expression": "user:i",
     "value_type": "string", "need_prefix": false, "hash_bucket_size": 9223372036854775807, "value_dim": 0},
    {"feature_type": "lookup_feature", "feature_name": "l", "map": "user:m", "key": "item:k", "default_value": "0",
     "value_type": "string", "needDiscrete": true, "needKey": false, "combiner": "",
     "hash_bucket_size": 9223372036854775807, "value_dim": 1}
  ]})");
}

// create_fg_json: a group's entry sits where its sequence_name first appears (sequence_pk
// defaulting to "user:<name>"); a later group of the same name joins it; grouped sub-features keep
// sequence_fields, without the sequence keys of sequence_* features.
TEST(FgJson, SequenceGroups) {
  expect_json(fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { sequence_feature {
      sequence_name: "clk" sequence_length: 3 sequence_delim: "|"
      features { combo_feature { feature_name: "cb" expression: ["item:a", "user:u"] hash_bucket_size: 10
                                 embedding_dim: 4 sequence_fields: ["a"] } }
    } }
    feature_configs { id_feature { feature_name: "u" expression: "user:u" hash_bucket_size: 10 embedding_dim: 4 } }
    feature_configs { sequence_feature {
      sequence_name: "clk" sequence_length: 3 sequence_delim: "|"
      features { id_feature { feature_name: "a" expression: "item:a" hash_bucket_size: 10 embedding_dim: 4 } }
    } }
  )"),
              R"({"features": [
    {"sequence_name": "clk", "sequence_length": 3, "sequence_delim": "|", "sequence_pk": "user:clk",
     "features": [
       {"feature_type": "combo_feature", "feature_name": "cb", "default_value": "0",
        "expression": ["item:a", "user:u"], "value_type": "string", "need_prefix": false, "value_dim": 0,
        "hash_bucket_size": 10, "sequence_fields": ["a"]},
       {"feature_type": "id_feature", "feature_name": "a", "default_value": "0", "expression": "item:a",
        "value_type": "string", "need_prefix": false, "hash_bucket_size": 10, "value_dim": 1}]},
    {"feature_type": "id_feature", "feature_name": "u", "default_value": "", "expression": "user:u",
     "value_type": "string", "need_prefix": false, "hash_bucket_size": 10, "value_dim": 0}
  ]})");
}

// The text is Python's json.dump(doc, f, indent=4) of the same document (run by hand): floats as
// float32 widened to double, non-ASCII and control characters escaped, no final newline.
TEST(FgJson, TextAsPythonJsonDump) {
  FgJsonOptions options;
  options.reserves = std::vector<std::string>{"label"};
  const auto doc = fg_json_of(R"(
    data_config { fg_mode: FG_NORMAL }
    feature_configs { raw_feature { feature_name: "price" expression: "item:price"
                                    boundaries: [0.00001, 0.1, 0.5, 1, 250000.5] embedding_dim: 4 } }
    feature_configs { id_feature { feature_name: "tag" expression: "item:tag" separator: "\x03" default_value: "é"
                                   hash_bucket_size: 10 embedding_dim: 4 } }
  )",
                              options);
  const std::string python =
      "{\n    \"features\": [\n        {\n            \"feature_type\": \"raw_feature\",\n"
      "            \"feature_name\": \"price\",\n            \"default_value\": \"0\",\n"
      "            \"expression\": \"item:price\",\n            \"value_type\": \"float\",\n"
      "            \"boundaries\": [\n                9.999999747378752e-06,\n"
      "                0.10000000149011612,\n                0.5,\n                1.0,\n"
      "                250000.5\n            ]\n        },\n        {\n"
      "            \"feature_type\": \"id_feature\",\n            \"feature_name\": \"tag\",\n"
      "            \"default_value\": \"\\u00e9\",\n            \"expression\": \"item:tag\",\n"
      "            \"value_type\": \"string\",\n            \"need_prefix\": false,\n"
      "            \"separator\": \"\\u0003\",\n            \"hash_bucket_size\": 10,\n"
      "            \"value_dim\": 0\n        }\n    ],\n    \"reserves\": [\n        \"label\"\n    ]\n}";
  EXPECT_EQ(fg_json_text(doc), python);
}

// Python's json.dumps(doc, indent=4) of this document (run by hand): float repr (fixed within
// 1e-4 <= |x| < 1e16), integers, escapes, empty containers, literals.
TEST(FgJson, TextNumbersAndEscapes) {
  nlohmann::ordered_json doc;
  doc["n"] = {0.0, -0.0, 1e15, 1e16, 1.5e16, 123.456, 0.0001, 1e-05, -2.5e-07, 3.0, 1e22,
              static_cast<int64_t>(9223372036854775807LL), -7};
  doc["s"] = "a\"b\\c\n\t\x7f\u00e9\U0001F600/";
  doc["e"] = nlohmann::ordered_json::object();
  doc["l"] = nlohmann::ordered_json::array();
  doc["b"] = {true, false, nullptr};
  const std::string python =
      "{\n    \"n\": [\n        0.0,\n        -0.0,\n        1000000000000000.0,\n        1e+16,\n"
      "        1.5e+16,\n        123.456,\n        0.0001,\n        1e-05,\n        -2.5e-07,\n        3.0,\n"
      "        1e+22,\n        9223372036854775807,\n        -7\n    ],\n"
      "    \"s\": \"a\\\"b\\\\c\\n\\t\\u007f\\u00e9\\ud83d\\ude00/\",\n    \"e\": {},\n    \"l\": [],\n"
      "    \"b\": [\n        true,\n        false,\n        null\n    ]\n}";
  EXPECT_EQ(fg_json_text(doc), python);
  EXPECT_THROW(fg_json_text(nlohmann::ordered_json("bad \xc3(")), ConfigError);
  EXPECT_THROW(fg_json_text(nlohmann::ordered_json("overlong \xc0\x80")), ConfigError);
}

TEST(FgJson, WriteFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("fg_json_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto doc = fg_json_of(kTorchEasyRecFeatures);
  const std::string path = (dir / kFgJsonFile).string();
  write_fg_json(doc, path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), fg_json_text(doc));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_THROW(write_fg_json(doc, (dir / "missing" / kFgJsonFile).string()), IoError);
  std::filesystem::remove_all(dir);
}

// A feature type without fg.json entries is refused, never written wrong.
class NoFgJsonFeature : public Feature {
 public:
  NoFgJsonFeature() : Feature("x", "feature_configs[0].tokenize_feature", "tokenize_feature", BuildContext{}) {}
  std::vector<std::string> input_columns() const override { return {}; }
  std::vector<SideInput> side_inputs() const override { return {}; }
  void parse(const data::RecordBatch&, const ParseOutput&) const override {}
};

TEST(FgJson, TypeWithoutEntriesIsNotSupported) {
  try {
    NoFgJsonFeature().fg_json();
    FAIL() << "expected NotSupportedError";
  } catch (const NotSupportedError& e) {
    EXPECT_EQ(std::string(e.what()),
              "not supported yet: create_fg_json for tokenize_feature (feature_configs[0].tokenize_feature)");
  }
}

TEST(FgJson, ConfigErrorsNameTheField) {
  try {
    fg_json_of(R"(feature_configs { id_feature { feature_name: "a" expression: "user:a" embedding_dim: 4 } })");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("feature_configs[0].id_feature"), std::string::npos) << e.what();
  }
  // Python would write Infinity, which is not JSON.
  try {
    fg_json_of(R"(feature_configs { raw_feature { feature_name: "r" expression: "user:r" boundaries: [1, inf]
                                                   embedding_dim: 4 } })");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "feature_configs[0].raw_feature.boundaries[1]: inf cannot be written to fg.json; use a finite number");
  }
}

}  // namespace fg_json_test
}  // namespace tzrec::feature
