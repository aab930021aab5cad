// tokenize_feature (feature/tokenize_feature.h). Expected values: TorchEasyRec's
// tokenize_feature_test.py — test_fg_encoded_tokenize_feature, test_tokenize_feature (with and
// without default_value and TEXT_UPPER2LOWER), test_fg_encoded_tokens_as_sequence,
// test_tokens_as_sequence, test_tokenize_feature_sentencepiece and test_sequence_tokenize_feature
// (table size 50277; "abc efg" -> 19758 299 16054, "hij" -> 73 1944, "xyz" -> 35609, the sequence
// default "0" -> 17; sentencepiece "abc efg" -> 703 75 3 15 89 122, "hij" -> 7102 354, "xyz" ->
// 3 226 63 172). The fg.json entries follow TorchEasyRec's TokenizeFeature._fg_json key by key;
// other values are hand-made from those vectors.
#include "feature/tokenize_feature.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "feature/assets.h"
#include "feature/feature_registry.h"
#include "feature/fg_json.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "feature/testing_typed_batch.h"

namespace tzrec::feature {
namespace tokenize_feature_test {

using testing::error_of;
using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;
using testing::parser;
using testing::PhysicalType;
using testing::TypedBatch;

const std::string kDir = std::string(TZREC_SOURCE_DIR) + "/tests/data/tokenizer";
const std::string kBpe = kDir + "/small_tokenizer.json";
const std::string kSp = kDir + "/spiece.model";

// A tokenize_feature "token_feat" of `extra` fields (vocab_file and embedding_dim 16 added).
std::string feature(const std::string& extra, const std::string& vocab = kBpe, const std::string& type = "tokenize_feature") {
  return "feature_configs { " + type + " { feature_name: \"token_feat\" embedding_dim: 16 vocab_file: \"" + vocab +
         "\" " + extra + " } }";
}

std::pair<Ids, Ids> bag(const sparse::Batch& b, const std::string& key) {
  auto j = b.sparse_features[key];
  return {ids_of(j.values), ids_of(j.lengths)};
}

const FeatureInfo& info_of(const FeatureParser& p) { return p.features().at(0)->info(); }

TEST(TokenizeFeature, FgEncodedAsTorchEasyRec) {
  auto p = parser(feature(""));
  const FeatureInfo& info = info_of(p);
  EXPECT_TRUE(info.is_sparse);
  EXPECT_EQ(info.num_embeddings, 50277);
  EXPECT_EQ(info.embedding_dim, 16);
  EXPECT_EQ(info.embedding_name, "token_feat_emb");
  EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"token_feat"}));
  auto b = p.parse(make_batch({{"token_feat", {"1\x03" "2", "", "", "3"}}}));
  EXPECT_EQ(bag(b, "token_feat"), (std::pair<Ids, Ids>{{1, 2, 3}, {2, 0, 0, 1}}));
  // The same as a list<int64> column with nulls.
  const std::vector<std::optional<std::vector<int64_t>>> rows = {{{1, 2}}, std::nullopt, std::nullopt, {{3}}};
  TypedBatch t(4);
  t.add("token_feat", PhysicalType::kInt64, 1, [&](auto& c, int64_t r) {
    if (!rows[r]) return c.append_null_list();
    c.begin_list();
    for (int64_t v : *rows[r]) c.append(v);
    c.end_list();
  });
  EXPECT_EQ(bag(p.parse(t.batch), "token_feat"), (std::pair<Ids, Ids>{{1, 2, 3}, {2, 0, 0, 1}}));
}

