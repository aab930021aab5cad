// BatchLoader on ParquetDataset: the same rows give the same batches as CsvDataset, rows are
// sharded over workers exactly once, and a saved position resumes with any number of workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "base/error.h"
#include "data/synthetic_criteo.h"
#include "data/testing_util.h"
#include "feature/batch_loader.h"
#include "feature/testing_config.h"

namespace tzrec::feature {
namespace batch_loader_parquet_test {

using data::testing::TempDir;
using testing::parse_config;

constexpr int64_t kRows = 5000;

// Synthetic Criteo rows [0, kRows) as train.csv and train.parquet (row groups of 700 rows).
struct Files {
  TempDir dir;
  std::string csv, parquet;
  explicit Files(bool string_categoricals = false) {
    data::SyntheticCriteoOptions o;
    o.num_rows = kRows;
    o.seed = 5;
    o.row_group_rows = 700;
    o.string_categoricals = string_categoricals;
    csv = dir.path() + "/train.csv";
    parquet = dir.path() + "/train.parquet";
    data::write_synthetic_criteo_csv(csv, o);
    data::write_synthetic_criteo_parquet(parquet, o);
  }
};

protos::EasyRecConfig config(protos::DatasetType type, int workers, bool fg_normal = false) {
  const auto& buckets = data::synthetic_criteo_bucket_sizes();
  std::string features;
  for (int i : {0, 5, 12}) {
    features += fmt::format(
        "feature_configs {{ raw_feature {{ feature_name: \"int_{0}\" expression: \"user:int_{0}\" "
        "}} }}\n",
        i);
  }
  for (int i : {0, 3, 25}) {
    if (fg_normal) {
      features += fmt::format(
          "feature_configs {{ id_feature {{ feature_name: \"cat_{0}\" expression: \"item:cat_{0}\" "
          "hash_bucket_size: 1000 embedding_dim: 4 }} }}\n",
          i);
    } else {
      features += fmt::format(
          "feature_configs {{ id_feature {{ feature_name: \"cat_{}\" num_buckets: {} "
          "embedding_dim: 4 }} }}\n",
          i, buckets[static_cast<size_t>(i)]);
    }
  }
  auto c = parse_config(fmt::format(
      "data_config {{ batch_size: 256 with_header: true label_fields: \"label\" num_workers: {} "
      "fg_mode: {} }}\n{}",
      workers, fg_normal ? "FG_NORMAL" : "FG_NONE", features));
  c.mutable_data_config()->set_dataset_type(type);
  return c;
}

// One row of a batch: label, dense values, and the ids of each sparse feature.
using Row = std::tuple<float, std::vector<float>, std::vector<std::vector<int64_t>>>;

std::vector<Row> rows_of(const sparse::Batch& b) {
  const int64_t n = b.batch_size;
  std::vector<Row> out(static_cast<size_t>(n));
  auto label = b.labels.at("label").contiguous();
  auto dense = b.dense_features.values().contiguous();
  const int64_t width = dense.size(1);
  const auto& kjt = b.sparse_features;
  auto values = kjt.values().contiguous();
  auto lengths = kjt.lengths().contiguous();
  const int64_t* v = values.data_ptr<int64_t>();
  const int64_t* l = lengths.data_ptr<int64_t>();
  int64_t pos = 0;
  for (size_t k = 0; k < kjt.keys().size(); ++k) {
    for (int64_t r = 0; r < n; ++r) {
      auto& ids = std::get<2>(out[static_cast<size_t>(r)]);
      ids.resize(kjt.keys().size());
      const int64_t len = l[static_cast<int64_t>(k) * n + r];
      ids[k].assign(v + pos, v + pos + len);
      pos += len;
    }
  }
  for (int64_t r = 0; r < n; ++r) {
    std::get<0>(out[static_cast<size_t>(r)]) = label.data_ptr<float>()[r];
    const float* d = dense.data_ptr<float>() + r * width;
    std::get<1>(out[static_cast<size_t>(r)]).assign(d, d + width);
  }
  return out;
}

// All rows of a loader (continuing from `first` batches already taken), in delivery order.
std::vector<Row> drain(BatchLoader& loader, std::vector<int64_t>* batch_sizes = nullptr) {
  std::vector<Row> out;
  while (auto lb = loader.next()) {
    if (batch_sizes) batch_sizes->push_back(lb->batch.batch_size);
    for (auto& r : rows_of(lb->batch)) out.push_back(std::move(r));
  }
  return out;
}

std::vector<Row> sorted(std::vector<Row> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(BatchLoaderParquet, SameRowsAsCsvInTheSameOrder) {
  Files f;
  BatchLoader csv(config(protos::CsvDataset, 1), f.csv, Mode::kTrain);
  BatchLoader pq(config(protos::ParquetDataset, 1), f.parquet, Mode::kTrain);
  std::vector<int64_t> sizes;
  const auto a = drain(csv);
  const auto b = drain(pq, &sizes);
  ASSERT_EQ(a.size(), static_cast<size_t>(kRows));
  EXPECT_TRUE(a == b);
  // 5000 = 19 * 256 + 136: batches span row groups of 700 rows.
  ASSERT_EQ(sizes.size(), 20u);
  EXPECT_EQ(sizes.back(), 136);
  // A row checked against the generator itself, so that equal parses cannot both be wrong.
  const data::SyntheticCriteoModel model(5);
  const auto row = model.row(1234);
  EXPECT_EQ(std::get<0>(b[1234]), static_cast<float>(row.label));
  EXPECT_EQ(std::get<1>(b[1234])[1], static_cast<float>(row.ints[5]));
  EXPECT_EQ(std::get<2>(b[1234])[1], (std::vector<int64_t>{row.cats[3]}));
}

TEST(BatchLoaderParquet, HashedStringColumnsEqualCsv) {
  Files f(/*string_categoricals=*/true);
  BatchLoader csv(config(protos::CsvDataset, 1, true), f.csv, Mode::kEval);
  BatchLoader pq(config(protos::ParquetDataset, 1, true), f.parquet, Mode::kEval);
  const auto a = drain(csv);
  EXPECT_EQ(a.size(), static_cast<size_t>(kRows));
  EXPECT_TRUE(a == drain(pq));
}

TEST(BatchLoaderParquet, WorkersReadEveryRowOnceWhateverTheirNumber) {
  Files f;
  BatchLoader one(config(protos::ParquetDataset, 1), f.parquet, Mode::kTrain);
  const auto all = sorted(drain(one));
  for (int workers : {2, 3, 5}) {
    BatchLoader many(config(protos::ParquetDataset, workers), f.parquet, Mode::kTrain);
    EXPECT_EQ(many.num_workers(), workers);  // rows, not files, are split
    EXPECT_TRUE(sorted(drain(many)) == all) << workers << " workers";
  }
}

TEST(BatchLoaderParquet, ResumeWithTheSameOrAnotherNumberOfWorkers) {
  Files f;
  const std::string input = f.parquet + "," + f.parquet;  // the same file twice: 2 x 5000 rows
  BatchLoader full(config(protos::ParquetDataset, 3), input, Mode::kTrain);
  const auto uninterrupted = drain(full);
  ASSERT_EQ(uninterrupted.size(), static_cast<size_t>(2 * kRows));

  for (int resume_workers : {3, 2, 4}) {
    BatchLoader first(config(protos::ParquetDataset, 3), input, Mode::kTrain);
    std::vector<Row> head;
    data::ReadPosition position;
    for (int i = 0; i < 7; ++i) {
      auto lb = first.next();
      ASSERT_TRUE(lb);
      for (auto& r : rows_of(lb->batch)) head.push_back(std::move(r));
      position = lb->position;
    }
    const auto saved = data::ReadPosition::from_json(position.to_json());
    BatchLoader rest(config(protos::ParquetDataset, resume_workers), input, Mode::kTrain, &saved);
    const auto tail = drain(rest);
    if (resume_workers == 3) {
      // Same workers: exactly the uninterrupted continuation.
      std::vector<Row> joined = head;
      joined.insert(joined.end(), tail.begin(), tail.end());
      EXPECT_TRUE(joined == uninterrupted);
    } else {
      EXPECT_EQ(head.size() + tail.size(), uninterrupted.size()) << resume_workers;
      std::vector<Row> joined = head;
      joined.insert(joined.end(), tail.begin(), tail.end());
      EXPECT_TRUE(sorted(joined) == sorted(uninterrupted)) << resume_workers << " workers";
    }
  }
}

TEST(BatchLoaderParquet, ResumeRefusesOtherInputs) {
  Files f;
  BatchLoader first(config(protos::ParquetDataset, 2), f.parquet, Mode::kTrain);
  const auto position = first.next()->position;
  // A CSV position for Parquet input and the other way round.
  BatchLoader csv(config(protos::CsvDataset, 1), f.csv, Mode::kTrain);
  const auto csv_position = csv.next()->position;
  std::string msg;
  try {
    BatchLoader l(config(protos::ParquetDataset, 2), f.parquet, Mode::kTrain, &csv_position);
  } catch (const DataError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("written for CsvDataset input"), std::string::npos) << msg;
  msg.clear();
  try {
    BatchLoader l(config(protos::CsvDataset, 1), f.csv, Mode::kTrain, &position);
  } catch (const DataError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("written for ParquetDataset input"), std::string::npos) << msg;
  // A file with another row count.
  data::SyntheticCriteoOptions o;
  o.num_rows = 10;
  const std::string other = f.dir.path() + "/other.parquet";
  data::write_synthetic_criteo_parquet(other, o);
  std::filesystem::rename(other, f.parquet);
  msg.clear();
  try {
    BatchLoader l(config(protos::ParquetDataset, 2), f.parquet, Mode::kTrain, &position);
  } catch (const DataError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find(f.parquet), std::string::npos) << msg;
}

TEST(BatchLoaderParquet, MissingColumnNamesFileAndColumn) {
  Files f;
  auto c = config(protos::ParquetDataset, 1);
  c.mutable_data_config()->set_label_fields(0, "click");
  std::string msg;
  try {
    BatchLoader l(c, f.parquet, Mode::kTrain);
  } catch (const DataError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find(f.parquet), std::string::npos) << msg;
  EXPECT_NE(msg.find("click"), std::string::npos) << msg;
}

}  // namespace batch_loader_parquet_test
}  // namespace tzrec::feature
