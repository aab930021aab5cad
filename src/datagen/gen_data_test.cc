#include "datagen/gen_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "config/pipeline_config.h"
#include "data/testing_util.h"
#include "parquet/file_reader.h"
#include "parquet/json_rows.h"

namespace tzrec::datagen {
namespace gen_data_test {

using data::testing::error_of;
using data::testing::TempDir;

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kConfig = R"(
train_input_path: "odps://p/tables/train"
eval_input_path: "odps://p/tables/eval"
model_dir: "m"
data_config {
  dataset_type: OdpsDataset
  fg_mode: FG_NORMAL
  label_fields: ["clk", "buy"]
  sample_weight_fields: "w"
  negative_sampler { input_path: "odps://p/tables/items" num_sample: 4 attr_fields: ["iid", "cate"] item_id_field: "iid" attr_delimiter: "\x02" }
}
feature_configs { id_feature { feature_name: "uid" expression: "user:uid" hash_bucket_size: 1000 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "iid" expression: "item:iid" num_buckets: 300 embedding_dim: 4 } }
feature_configs { id_feature { feature_name: "cate" expression: "item:cate" vocab_list: ["x", "y", "z"] embedding_dim: 4 } }
feature_configs { raw_feature { feature_name: "price" expression: "item:price" boundaries: [1, 2] embedding_dim: 4 } }
feature_configs { sequence_id_feature { feature_name: "clicks" expression: "user:clicks" hash_bucket_size: 50 embedding_dim: 4 sequence_length: 6 sequence_delim: ";" } }
model_config {
  mmoe {
    task_towers { tower_name: "ctr" label_name: "clk" losses { binary_cross_entropy {} } }
    task_towers { tower_name: "cvr" label_name: "buy" losses { binary_cross_entropy {} } }
  }
}
)";

TEST(GenData, WritesDataTablesAndConfig) {
  TempDir tmp;
  GenDataOptions options;
  options.pipeline_config_path = write_file(tmp.file("p.config"), kConfig);
  options.output_dir = tmp.file("out");
  options.num_rows = 300;
  options.num_eval_rows = 50;
  options.seed = 7;
  const auto result = generate_data(options);

  auto reader = parquet::FileReader::open(result.train_path);
  EXPECT_EQ(reader->num_rows(), 300);
  auto table = reader->read();
  std::set<std::string> names;
  int positives = 0;
  for (int64_t r = 0; r < 300; ++r) {
    const auto row = parquet::row_to_json(table, reader->schema(), r);
    if (r == 0) {
      for (const auto& item : row.items()) names.insert(item.key());
    }
    const int64_t iid = row["iid"].get<int64_t>();
    ASSERT_TRUE(iid >= 0 && iid < 300);
    const std::string cate = row["cate"].get<std::string>();
    ASSERT_TRUE(cate == "x" || cate == "y" || cate == "z");
    const int64_t clk = row["clk"].get<int64_t>();
    ASSERT_TRUE(clk == 0 || clk == 1);
    positives += static_cast<int>(clk);
    ASSERT_GT(row["w"].get<double>(), 0.0);
    const std::string clicks = row["clicks"].get<std::string>();
    ASSERT_LE(std::count(clicks.begin(), clicks.end(), ';'), 5);
  }
  EXPECT_EQ(names, (std::set<std::string>{"uid", "iid", "cate", "price", "clicks", "clk", "buy", "w"}));
  EXPECT_GT(positives, 30);
  EXPECT_LT(positives, 180);
  EXPECT_EQ(parquet::FileReader::open(result.eval_path)->num_rows(), 50);

  // The item table: typed header, ids with their attributes joined by attr_delimiter.
  ASSERT_EQ(result.table_paths.size(), 1u);
  std::istringstream items(read_file(result.table_paths[0]));
  std::string line;
  std::getline(items, line);
  EXPECT_EQ(line, "id:int64\tweight:float\tattrs:string");
  std::getline(items, line);
  EXPECT_EQ(line.substr(0, 4), "0\t1\t");
  EXPECT_NE(line.find("0\x02"), std::string::npos) << line;

  const auto out = config::load_pipeline_config(result.config_path);
  EXPECT_EQ(out.train_input_path(), result.train_path);
  EXPECT_EQ(out.eval_input_path(), result.eval_path);
  EXPECT_TRUE(std::filesystem::path(out.train_input_path()).is_absolute());
  EXPECT_EQ(out.data_config().dataset_type(), protos::ParquetDataset);
  EXPECT_EQ(out.data_config().negative_sampler().input_path(), result.table_paths[0]);
}

// A negative sampler whose item_id_field is a candidate sequence, as in TorchEasyRec's
// hstu_kuairand_1k.config: every element of the sequence is an item of the item table, and each
// item's attributes (attr_fields prefixed with "cand_seq__", as TorchEasyRec's dataset.py does)
// in the table are the values its elements carry in the rows.
const char* kSequenceItemConfig = R"(
train_input_path: "data/train.parquet"
eval_input_path: "data/eval.parquet"
model_dir: "m"
data_config {
  fg_mode: FG_DAG
  label_fields: "clk"
  SAMPLER
}
feature_configs { id_feature { feature_name: "uid" expression: "user:uid" num_buckets: 50 embedding_dim: 4 } }
feature_configs { sequence_feature { sequence_name: "uih_seq" sequence_length: 8 sequence_delim: "|"
  features { id_feature { feature_name: "video_id" expression: "item:video_id" embedding_name: "v" num_buckets: 10000000 embedding_dim: 4 } } } }
feature_configs { sequence_feature { sequence_name: "cand_seq" sequence_length: 6 sequence_delim: "|"
  features { id_feature { feature_name: "video_id" expression: "item:video_id" embedding_name: "v" num_buckets: 10000000 embedding_dim: 4 } }
  features { id_feature { feature_name: "cate" expression: "item:cate" hash_bucket_size: 20 embedding_dim: 4 } } } }
)";