TEST(TokenizeFeature, BpeAsTorchEasyRec) {
  const auto input = make_batch({{"token_input", {"abc efg", "", "hij"}}});
  auto plain = parser(feature("expression: \"user:token_input\""), "fg_mode: FG_NORMAL");
  EXPECT_EQ(plain.input_columns(), (std::vector<std::string>{"token_input"}));
  EXPECT_EQ(info_of(plain).num_embeddings, 50277);
  EXPECT_EQ(bag(plain.parse(input), "token_feat"),
            (std::pair<Ids, Ids>{{19758, 299, 16054, 73, 1944}, {3, 0, 2}}));
  auto with_default = parser(feature("expression: \"user:token_input\" default_value: \"xyz\""), "fg_mode: FG_NORMAL");
  EXPECT_EQ(bag(with_default.parse(input), "token_feat"),
            (std::pair<Ids, Ids>{{19758, 299, 16054, 35609, 73, 1944}, {3, 1, 2}}));
  auto lowered = parser(feature("expression: \"user:token_input\" text_normalizer { norm_options: [TEXT_UPPER2LOWER] }"),
                        "fg_mode: FG_NORMAL");
  EXPECT_EQ(bag(lowered.parse(make_batch({{"token_input", {"ABC efg", "", "HIJ"}}})), "token_feat"),
            (std::pair<Ids, Ids>{{19758, 299, 16054, 73, 1944}, {3, 0, 2}}));
  // FG_DAG reads the same column.
  auto dag = parser(feature("expression: \"user:token_input\""), "fg_mode: FG_DAG");
  EXPECT_EQ(bag(dag.parse(input), "token_feat"), (std::pair<Ids, Ids>{{19758, 299, 16054, 73, 1944}, {3, 0, 2}}));
}

// tokenizer.json truncation and padding (tokenizer_post_process.h) apply to each text the feature
// encodes: "abc efg" (19758 299 16054, BpeAsTorchEasyRec) is cut to 2 ids and padded to 3 with
// pad_id 1, "hij" (73 1944) padded; an empty cell's default "" encodes to no ids, padded to 3.
TEST(TokenizeFeature, TokenizerTruncationAndPaddingApplyToEachText) {
  std::ifstream in(kBpe);
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  json.replace(json.find("\"truncation\": null"), 18, R"("truncation": {"max_length": 2})");
  json.replace(json.find("\"padding\": null"), 15, R"("padding": {"strategy": {"Fixed": 3}, "pad_id": 1})");
  const std::string path = std::filesystem::temp_directory_path().string() + "/tzrec_tokenize_feature_test_" +
                           std::to_string(::getpid()) + ".json";
  std::ofstream(path) << json;
  auto p = parser(feature("expression: \"user:token_input\"", path), "fg_mode: FG_NORMAL");
  std::filesystem::remove(path);
  EXPECT_EQ(bag(p.parse(make_batch({{"token_input", {"abc efg", "", "hij"}}})), "token_feat"),
            (std::pair<Ids, Ids>{{19758, 299, 1, 1, 1, 1, 73, 1944, 1}, {3, 3, 3}}));
}

TEST(TokenizeFeature, TextOfListColumnsAndNormalizedToEmpty) {
  // A list<string> cell: each element is one text; a text that normalizes to nothing is empty.
  auto p = parser(feature("expression: \"user:t\" default_value: \"xyz\" text_normalizer { norm_options: "
                          "[TEXT_REMOVE_SPACE] }"),
                  "fg_mode: FG_NORMAL");
  const std::vector<std::vector<std::string>> rows = {{"abc", "hij"}, {"  "}};
  TypedBatch t(2);
  t.add("t", PhysicalType::kByteArray, 1, [&](auto& c, int64_t r) {
    c.begin_list();
    for (const auto& v : rows[r]) c.append_string(v);
    c.end_list();
  });
  EXPECT_EQ(bag(p.parse(t.batch), "token_feat"), (std::pair<Ids, Ids>{{19758, 73, 1944, 35609}, {3, 1}}));
}

