#include "datagen/gen_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>

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
