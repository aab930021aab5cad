#include "export/exporter.h"

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/scoped_env.h"
#include "export/export_dir.h"
#include "export/exported_model.h"
#include "train/checkpoint_policy.h"
#include "checkpoint/safetensors.h"
#include "train/training_session_testing.h"

namespace fs = std::filesystem;

namespace tzrec::exporting {
namespace exporter_test {

const char* const kTable = "embedding_group.emb_impls.__BASE__.ebc.embedding_bags.cat_0_emb.weight";

// Sets an environment variable for the scope of a test.
// Identical weights give predictions equal up to float32 rounding, not always bit for bit: with
// more than one thread the order of some sums depends on how BLAS and torch split the work
// (CPU features, thread count, whether a pool is busy); on an AVX-512 machine even the same
// session predicts the same batch differently in the last bits from one call to the next
// (observed: 3.6e-7 on logits of order 1; exact with OMP_NUM_THREADS=1). A sum of n float32
// terms reordered moves by at most about n * 1.2e-7 * sum|terms|; with the widths here (≤ 512)
// and values of order 1 a bound of 1e-5 relative and absolute is far above that noise and far
// below any real difference (a wrong table row or weight moves predictions by > 1e-3).
bool same_up_to_float_rounding(const torch::Tensor& got, const torch::Tensor& want) {
  return got.sizes() == want.sizes() && torch::allclose(got, want, /*rtol=*/1e-5, /*atol=*/1e-5);
}

// Every parameter and buffer of `b` equals `a`'s bit for bit.
void expect_same_tensors(train::TrainingSession& a, train::TrainingSession& b) {
  auto av = a.model_tensors();
  auto bv = b.model_tensors();
  std::map<std::string, torch::Tensor> bm(bv.begin(), bv.end());
  ASSERT_EQ(av.size(), bm.size());
  for (const auto& [name, t] : av) {
    ASSERT_TRUE(bm.count(name)) << name;
    EXPECT_TRUE(torch::equal(t, bm.at(name).to(t.scalar_type()))) << name;
  }
}

class ExporterTest : public train::SyntheticDeepFmTest {
 protected:
  ExporterTest() : SyntheticDeepFmTest(512) {}

  // Trains `steps` steps and saves a checkpoint of the last one; returns the session.
  std::unique_ptr<train::TrainingSession> train_and_save(int64_t steps) {
    auto session = std::make_unique<train::TrainingSession>(config_, true);
    auto data = batches();
    for (int64_t s = 0; s < steps; ++s) train_on(*session, data[s % data.size()], s);
    checkpointing::save_checkpoint(config_.model_dir(), snapshot(*session, steps - 1));
    return session;
  }
  std::string write_config() {
    const std::string path = (dir_ / "pipeline.config").string();
    config::save_pipeline_config(config_, path);
    return path;
  }
  ExportOptions options(const std::string& name = "export") {
    ExportOptions o;
    o.pipeline_config_path = write_config();
    o.export_dir = (dir_ / name).string();
    return o;
  }
  std::map<std::string, torch::Tensor> dense_of(train::TrainingSession& s) {
    std::map<std::string, torch::Tensor> out;
    for (const auto& [name, t] : s.model().dense_parameters()) out.emplace(name, t.detach().clone());
    return out;
  }
};

TEST_F(ExporterTest, UseDenseEmaExportsTheEmaWeights) {
  ScopedEnv quant("QUANT_EMB", "FP32");
  config_.mutable_train_config()->mutable_dense_optimizer()->mutable_ema()->set_decay(0.5);
  auto session = train_and_save(3);
  const auto trained = dense_of(*session);
  const auto ema = session->ema_tensors();
  ASSERT_FALSE(ema.empty());

  // Unset → follows dense_optimizer.ema: the EMA weights.
  export_model(options("with_ema"));
  auto file = checkpointing::load_safetensors((dir_ / "with_ema" / kExportWeightsFile).string());
  EXPECT_EQ(file.metadata.at("use_dense_ema"), "true");
  EXPECT_EQ(file.metadata.at("step"), "2");
  for (const auto& [name, t] : ema) {
    EXPECT_TRUE(torch::equal(file.tensors.at(name), t)) << name;
    EXPECT_FALSE(torch::equal(file.tensors.at(name), trained.at(name))) << name;
  }

  // export_config.use_dense_ema: false → the trained weights.
  config_.mutable_export_config()->set_use_dense_ema(false);
  export_model(options("without_ema"));
  file = checkpointing::load_safetensors((dir_ / "without_ema" / kExportWeightsFile).string());
  EXPECT_EQ(file.metadata.at("use_dense_ema"), "false");
  for (const auto& [name, t] : trained) EXPECT_TRUE(torch::equal(file.tensors.at(name), t)) << name;
  // Tables are never averaged.
  auto checkpoint = checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 2));
  EXPECT_TRUE(torch::equal(file.tensors.at(kTable), checkpoint.model.at(kTable)));
}