TEST(TokenizeFeature, DefaultTextNormalizer) {
  // text_normalizer {}: TEXT_LOWER2UPPER, TEXT_SBC2DBC, TEXT_CHT2CHS, TEXT_FILTER, so
  // "ａｂｃ，ｅｆｇ！ hij" reads as "ABCEFG HIJ" (full-width letters and punctuation to ASCII, upper
  // case, punctuation removed).
  auto normalized = parser(feature("expression: \"user:t\" text_normalizer {}"), "fg_mode: FG_NORMAL");
  auto plain = parser(feature("expression: \"user:t\""), "fg_mode: FG_NORMAL");
  EXPECT_EQ(bag(normalized.parse(make_batch({{"t", {"\uff41\uff42\uff43\uff0c\uff45\uff46\uff47\uff01 hij"}}})),
                "token_feat"),
            bag(plain.parse(make_batch({{"t", {"ABCEFG HIJ"}}})), "token_feat"));
}

// TorchEasyRec's TokenizeFeature.assets(): text_normalizer.stop_char_file (joined to asset_dir) is
// an asset next to the tokenizer; fg.json names it, and copies name the md5 copy (feature/assets.h;
// md5 of "#\n" 552dacb15f2019c8f3f74c55befa242c, of small_tokenizer.json a0ae9ae4...).
TEST(TokenizeFeature, StopCharFileIsAnAsset) {
  namespace fs = std::filesystem;
  const std::string dir = ::testing::TempDir() + "/tokenize_stop_chars_" + std::to_string(::getpid());
  fs::create_directories(dir + "/package");
  std::ofstream(dir + "/stop_chars.txt", std::ios::binary) << "#\n";
  const std::string features = feature("expression: \"user:t\" asset_dir: \"" + dir +
                                       "\" text_normalizer { stop_char_file: \"stop_chars.txt\" "
                                       "norm_options: [TEXT_FILTER] }");
  auto p = parser(features, "fg_mode: FG_NORMAL");
  // Only '#' is a stop character: "abc# efg" reads as "abc efg", the '!' stays.
  EXPECT_EQ(bag(p.parse(make_batch({{"t", {"abc# efg"}}})), "token_feat"),
            (std::pair<Ids, Ids>{{19758, 299, 16054}, {3}}));
  EXPECT_EQ(bag(p.parse(make_batch({{"t", {"abc efg!"}}})), "token_feat"),
            bag(parser(feature("expression: \"user:t\""), "fg_mode: FG_NORMAL")
                    .parse(make_batch({{"t", {"abc efg!"}}})),
                "token_feat"));
  const auto assets = p.features().at(0)->assets();
  ASSERT_EQ(assets.size(), 2u);
  EXPECT_EQ(assets[0].field, "vocab_file");
  EXPECT_EQ(assets[0].path, kBpe);
  EXPECT_EQ(assets[1].field, "text_normalizer.stop_char_file");
  EXPECT_EQ(assets[1].path, dir + "/stop_chars.txt");
  const auto entries = p.features().at(0)->fg_json();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]["stop_char_file"], dir + "/stop_chars.txt");
  EXPECT_EQ(entries[0]["parameter"], 32);
  // create_fg_json(asset_dir=...): the entry names the copy.
  FgJsonOptions options;
  options.asset_dir = dir + "/package";
  const auto doc = create_fg_json(parse_config("data_config { fg_mode: FG_NORMAL } " + features), options);
  EXPECT_EQ(doc["features"][0]["stop_char_file"], "stop_chars_552dacb15f2019c8f3f74c55befa242c.txt");
  EXPECT_TRUE(fs::is_regular_file(dir + "/package/stop_chars_552dacb15f2019c8f3f74c55befa242c.txt"));
  // An export package's config: the copies, read from the package.
  auto config = parse_config("data_config { fg_mode: FG_NORMAL } " + features);
  relocate_assets(&config, dir + "/package", dir + "/package");
  const protos::TokenizeFeature& t = config.feature_configs(0).tokenize_feature();
  EXPECT_EQ(t.text_normalizer().stop_char_file(), "stop_chars_552dacb15f2019c8f3f74c55befa242c.txt");
  EXPECT_EQ(t.vocab_file(), "small_tokenizer_a0ae9ae42e0e8bbfc632ac3f160449ce.json");
  EXPECT_EQ(t.asset_dir(), dir + "/package");
  fs::remove(dir + "/stop_chars.txt");
  EXPECT_NO_THROW(build_features(config));  // the copies are read from the package
  fs::remove_all(dir);
}

