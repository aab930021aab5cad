// BatchLoader in Mode::kPredict (no labels, every row kept) and reserved columns (rows aligned
// with the batch across file boundaries and workers, CSV text and Parquet typed).
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "base/error.h"
#include "data/prediction_writer.h"
#include "data/testing_util.h"
#include "feature/batch_loader.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"
#include "parquet/file_reader.h"

namespace tzrec::feature {
namespace batch_loader_predict_test {

using data::testing::TempDir;
using testing::error_of;
using testing::Ids;
using testing::ids_of;
using testing::parse_config;
using Names = std::vector<std::string>;

protos::EasyRecConfig csv_config(int num_workers, int batch_size, const std::string& extra = "") {
  return parse_config(fmt::format(
      R"(data_config {{ dataset_type: CsvDataset with_header: true label_fields: "clk"
                       sample_weight_fields: "w" batch_size: {} num_workers: {} {} }}
         feature_configs {{ id_feature {{ feature_name: "id" embedding_dim: 4 num_buckets: 1000 }} }})",
      batch_size, num_workers, extra));
}

// CSV files "part-<f>.csv" of `sizes` rows with header "user,id,note": id = global row number,
// user = "u<id>", note = a field needing quotes ("n<id>, \"q\"").
struct CsvFiles {
  TempDir dir;
  int64_t total = 0;
  explicit CsvFiles(const std::vector<int>& sizes) {
    for (size_t f = 0; f < sizes.size(); ++f) {
      std::string text = "user,id,note\n";
      for (int i = 0; i < sizes[f]; ++i, ++total) {
        text += fmt::format("u{0},{0},\"n{0}, \"\"q\"\"\"\n", total);
      }
      dir.write(fmt::format("part-{}.csv", f), text);
    }
  }
  std::string glob() const { return dir.path() + "/part-*.csv"; }
};

TEST(BatchLoaderPredict, NoLabelsEvalBatchSizeAndEveryRowKept) {
  CsvFiles d({10});
  // shuffle / drop_remainder are train-only.
  const auto config = csv_config(1, 3, "eval_batch_size: 4 drop_remainder: true shuffle: true");
  BatchLoader loader(config, d.glob(), Mode::kPredict);
  EXPECT_EQ(loader.batch_size(), 4);
  EXPECT_EQ(loader.parser().input_columns(), Names{"id"});
  std::vector<Ids> batches;
  while (auto lb = loader.next()) {
    EXPECT_TRUE(lb->batch.labels.empty());
    EXPECT_TRUE(lb->batch.sample_weights.empty());
    EXPECT_EQ(lb->reserved.num_rows(), 0);  // none requested
    EXPECT_TRUE(lb->reserved.columns.empty());
    batches.push_back(ids_of(lb->batch.sparse_features.values()));
  }
  EXPECT_EQ(batches, (std::vector<Ids>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));

  // Eval needs the label column the input lacks.
  BatchLoader eval(csv_config(1, 3), d.glob(), Mode::kEval);
  const auto msg = error_of<DataError>([&] { eval.next(); });
  EXPECT_NE(msg.find("column 'clk' is needed"), std::string::npos) << msg;
  // No eval_batch_size: batch_size.
  EXPECT_EQ(BatchLoader(csv_config(1, 3), d.glob(), Mode::kPredict).batch_size(), 3);
}

TEST(BatchLoaderPredict, PresentLabelsAreIgnoredFeaturesRequired) {
  TempDir dir;
  const std::string path = dir.write("in.csv", "id,clk,w\n1,x,\n2,1,0.5\n");
  BatchLoader loader(csv_config(1, 8), path, Mode::kPredict);
  auto lb = loader.next();
  ASSERT_TRUE(lb);
  EXPECT_EQ(ids_of(lb->batch.sparse_features.values()), (Ids{1, 2}));
  EXPECT_TRUE(lb->batch.labels.empty());
  BatchLoader eval(csv_config(1, 8), path, Mode::kEval);
  EXPECT_NE(error_of<DataError>([&] { eval.next(); }).find("label 'clk' value 'x'"),
            std::string::npos);

  const std::string no_id = dir.write("no_id.csv", "user,clk\nu,1\n");
  BatchLoader missing(csv_config(1, 8), no_id, Mode::kPredict);
  const auto msg = error_of<DataError>([&] { missing.next(); });
  EXPECT_NE(msg.find(no_id + ": column 'id' is needed"), std::string::npos) << msg;
}