std::vector<std::string> split(const std::string& text, char delim) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, delim)) out.push_back(part);
  return out;
}

// Lines of a sampler table after its header, split at tabs.
std::vector<std::vector<std::string>> table_lines(const std::string& path, const std::string& header) {
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, header) << path;
  std::vector<std::vector<std::string>> out;
  while (std::getline(in, line)) out.push_back(split(line, '\t'));
  return out;
}

std::string with_sampler(const std::string& sampler) {
  std::string text = kSequenceItemConfig;
  return text.replace(text.find("SAMPLER"), 7, sampler);
}

TEST(GenData, SequenceItemIdFieldItemsAreTheSequenceIds) {
  TempDir tmp;
  GenDataOptions options;
  options.pipeline_config_path = write_file(
      tmp.file("p.config"),
      with_sampler(R"(negative_sampler { input_path: "items.txt" num_sample: 16 attr_fields: ["video_id", "cate"]
                      item_id_field: "cand_seq__video_id" attr_delimiter: "\x02" })"));
  options.output_dir = tmp.file("out");
  options.num_rows = 200;
  options.num_eval_rows = 20;
  const auto result = generate_data(options);
  EXPECT_EQ(result.plan.sampler.attr_fields, (std::vector<std::string>{"cand_seq__video_id", "cand_seq__cate"}));

  // The item table: "id, weight 1, video_id \x02 cate" per item; then items.parquet, the same
  // items one per row (the input of hstu_match's item tower package).
  ASSERT_EQ(result.table_paths.size(), 2u);
  EXPECT_EQ(std::filesystem::path(result.table_paths[1]).filename(), "items.parquet");
  std::map<int64_t, std::string> cate_of;
  for (const auto& fields : table_lines(result.table_paths[0], "id:int64\tweight:float\tattrs:string")) {
    ASSERT_EQ(fields.size(), 3u);
    const auto attrs = split(fields[2], '\x02');
    ASSERT_EQ(attrs.size(), 2u) << fields[2];
    EXPECT_EQ(attrs[0], fields[0]);  // the video_id attribute is the item id itself
    cate_of[std::stoll(fields[0])] = attrs[1];
  }
  ASSERT_FALSE(cate_of.empty());

  auto reader = parquet::FileReader::open(result.train_path);
  auto table = reader->read();
  std::set<int64_t> seen;
  size_t longest = 0;
  for (int64_t r = 0; r < 200; ++r) {
    const auto row = parquet::row_to_json(table, reader->schema(), r);
    const auto ids = split(row["cand_seq__video_id"].get<std::string>(), '|');
    const auto cates = split(row["cand_seq__cate"].get<std::string>(), '|');
    ASSERT_EQ(ids.size(), cates.size());
    ASSERT_GE(ids.size(), 1u);
    ASSERT_LE(ids.size(), 6u);
    longest = std::max(longest, ids.size());
    for (size_t e = 0; e < ids.size(); ++e) {
      const int64_t id = std::stoll(ids[e]);
      ASSERT_TRUE(cate_of.count(id)) << "row " << r << ": item " << id << " is not in the item table";
      EXPECT_EQ(cates[e], cate_of[id]) << "row " << r << " element " << e;
      seen.insert(id);
    }
  }
  EXPECT_GT(longest, 1u);
  EXPECT_GT(seen.size(), 20u);  // Zipf over the items, not one id
  const auto out = config::load_pipeline_config(result.config_path);
  EXPECT_EQ(out.data_config().negative_sampler().input_path(), result.table_paths[0]);
  // attr_fields stay as the user wrote them: the engine prefixes them as TorchEasyRec does.
  EXPECT_EQ(out.data_config().negative_sampler().attr_fields(0), "video_id");
}