TEST(TokenizeFeature, SentencePieceAsTorchEasyRec) {
  const auto input = make_batch({{"token_input", {"abc efg", "", "hij"}}});
  auto p = parser(feature("expression: \"user:token_input\" tokenizer_type: \"sentencepiece\"", kSp),
                  "fg_mode: FG_NORMAL");
  EXPECT_EQ(info_of(p).num_embeddings, 32000);  // the model's pieces
  EXPECT_EQ(bag(p.parse(input), "token_feat"),
            (std::pair<Ids, Ids>{{703, 75, 3, 15, 89, 122, 7102, 354}, {6, 0, 2}}));
  auto d = parser(
      feature("expression: \"user:token_input\" tokenizer_type: \"sentencepiece\" default_value: \"xyz\"", kSp),
      "fg_mode: FG_NORMAL");
  EXPECT_EQ(bag(d.parse(input), "token_feat"),
            (std::pair<Ids, Ids>{{703, 75, 3, 15, 89, 122, 3, 226, 63, 172, 7102, 354}, {6, 4, 2}}));
}

TEST(TokenizeFeature, TokensAsSequenceAsTorchEasyRec) {
  // FG_NONE: the row's ids are its items.
  auto e = parser(feature("tokens_as_sequence: true sequence_length: 16"));
  EXPECT_TRUE(info_of(e).is_sequence);
  EXPECT_EQ(info_of(e).value_dim, 1);
  auto eb = e.parse(make_batch({{"token_feat", {"1\x03" "2", "", "", "3"}}}));
  EXPECT_EQ(bag(eb, "token_feat"), (std::pair<Ids, Ids>{{1, 2, 3}, {2, 0, 0, 1}}));
  EXPECT_EQ(ids_of(eb.sequence_lengths.at("token_feat")), (Ids{2, 0, 0, 1}));
  EXPECT_EQ(eb.sequence_item_lengths.count("token_feat"), 0u);  // one id per item
  // FG_NORMAL: the tokens of the text.
  auto p = parser(feature("expression: \"user:token_input\" default_value: \"xyz\" tokens_as_sequence: true "
                          "sequence_length: 16"),
                  "fg_mode: FG_NORMAL");
  auto b = p.parse(make_batch({{"token_input", {"abc efg", "", "hij"}}}));
  EXPECT_EQ(bag(b, "token_feat"), (std::pair<Ids, Ids>{{19758, 299, 16054, 35609, 73, 1944}, {3, 1, 2}}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("token_feat")), (Ids{3, 1, 2}));
}