TEST(BatchLoaderPredict, CsvReservedRowsAlignAcrossFilesAndWorkers) {
  // Batches of 4 over files of 7, 0, 5, 3 and 9 rows span file boundaries.
  CsvFiles d({7, 0, 5, 3, 9});
  for (int workers : {1, 2, 3}) {
    SCOPED_TRACE(workers);
    BatchLoader loader(csv_config(workers, 4), d.glob(), Mode::kPredict, nullptr, {},
                       {"note", "user", "id"});
    EXPECT_EQ(loader.reserved_columns(), (Names{"note", "user", "id"}));
    std::multiset<int64_t> seen;
    bool spans_files = false;
    while (auto lb = loader.next()) {
      const Ids ids = ids_of(lb->batch.sparse_features.values());
      const data::RecordBatch& r = lb->reserved;
      ASSERT_EQ(r.num_rows(), lb->batch.batch_size);
      ASSERT_EQ(r.columns.size(), 3u);
      EXPECT_TRUE(r.typed_columns.empty());
      EXPECT_EQ(r.columns[0].name, "note");
      EXPECT_EQ(r.columns[1].name, "user");
      EXPECT_EQ(r.columns[2].name, "id");
      for (size_t i = 0; i < ids.size(); ++i) {
        const auto row = static_cast<int64_t>(i);
        EXPECT_EQ(r.columns[0].cell(row), fmt::format("n{}, \"q\"", ids[i]));
        EXPECT_EQ(r.columns[1].cell(row), fmt::format("u{}", ids[i]));
        EXPECT_EQ(r.columns[2].cell(row), std::to_string(ids[i]));
        seen.insert(ids[i]);
      }
      spans_files = spans_files || r.files.size() > 1;
    }
    EXPECT_TRUE(spans_files);
    EXPECT_EQ(seen.size(), static_cast<size_t>(d.total));
    EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), static_cast<size_t>(d.total));
  }
}

TEST(BatchLoaderPredict, SpecialValuesAndMissingColumns) {
  CsvFiles d({3, 2});
  BatchLoader all(csv_config(1, 8), d.glob(), Mode::kPredict, nullptr, {}, {"ALL_COLUMNS"});
  EXPECT_EQ(all.reserved_columns(), (Names{"user", "id", "note"}));
  BatchLoader effective(csv_config(1, 8), d.glob(), Mode::kPredict, nullptr, {},
                        {"ALL_EFFECTIVE_COLUMNS", "user"});
  EXPECT_EQ(effective.reserved_columns(), (Names{"id", "user"}));  // no label in predict
  auto lb = effective.next();
  ASSERT_TRUE(lb);
  EXPECT_EQ(lb->reserved.columns[0].cell(4), "4");
  EXPECT_EQ(lb->reserved.columns[1].cell(4), "u4");

  const std::string msg = error_of<DataError>([&] {
    BatchLoader l(csv_config(1, 8), d.glob(), Mode::kPredict, nullptr, {}, {"user", "clk"});
  });
  EXPECT_NE(msg.find(d.dir.path() + "/part-0.csv: reserved column 'clk' is not in the input "
                                    "(columns: user, id, note)"),
            std::string::npos)
      << msg;
}

// Parquet files of `sizes` rows (row groups of 3): id int64 = global row, user string (null
// every 5th row), vals list<float> = [id, id + 0.5].
std::vector<std::string> write_parquet(const TempDir& dir, const std::vector<int>& sizes) {
  std::vector<std::string> files;
  int64_t next = 0;
  parquet::WriterOptions options;
  options.row_group_rows = 3;
  for (size_t f = 0; f < sizes.size(); ++f) {
    files.push_back(dir.file(fmt::format("part-{}.parquet", f)));
    parquet::FileWriter w(files.back(),
                          {parquet::WriterField{"id", parquet::PhysicalType::kInt64, false},
                           parquet::WriterField{"user", parquet::PhysicalType::kByteArray},
                           parquet::WriterField{"vals", parquet::PhysicalType::kFloat, true, 1}},
                          options);
    parquet::ColumnBuilder id(w.schema().column(0)), user(w.schema().column(1)),
        vals(w.schema().column(2));
    for (int i = 0; i < sizes[f]; ++i, ++next) {
      id.append(next);
      if (next % 5 == 0) {
        user.append_null();
      } else {
        user.append_string("u" + std::to_string(next));
      }
      vals.begin_list();
      vals.append(static_cast<float>(next));
      vals.append(static_cast<float>(next) + 0.5f);
      vals.end_list();
    }
    parquet::Table t;
    t.num_rows = sizes[f];
    t.columns = {id.finish(), user.finish(), vals.finish()};
    w.write(std::move(t));
    w.close();
  }
  return files;
}