TEST_F(ExporterTest, UseDenseEmaWithoutEmaStateIsAnError) {
  train_and_save(1);
  config_.mutable_export_config()->set_use_dense_ema(true);
  try {
    export_model(options());
    FAIL();
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("export_config.use_dense_ema"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "export"));
}

TEST_F(ExporterTest, ExportDirectoryLayout) {
  train_and_save(1);
  const auto asset = dir_ / "vocab.txt";
  std::ofstream(asset) << "a\nb\n";
  auto o = options();
  o.asset_files = {asset.string()};
  o.additional_export_config = R"({"cand_seq_pk": "cand_seq"})";
  export_model(o);
  const fs::path out = dir_ / "export";
  EXPECT_TRUE(fs::is_regular_file(out / "vocab.txt"));
  EXPECT_TRUE(fs::is_regular_file(out / "version"));
  auto acc = nlohmann::json::parse(std::ifstream(out / kModelAccFile));
  EXPECT_EQ(acc, nlohmann::json::parse(R"({"SPARSE_INT64": "1", "QUANT_EMB": "INT8", "cand_seq_pk": "cand_seq"})"));
  auto saved = config::load_pipeline_config((out / kExportConfigFile).string());
  EXPECT_EQ(config::to_text(saved), config::to_text(config_));
  auto file = checkpointing::load_safetensors((out / kExportWeightsFile).string());
  EXPECT_EQ(file.metadata.at("format"), kExportFormat);
  EXPECT_EQ(file.metadata.at("quant_emb"), "INT8");
  EXPECT_EQ(file.tensors.at(kTable).scalar_type(), torch::kUInt8);
  auto tables = nlohmann::json::parse(file.metadata.at("tables"));
  EXPECT_NE(std::find(tables.begin(), tables.end(), kTable), tables.end());
  // Nothing is left behind next to the export.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.path().filename().string().rfind(".export", 0) == 0;
  EXPECT_EQ(entries, 0);
}

TEST_F(ExporterTest, BadRequestsAreRefused) {
  train_and_save(1);
  fs::create_directories(dir_ / "exists");
  EXPECT_THROW(export_model(options("exists")), UsageError);
  auto o = options();
  o.asset_files = {(dir_ / "missing.txt").string()};
  EXPECT_THROW(export_model(o), UsageError);
  o = options();
  o.additional_export_config = "[1, 2]";
  EXPECT_THROW(export_model(o), UsageError);
  o.additional_export_config = "{bad";
  EXPECT_THROW(export_model(o), UsageError);
  {
    ScopedEnv aot("ENABLE_AOT", "1");
    EXPECT_THROW(export_model(options()), NotSupportedError);
  }
  {
    ScopedEnv quant("QUANT_EMB", "INT4");
    EXPECT_THROW(export_model(options()), NotSupportedError);
  }
  config_.mutable_export_config()->set_exporter_type("newest");
  EXPECT_THROW(export_model(options()), ConfigError);
  EXPECT_FALSE(fs::exists(dir_ / "export"));
  config_.mutable_export_config()->set_exporter_type("latest");
  o = options();
  o.checkpoint_path = (dir_ / "nowhere").string();
  EXPECT_THROW(export_model(o), CheckpointError);
  EXPECT_FALSE(fs::exists(dir_ / "export"));
}

TEST_F(ExporterTest, ChoosesTheCheckpoint) {
  train_and_save(1);
  auto session = std::make_unique<train::TrainingSession>(config_, true);
  checkpointing::save_checkpoint(config_.model_dir(), snapshot(*session, 5));
  checkpointing::save_checkpoint(config_.model_dir(), snapshot(*session, 9));
  std::ofstream(fs::path(config_.model_dir()) / "train_eval_result_v2.txt")
      << R"({"global_step": 0, "auc": 0.6})" "\n" R"({"global_step": 5, "auc": 0.8})" "\n"
      << R"({"global_step": 9, "auc": 0.7})" "\n";
  EXPECT_EQ(checkpoint_to_export(config_, "").second, 9);
  config_.mutable_export_config()->set_exporter_type("best");
  EXPECT_EQ(checkpoint_to_export(config_, "").second, 5);
  config_.mutable_export_config()->set_metric_larger_is_better(false);
  EXPECT_EQ(checkpoint_to_export(config_, "").second, 0);
  config_.mutable_export_config()->set_best_exporter_metric("auc_ctr");  // no such metric: latest
  EXPECT_EQ(checkpoint_to_export(config_, "").second, 9);
  EXPECT_EQ(checkpoint_to_export(config_, checkpointing::checkpoint_dir(config_.model_dir(), 5)).second, 5);
  EXPECT_THROW(checkpoint_to_export(config_, (dir_ / "nowhere").string()), CheckpointError);
  config_.set_model_dir((dir_ / "empty").string());
  EXPECT_THROW(checkpoint_to_export(config_, ""), CheckpointError);
}