TEST(SequenceTokenizeFeature, GroupedAsTorchEasyRec) {
  auto grouped = [](const std::string& extra) {
    return "feature_configs { sequence_feature { sequence_name: \"click_50_seq\" sequence_length: 50 "
           "sequence_delim: \";\" features { tokenize_feature { feature_name: \"token_feat\" embedding_dim: 16 "
           "vocab_file: \"" + kBpe + "\" expression: \"user:token_input\" " + extra + " } } } }";
  };
  const std::string name = "click_50_seq__token_feat";
  struct Case {
    std::string extra;
    std::vector<std::string> input;
    Ids values;
  };
  const std::vector<Case> cases = {
      {"", {"abc efg;hij", "", "hij"}, {19758, 299, 16054, 73, 1944, 17, 73, 1944}},
      {"default_value: \"xyz\"", {"abc efg;hij", "", "hij"}, {19758, 299, 16054, 73, 1944, 35609, 73, 1944}},
      {"text_normalizer { norm_options: [TEXT_UPPER2LOWER] }", {"ABC efg;hij", "", "HIJ"},
       {19758, 299, 16054, 73, 1944, 17, 73, 1944}},
  };
  for (const Case& c : cases) {
    auto p = parser(grouped(c.extra), "fg_mode: FG_NORMAL");
    EXPECT_EQ(p.input_columns(), (std::vector<std::string>{"click_50_seq__token_input"}));
    EXPECT_EQ(info_of(p).name, name);
    auto b = p.parse(make_batch({{"click_50_seq__token_input", c.input}}));
    // TorchEasyRec's key_lengths are the tokens per item, seq_lengths the items per row.
    EXPECT_EQ(ids_of(b.sparse_features[name].values), c.values) << c.extra;
    EXPECT_EQ(ids_of(b.sequence_item_lengths.at(name)), (Ids{3, 2, 1, 2})) << c.extra;
    EXPECT_EQ(ids_of(b.sequence_lengths.at(name)), (Ids{2, 1, 1})) << c.extra;
  }
}

TEST(SequenceTokenizeFeature, StandAloneKeepsSequenceLengthItems) {
  auto p = parser(feature("expression: \"user:token_input\" sequence_length: 2", kBpe, "sequence_tokenize_feature"),
                  "fg_mode: FG_NORMAL");
  auto b = p.parse(make_batch({{"token_input", {"abc efg;hij;xyz", "hij;;xyz"}}}));
  // Row 0: the first two items; row 1: an empty item is the default "0" (17).
  EXPECT_EQ(bag(b, "token_feat"), (std::pair<Ids, Ids>{{19758, 299, 16054, 73, 1944, 73, 1944, 17}, {5, 3}}));
  EXPECT_EQ(ids_of(b.sequence_item_lengths.at("token_feat")), (Ids{3, 2, 2, 1}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("token_feat")), (Ids{2, 2}));
  // FG_NONE: items by sequence_delim, ids by fg_encoded_multival_sep.
  auto e = parser(feature("sequence_length: 2", kBpe, "sequence_tokenize_feature"));
  auto eb = e.parse(make_batch({{"token_feat", {"1\x03" "2;3", ""}}}));
  EXPECT_EQ(bag(eb, "token_feat"), (std::pair<Ids, Ids>{{1, 2, 3}, {3, 0}}));
  EXPECT_EQ(ids_of(eb.sequence_item_lengths.at("token_feat")), (Ids{2, 1}));
}

std::string entries(const FeatureParser& p) {
  std::string out;
  for (const auto& e : p.features().at(0)->fg_json()) out += e.dump() + "\n";
  return out;
}