TEST(BatchLoaderPredict, ParquetReservedColumnsKeepTypesAndAlign) {
  TempDir dir;
  const std::vector<int> sizes = {7, 4, 10};
  write_parquet(dir, sizes);
  for (int workers : {1, 2, 4}) {
    SCOPED_TRACE(workers);
    auto config = csv_config(workers, 4);
    config.mutable_data_config()->set_dataset_type(protos::ParquetDataset);
    BatchLoader loader(config, dir.path() + "/part-*.parquet", Mode::kPredict, nullptr, {},
                       {"ALL_COLUMNS"});
    EXPECT_EQ(loader.reserved_columns(), (Names{"id", "user", "vals"}));
    std::set<int64_t> seen;
    bool spans_files = false;
    while (auto lb = loader.next()) {
      const Ids ids = ids_of(lb->batch.sparse_features.values());
      const data::RecordBatch& r = lb->reserved;
      ASSERT_EQ(r.num_rows(), lb->batch.batch_size);
      ASSERT_EQ(r.typed_columns.size(), 3u);
      EXPECT_TRUE(r.columns.empty());
      const auto& id = r.typed_columns[0].values;
      const auto& user = r.typed_columns[1].values;
      const auto& vals = r.typed_columns[2].values;
      EXPECT_EQ(id.type(), parquet::PhysicalType::kInt64);
      EXPECT_TRUE(user.descriptor.is_string());
      EXPECT_EQ(r.typed_columns[2].list_depth(), 1);
      for (size_t i = 0; i < ids.size(); ++i) {
        const auto row = static_cast<int64_t>(i);
        EXPECT_EQ(id.data<int64_t>()[row], ids[i]);
        if (ids[i] % 5 == 0) {
          EXPECT_TRUE(user.is_null(row));
        } else {
          EXPECT_EQ(user.bytes(row), "u" + std::to_string(ids[i]));
        }
        const auto [b, e] = vals.row_slots(row);
        ASSERT_EQ(e - b, 2);
        EXPECT_EQ(vals.data<float>()[b], static_cast<float>(ids[i]));
        EXPECT_EQ(vals.data<float>()[b + 1], static_cast<float>(ids[i]) + 0.5f);
        seen.insert(ids[i]);
      }
      spans_files = spans_files || r.files.size() > 1;
    }
    if (workers == 1) EXPECT_TRUE(spans_files);
    EXPECT_EQ(seen.size(), 21u);
  }
  auto config = csv_config(1, 4);
  config.mutable_data_config()->set_dataset_type(protos::ParquetDataset);
  const std::string msg = error_of<DataError>([&] {
    BatchLoader l(config, dir.path() + "/part-*.parquet", Mode::kPredict, nullptr, {}, {"w"});
  });
  EXPECT_NE(msg.find(dir.path() + "/part-0.parquet: reserved column 'w' is not in the input "
                                  "(columns: id, user, vals)"),
            std::string::npos)
      << msg;
}

// Loader -> writer: reserved columns as LoadedBatch carries them are written unchanged next to
// an output, by both writers.
TEST(BatchLoaderPredict, ReservedColumnsGoStraightToTheWriters) {
  TempDir dir;
  write_parquet(dir, {7, 4, 10});
  auto config = csv_config(2, 4);
  config.mutable_data_config()->set_dataset_type(protos::ParquetDataset);
  for (const char* type : {"ParquetWriter", "CsvWriter"}) {
    SCOPED_TRACE(type);
    BatchLoader loader(config, dir.path() + "/part-*.parquet", Mode::kPredict, nullptr, {},
                       {"user", "vals"});
    auto writer = data::make_prediction_writer(type, dir.file("out"), 0);
    std::vector<int64_t> order;
    while (auto lb = loader.next()) {
      const Ids ids = ids_of(lb->batch.sparse_features.values());
      data::OutputColumn p{"p", 1, {}};
      for (int64_t id : ids) p.values.push_back(static_cast<float>(id) * 2);
      writer->write({p}, lb->reserved);
      order.insert(order.end(), ids.begin(), ids.end());
    }
    writer->close();
    ASSERT_EQ(writer->rows_written(), 21);
    if (std::string(type) == "ParquetWriter") {
      parquet::Table t = parquet::FileReader::open(writer->path())->read();
      ASSERT_EQ(t.num_rows, 21);
      for (int64_t r = 0; r < 21; ++r) {
        const int64_t id = order[static_cast<size_t>(r)];
        EXPECT_EQ(t.column("p").data<float>()[r], static_cast<float>(id) * 2);
        if (id % 5 == 0) {
          EXPECT_TRUE(t.column("user").is_null(r));
        } else {
          EXPECT_EQ(t.column("user").bytes(r), "u" + std::to_string(id));
        }
        const auto& vals = t.column("vals");
        const auto [b, e] = vals.row_slots(r);
        ASSERT_EQ(e - b, 2);
        EXPECT_EQ(vals.data<float>()[b + 1], static_cast<float>(id) + 0.5f);
      }
    } else {
      std::ifstream in(writer->path());
      std::string line;
      std::getline(in, line);
      EXPECT_EQ(line, "p,user,vals");
      for (int64_t id : order) {
        ASSERT_TRUE(std::getline(in, line));
        EXPECT_EQ(line, fmt::format("{},{},\"{},{}\"", id * 2,
                                    id % 5 == 0 ? "" : "u" + std::to_string(id), id,
                                    static_cast<float>(id) + 0.5f));
      }
    }
  }
}

}  // namespace batch_loader_predict_test
}  // namespace tzrec::feature