TEST_F(ExporterTest, ExportedModelPredictsLikeTheCheckpoint) {
  auto session = train_and_save(4);
  session->model().eval();
  auto batch = batches()[1];
  auto expected = session->model().predict(batch);
  {
    ScopedEnv quant("QUANT_EMB", "0");
    export_model(options("fp32"));
  }
  auto fp32 = load_exported_model((dir_ / "fp32").string());
  EXPECT_EQ(fp32.step, 3);
  EXPECT_EQ(fp32.quant, EmbeddingQuant::kFp32);
  // The export is exact: every tensor loads back bit for bit.
  expect_same_tensors(*session, *fp32.session);
  auto got = fp32.session->model().predict(batch);
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [name, t] : expected) EXPECT_TRUE(same_up_to_float_rounding(got.at(name), t)) << name;

  export_model(options("int8"));
  auto int8 = load_exported_model((dir_ / "int8").string());
  EXPECT_EQ(int8.quant, EmbeddingQuant::kInt8);
  got = int8.session->model().predict(batch);
  const auto diff = (got.at("probs") - expected.at("probs")).abs().max().item<double>();
  EXPECT_GT(diff, 0.0);    // the tables were quantized
  EXPECT_LT(diff, 0.02);   // by a small step
}

TEST_F(ExporterTest, Float16TablesRoundTrip) {
  // A table trained in float16 (id_feature data_type FP16) is quantized from its float16 values
  // and loaded back into a float16 parameter.
  for (auto& fc : *config_.mutable_feature_configs()) {
    if (fc.has_id_feature() && fc.id_feature().feature_name() == "cat_0") fc.mutable_id_feature()->set_data_type("FP16");
  }
  auto session = train_and_save(2);
  session->model().eval();
  auto batch = batches()[0];
  auto expected = session->model().predict(batch).at("probs");
  {
    ScopedEnv quant("QUANT_EMB", "FP16");
    export_model(options("fp16"));
  }
  auto file = checkpointing::load_safetensors((dir_ / "fp16" / kExportWeightsFile).string());
  auto checkpoint = checkpointing::load_checkpoint(checkpointing::checkpoint_dir(config_.model_dir(), 1));
  ASSERT_EQ(checkpoint.model.at(kTable).scalar_type(), torch::kHalf);
  EXPECT_TRUE(torch::equal(file.tensors.at(kTable), checkpoint.model.at(kTable)));
  {
    ScopedEnv quant("QUANT_EMB", "FP32");
    export_model(options("fp32"));
  }
  file = checkpointing::load_safetensors((dir_ / "fp32" / kExportWeightsFile).string());
  EXPECT_TRUE(torch::equal(file.tensors.at(kTable), checkpoint.model.at(kTable).to(torch::kFloat)));
  auto fp32 = load_exported_model((dir_ / "fp32").string());
  EXPECT_EQ(fp32.session->model_tensors().size(), session->model_tensors().size());
  expect_same_tensors(*session, *fp32.session);
  EXPECT_TRUE(same_up_to_float_rounding(fp32.session->model().predict(batch).at("probs"), expected));
  export_model(options("int8"));
  auto int8 = load_exported_model((dir_ / "int8").string());
  EXPECT_LT((int8.session->model().predict(batch).at("probs") - expected).abs().max().item<double>(), 0.02);
}

TEST_F(ExporterTest, LoadingRefusesWhatIsNotAnExport) {
  EXPECT_THROW(load_exported_model((dir_ / "nowhere").string()), UsageError);
  train_and_save(1);
  {
    ScopedEnv quant("QUANT_EMB", "FP32");
    export_model(options());
  }
  const fs::path weights = dir_ / "export" / kExportWeightsFile;
  auto file = checkpointing::load_safetensors(weights.string());
  // A table of the wrong width.
  auto tensors = file.tensors;
  tensors[kTable] = torch::zeros({tensors[kTable].size(0), 3});
  checkpointing::save_safetensors(weights.string(), tensors, file.metadata);
  EXPECT_THROW(load_exported_model((dir_ / "export").string()), CheckpointError);
  // A checkpoint's model.safetensors is not an export.
  checkpointing::save_safetensors(weights.string(), file.tensors, {});
  EXPECT_THROW(load_exported_model((dir_ / "export").string()), CheckpointError);
  // A missing tensor.
  tensors = file.tensors;
  tensors.erase(kTable);
  checkpointing::save_safetensors(weights.string(), tensors, file.metadata);
  EXPECT_THROW(load_exported_model((dir_ / "export").string()), CheckpointError);
}

}  // namespace exporter_test
}  // namespace tzrec::exporting