TEST(TokenizeFeature, FgJsonAsTorchEasyRec) {
  const std::string vf = "\"vocab_file\":\"" + kBpe + "\"";
  EXPECT_EQ(entries(parser(feature("expression: \"user:title\""), "fg_mode: FG_NORMAL")),
            "{\"feature_type\":\"tokenize_feature\",\"feature_name\":\"token_feat\",\"default_value\":\"\"," + vf +
                ",\"expression\":\"user:title\",\"tokenizer_type\":\"bpe\",\"output_type\":\"word_id\"}\n");
  // text_normalizer: a stub entry; UPPER2LOWER (4) + SBC2DBC (8) = 12; remove_space a key of its own.
  EXPECT_EQ(entries(parser(feature("expression: \"user:title\" default_value: \"x\" text_normalizer { max_length: 32 "
                                   "norm_options: [TEXT_UPPER2LOWER, TEXT_REMOVE_SPACE, TEXT_SBC2DBC] }"),
                           "fg_mode: FG_NORMAL")),
            "{\"feature_type\":\"text_normalizer\",\"feature_name\":\"token_feat__text_norm\",\"expression\":"
            "\"user:title\",\"is_gbk_input\":false,\"is_gbk_output\":false,\"stub_type\":true,\"max_length\":32,"
            "\"remove_space\":true,\"parameter\":12}\n"
            "{\"feature_type\":\"tokenize_feature\",\"feature_name\":\"token_feat\",\"default_value\":\"x\"," + vf +
                ",\"expression\":\"feature:token_feat__text_norm\",\"tokenizer_type\":\"bpe\",\"output_type\":"
                "\"word_id\"}\n");
  // sequence_tokenize_feature: "sequence_" types, default "0", sequence_delim and sequence_length.
  EXPECT_EQ(entries(parser(feature("expression: \"user:title\" sequence_length: 5 text_normalizer { norm_options: "
                                   "[TEXT_UPPER2LOWER] }",
                                   kBpe, "sequence_tokenize_feature"),
                           "fg_mode: FG_NORMAL")),
            "{\"feature_type\":\"sequence_text_normalizer\",\"feature_name\":\"token_feat__text_norm\",\"expression\":"
            "\"user:title\",\"is_gbk_input\":false,\"is_gbk_output\":false,\"stub_type\":true,\"parameter\":4,"
            "\"default_value\":\"0\",\"sequence_delim\":\";\",\"sequence_length\":5}\n"
            "{\"feature_type\":\"sequence_tokenize_feature\",\"feature_name\":\"token_feat\",\"default_value\":\"0\"," +
                vf +
                ",\"expression\":\"feature:token_feat__text_norm\",\"tokenizer_type\":\"bpe\",\"output_type\":"
                "\"word_id\",\"sequence_delim\":\";\",\"sequence_length\":5}\n");
  // tokens_as_sequence: plain entries, default "0".
  EXPECT_EQ(entries(parser(feature("expression: \"user:title\" tokens_as_sequence: true sequence_length: 8 "
                                   "tokenizer_type: \"sentencepiece\"",
                                   kSp),
                           "fg_mode: FG_NORMAL")),
            "{\"feature_type\":\"tokenize_feature\",\"feature_name\":\"token_feat\",\"default_value\":\"0\","
            "\"vocab_file\":\"" + kSp +
                "\",\"expression\":\"user:title\",\"tokenizer_type\":\"sentencepiece\",\"output_type\":\"word_id\"}\n");
  // Grouped: the tokenize entry reads the normalizer's output per item.
  auto grouped = parser(
      "feature_configs { sequence_feature { sequence_name: \"s\" sequence_length: 5 sequence_delim: \";\" features { "
      "tokenize_feature { feature_name: \"t\" embedding_dim: 8 vocab_file: \"small_tokenizer.json\" asset_dir: \"" +
          kDir + "\" expression: \"item:title\" text_normalizer { norm_options: [TEXT_SBC2DBC] } } } } }",
      "fg_mode: FG_NORMAL");
  const auto g = grouped.features().at(0)->fg_json();
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].dump(),
            "{\"feature_type\":\"text_normalizer\",\"feature_name\":\"t__text_norm\",\"expression\":\"item:title\","
            "\"is_gbk_input\":false,\"is_gbk_output\":false,\"stub_type\":true,\"parameter\":8,\"default_value\":"
            "\"0\"}");
  EXPECT_EQ(g[1].dump(), "{\"feature_type\":\"tokenize_feature\",\"feature_name\":\"t\",\"default_value\":\"0\"," + vf +
                             ",\"expression\":\"feature:t__text_norm\",\"tokenizer_type\":\"bpe\",\"output_type\":"
                             "\"word_id\",\"sequence_fields\":[\"t__text_norm\"]}");
  // The tokenizer file is the feature's asset (asset_dir joined).
  const auto assets = grouped.features().at(0)->assets();
  ASSERT_EQ(assets.size(), 1u);
  EXPECT_EQ(assets[0].field, "vocab_file");
  EXPECT_EQ(assets[0].path, kBpe);
}