TEST(GenData, SequenceItemIdFieldPositiveEdgesPairTheUserWithEachItem) {
  TempDir tmp;
  GenDataOptions options;
  options.pipeline_config_path = write_file(
      tmp.file("p.config"),
      with_sampler(R"(negative_sampler_v2 { user_input_path: "u" item_input_path: "i" pos_edge_input_path: "e"
                      num_sample: 4 attr_fields: "video_id" item_id_field: "cand_seq__video_id" user_id_field: "uid" })"));
  options.output_dir = tmp.file("out");
  options.num_rows = 100;
  options.num_eval_rows = 0;
  const auto result = generate_data(options);
  ASSERT_EQ(result.table_paths.size(), 4u);  // items, users, positive edges, items.parquet
  std::set<std::pair<std::string, std::string>> edges;
  for (const auto& f : table_lines(result.table_paths[2], "userid:int64\titemid:int64\tweight:float")) {
    edges.emplace(f[0], f[1]);
  }
  auto reader = parquet::FileReader::open(result.train_path);
  auto table = reader->read();
  for (int64_t r = 0; r < 100; ++r) {
    const auto row = parquet::row_to_json(table, reader->schema(), r);
    const std::string user = std::to_string(row["uid"].get<int64_t>());
    for (const auto& item : split(row["cand_seq__video_id"].get<std::string>(), '|')) {
      EXPECT_TRUE(edges.count({user, item})) << "row " << r << ": edge " << user << " -> " << item;
    }
  }
}

// A sequence whose config sets no sequence_length: the engine reads every item, and gen_data writes
// 1..10 items per row, as TorchEasyRec's mock data writes 10 (tzrec/tests/utils.py,
// `sequence_length or 10`). Where two features read one column, the one length set caps it.
TEST(GenData, SequenceWithoutSequenceLengthGetsUpToTenItems) {
  TempDir tmp;
  GenDataOptions options;
  options.pipeline_config_path = write_file(tmp.file("p.config"), R"(
data_config { fg_mode: FG_NORMAL label_fields: "clk" }
feature_configs { sequence_id_feature { feature_name: "a" expression: "user:hist_a" hash_bucket_size: 50 embedding_dim: 4 sequence_delim: ";" } }
feature_configs { sequence_raw_feature { feature_name: "b" expression: "user:hist_b" sequence_delim: ";" } }
feature_configs { sequence_raw_feature { feature_name: "b3" expression: "user:hist_b" sequence_delim: ";" sequence_length: 3 } }
model_config {
  feature_groups { group_name: "g" feature_names: ["a", "b", "b3"] group_type: DEEP }
  deepfm { deep { hidden_units: [4] } final { hidden_units: [4] } }
}
)");
  options.output_dir = tmp.file("out");
  options.num_rows = 300;
  options.num_eval_rows = 0;
  const auto result = generate_data(options);
  EXPECT_EQ(result.plan.find("hist_a")->sequence_length, 0);
  EXPECT_EQ(result.plan.find("hist_b")->sequence_length, 3);
  auto reader = parquet::FileReader::open(result.train_path);
  auto table = reader->read();
  std::map<std::string, size_t> longest;
  for (int64_t r = 0; r < 300; ++r) {
    const auto row = parquet::row_to_json(table, reader->schema(), r);
    for (const std::string column : {"hist_a", "hist_b"}) {
      const size_t n = split(row[column].get<std::string>(), ';').size();
      ASSERT_GE(n, 1u);
      longest[column] = std::max(longest[column], n);
    }
  }
  EXPECT_EQ(longest["hist_a"], 10u);
  EXPECT_EQ(longest["hist_b"], 3u);
}

TEST(GenData, DeterministicForASeed) {
  TempDir tmp;
  GenDataOptions options;
  options.pipeline_config_path = write_file(tmp.file("p.config"), kConfig);
  options.num_rows = 100;
  options.num_eval_rows = 10;
  options.output_dir = tmp.file("a");
  const auto a = generate_data(options);
  options.output_dir = tmp.file("b");
  const auto b = generate_data(options);
  EXPECT_EQ(read_file(a.train_path), read_file(b.train_path));
  EXPECT_EQ(read_file(a.table_paths[0]), read_file(b.table_paths[0]));
  options.seed = 99;
  options.output_dir = tmp.file("c");
  const auto c = generate_data(options);
  EXPECT_NE(read_file(a.train_path), read_file(c.train_path));
}

TEST(GenData, Errors) {
  TempDir tmp;
  GenDataOptions options;
  options.pipeline_config_path = write_file(tmp.file("bad.config"), "data_config { nope: 1 }");
  options.output_dir = tmp.file("out");
  EXPECT_NE(error_of<ConfigError>([&] { generate_data(options); }).find("bad.config:1:15"), std::string::npos);
  options.pipeline_config_path = tmp.file("missing.config");
  EXPECT_NE(error_of<ConfigError>([&] { generate_data(options); }).find("does not exist"), std::string::npos);
  options.pipeline_config_path = write_file(tmp.file("p.config"), kConfig);
  write_file(tmp.file("file"), "x");
  options.output_dir = tmp.file("file") + "/sub";
  EXPECT_NE(error_of<UsageError>([&] { generate_data(options); }).find("--output_dir"), std::string::npos);
}

}  // namespace gen_data_test
}  // namespace tzrec::datagen
