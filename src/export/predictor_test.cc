#include "export/predictor.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/error.h"
#include "export/exporter.h"
#include "parquet/file_reader.h"
#include "train/training_session_testing.h"

namespace fs = std::filesystem;

namespace tzrec::exporting {
namespace predictor_test {

class PredictorTest : public train::SyntheticDeepFmTest {
 protected:
  PredictorTest() : SyntheticDeepFmTest(300) {}

  void SetUp() override {
    SyntheticDeepFmTest::SetUp();
    ::setenv("QUANT_EMB", "FP32", 1);
    session_ = std::make_unique<train::TrainingSession>(config_, true);
    auto data = batches();
    for (int64_t s = 0; s < 2; ++s) train_on(*session_, data[s], s);
    checkpointing::save_checkpoint(config_.model_dir(), snapshot(*session_, 1));
    config_path_ = (dir_ / "pipeline.config").string();
    config::save_pipeline_config(config_, config_path_);
    session_->model().eval();
    // What the model predicts for every row, in file order.
    torch::NoGradGuard no_grad;
    for (const auto& batch : batches()) expected_.push_back(session_->model().predict(batch).at("probs"));
  }
  void TearDown() override {
    ::unsetenv("QUANT_EMB");
    ::unsetenv("RANK");
    ::unsetenv("WORLD_SIZE");
    ::unsetenv("MASTER_ADDR");
    ::unsetenv("MASTER_PORT");
    SyntheticDeepFmTest::TearDown();
  }
  PredictOptions from_checkpoint(const std::string& out) const {
    PredictOptions o;
    o.pipeline_config_path = config_path_;
    o.predict_input_path = config_.train_input_path();
    o.predict_output_path = (dir_ / out).string();
    return o;
  }
  torch::Tensor expected_probs() const { return torch::cat(expected_); }

  std::unique_ptr<train::TrainingSession> session_;
  std::string config_path_;
  std::vector<torch::Tensor> expected_;
};

std::vector<float> float_column(const parquet::Table& t, const std::string& name) {
  const auto& c = t.column(name);
  return std::vector<float>(c.data<float>(), c.data<float>() + c.num_rows);
}

TEST_F(PredictorTest, ExportedModelToParquetWithReservedColumns) {
  ExportOptions e;
  e.pipeline_config_path = config_path_;
  e.export_dir = (dir_ / "export").string();
  export_model(e);
  PredictOptions o = from_checkpoint("pred");
  o.pipeline_config_path.clear();
  o.scripted_model_path = e.export_dir;
  o.reserved_columns = "label,cat_3";
  o.batch_size = 77;  // batches of another size than training's
  auto summary = predict(o);
  EXPECT_EQ(summary.rows, 300);
  EXPECT_EQ(summary.batches, 4);
  EXPECT_EQ(summary.output_file, (dir_ / "pred" / "part-0.parquet").string());
  auto out = parquet::FileReader::open(summary.output_file)->read();
  ASSERT_EQ(out.num_rows, 300);
  ASSERT_EQ(out.columns.size(), 4u);  // logits, probs, label, cat_3
  EXPECT_EQ(out.columns[0].name(), "logits");
  EXPECT_EQ(out.columns[1].name(), "probs");
  auto probs = torch::tensor(float_column(out, "probs"));
  EXPECT_TRUE(torch::allclose(probs, expected_probs(), 1e-6, 1e-6));
  auto in = parquet::FileReader::open(config_.train_input_path())->read();
  for (const char* name : {"label", "cat_3"}) {
    const auto& a = in.column(name);
    const auto& b = out.column(name);
    ASSERT_EQ(b.type(), parquet::PhysicalType::kInt64) << name;
    EXPECT_TRUE(std::equal(a.data<int64_t>(), a.data<int64_t>() + 300, b.data<int64_t>())) << name;
  }
}

TEST_F(PredictorTest, CheckpointToCsvWithSelectedOutputs) {
  PredictOptions o = from_checkpoint("pred");
  o.writer_type = "CsvWriter";
  o.output_columns = "probs";
  o.predict_steps = 2;
  auto summary = predict(o);
  EXPECT_EQ(summary.rows, 256);
  std::ifstream in(summary.output_file);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "probs");
  std::vector<float> probs;
  while (std::getline(in, line)) probs.push_back(std::stof(line));
  ASSERT_EQ(probs.size(), 256u);
  EXPECT_TRUE(torch::allclose(torch::tensor(probs), expected_probs().narrow(0, 0, 256), 1e-6, 1e-6));
}

TEST_F(PredictorTest, RanksPredictTheirShares) {
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);  // as torchrun sets them; predict opens no connection
  ::setenv("MASTER_PORT", "1", 1);
  int64_t total = 0;
  std::vector<float> all;
  for (const char* rank : {"0", "1"}) {
    ::setenv("RANK", rank, 1);
    auto summary = predict(from_checkpoint("pred"));
    EXPECT_EQ(summary.output_file, (dir_ / "pred" / (std::string("part-") + rank + ".parquet")).string());
    auto probs = float_column(parquet::FileReader::open(summary.output_file)->read(), "probs");
    all.insert(all.end(), probs.begin(), probs.end());
    total += summary.rows;
    EXPECT_GT(summary.rows, 0);
  }
  EXPECT_EQ(total, 300);
  EXPECT_TRUE(torch::allclose(torch::tensor(all), expected_probs(), 1e-6, 1e-6));
}

TEST_F(PredictorTest, BadFlagsAreRefused) {
  auto o = from_checkpoint("pred");
  o.output_columns = "probs,score";
  try {
    predict(o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'score'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("logits, probs"), std::string::npos) << e.what();
  }
  o = from_checkpoint("pred");
  o.writer_type = "OdpsWriter";
  EXPECT_THROW(predict(o), NotSupportedError);
  o = from_checkpoint("pred");
  o.dataset_type = "HiveDataset2";
  EXPECT_THROW(predict(o), UsageError);
  o = from_checkpoint("pred");
  o.debug_level = -1;
  EXPECT_THROW(predict(o), UsageError);
  o = from_checkpoint("pred");
  o.reserved_columns = "no_such_column";
  EXPECT_THROW(predict(o), DataError);
  o = from_checkpoint("pred");
  o.pipeline_config_path.clear();
  EXPECT_THROW(predict(o), UsageError);
  o.scripted_model_path = (dir_ / "model").string();  // a model_dir, not an export
  EXPECT_THROW(predict(o), UsageError);
}

}  // namespace predictor_test
}  // namespace tzrec::exporting