TEST(TokenizeFeature, BadConfigs) {
  auto error = [](const std::string& features) {
    try {
      build_features(parse_config("data_config { fg_mode: FG_NORMAL } " + features));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string path = "feature_configs[0].tokenize_feature";
  EXPECT_EQ(error("feature_configs { tokenize_feature { feature_name: \"t\" embedding_dim: 8 expression: \"user:a\" } }")
                .rfind(path + ".vocab_file: set the tokenizer file", 0),
            0u);
  EXPECT_EQ(error(feature("expression: \"user:a\" tokenizer_type: \"wordpiece\"")),
            path + ".tokenizer_type: 'wordpiece' is not a tokenizer type; use \"bpe\" (a tokenizer.json) or "
                   "\"sentencepiece\" (a .model file)");
  EXPECT_EQ(error(feature("expression: \"user:a\"", "/nonexistent/tokenizer.json"))
                .rfind(path + ".vocab_file: tokenizer '/nonexistent/tokenizer.json' cannot be read", 0),
            0u);
  // A .model read as tokenizer.json, and the other way round.
  EXPECT_NE(error(feature("expression: \"user:a\"", kSp)).find("spiece.model' is not valid JSON"), std::string::npos);
  EXPECT_NE(error(feature("expression: \"user:a\" tokenizer_type: \"sentencepiece\"", kBpe))
                .find("small_tokenizer.json' is not a SentencePiece model"),
            std::string::npos);
  // stop_char_file is read from asset_dir when it is set.
  EXPECT_EQ(error(feature("expression: \"user:a\" asset_dir: \"" + kDir +
                          "\" text_normalizer { stop_char_file: \"missing_stop_chars.txt\" }")),
            path + ".text_normalizer.stop_char_file: cannot read stop character file " + kDir +
                "/missing_stop_chars.txt; check the path (relative paths are read from the working directory, or from "
                "asset_dir when it is set)");
  EXPECT_EQ(error(feature("expression: \"a\"")).rfind(path + ".expression", 0), 0u);
  EXPECT_EQ(error(feature("expression: \"user:a\" tokens_as_sequence: true"))
                .rfind(path + ".sequence_length: set the most tokens", 0),
            0u);
  EXPECT_EQ(error(feature("expression: \"user:a\" tokens_as_sequence: true sequence_length: 4", kBpe,
                          "sequence_tokenize_feature"))
                .rfind("feature_configs[0].sequence_tokenize_feature.tokens_as_sequence: only a tokenize_feature", 0),
            0u);
  EXPECT_EQ(error(feature("expression: \"user:a\" sequence_fields: \"a\"")),
            path + ".sequence_fields: only sequence features have per-item inputs");
}

TEST(TokenizeFeature, BadData) {
  // FG_NONE ids outside the tokenizer's vocabulary, and ids that are not integers.
  auto p = parser(feature(""));
  const std::string big = error_of<DataError>([&] { p.parse(make_batch({{"token_feat", {"50277"}}})); });
  EXPECT_NE(big.find("t.csv line 2 column token_feat"), std::string::npos) << big;
  EXPECT_NE(big.find("50277"), std::string::npos) << big;
  const std::string text = error_of<DataError>([&] { p.parse(make_batch({{"token_feat", {"abc"}}})); });
  EXPECT_NE(text.find("t.csv line 2 column token_feat"), std::string::npos) << text;
  // FG_NORMAL: the input column must be there.
  auto n = parser(feature("expression: \"user:title\""), "fg_mode: FG_NORMAL");
  const std::string missing = error_of<DataError>([&] { n.parse(make_batch({{"other", {"x"}}})); });
  EXPECT_NE(missing.find("title"), std::string::npos) << missing;
}

}  // namespace tokenize_feature_test
}  // namespace tzrec::feature
