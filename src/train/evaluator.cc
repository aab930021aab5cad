#include "train/evaluator.h"

#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "base/error.h"
#include "base/logging.h"
#include "feature/batch_loader.h"

namespace tzrec::train {

std::map<std::string, double> evaluate(models::Model& model, const protos::EasyRecConfig& config,
                                       const std::string& input_path, dist::ProcessGroup* pg) {
  if (input_path.empty()) {
    throw ConfigError("eval_input_path: is empty; set it in the config or pass --eval_input_path");
  }
  const auto& eval_config = config.eval_config();
  const int64_t max_steps = eval_config.has_num_steps() ? eval_config.num_steps() : -1;
  const int64_t log_every = std::max<int64_t>(1, eval_config.log_step_count_steps());
  const bool distributed = pg != nullptr && pg->world_size() > 1;

  model.eval();
  model.reset_metrics();
  torch::NoGradGuard no_grad;
  feature::LoaderShard shard;
  if (distributed) shard = {pg->rank(), pg->world_size()};
  feature::BatchLoader loader(config, input_path, feature::Mode::kEval, nullptr, shard);
  int64_t step = 0;
  std::optional<sparse::Batch> last;  // a finished rank re-runs it while others still evaluate
  bool exhausted = false;
  while (true) {
    std::optional<feature::LoadedBatch> loaded;
    if (!exhausted && (max_steps < 0 || step < max_steps)) loaded = loader.next();
    exhausted = !loaded.has_value();
    if (distributed) {
      // [any rank has a batch, every rank has had one]
      torch::Tensor status = torch::tensor({exhausted ? 0 : 1, (loaded || last) ? 1 : 0}, torch::kInt32);
      torch::Tensor any = status.narrow(0, 0, 1).clone();
      pg->all_reduce(any, dist::ReduceOp::kMax, "eval data status");
      torch::Tensor all = status.narrow(0, 1, 1).clone();
      pg->all_reduce(all, dist::ReduceOp::kMin, "eval data status");
      if (any.item<int>() == 0) break;
      if (all.item<int>() == 0) {
        throw DataError(fmt::format(
            "eval input '{}' has no rows for at least one of the {} ranks; give the eval data at least "
            "world_size x num_workers files (CSV) or rows (Parquet)",
            input_path, pg->world_size()));
      }
      if (!loaded) {
        model.predict(*last);  // keeps the sharded embedding exchanges in step; not counted
        continue;
      }
    } else if (!loaded) {
      break;
    }
    const auto& batch = loaded->batch;
    auto predictions = model.predict(batch);
    auto losses = model.loss(predictions, batch);
    model.update_metrics(predictions, batch, losses);
    last = batch;
    ++step;
    if (step % log_every == 0) log::info("Eval step {}", step);
  }
  if (step == 0) {
    throw DataError(fmt::format("eval input '{}' produced no batches; check the path and the files",
                                input_path));
  }
  if (distributed) model.sync_metrics(*pg);
  auto metrics = model.compute_metrics();
  model.train();
  return metrics;
}

void write_result_line(const std::string& path, int64_t step,
                       const std::map<std::string, double>& metrics, WriteMode mode) {
  // nlohmann::ordered_json keeps global_step first; std::map already sorts the metric names.
  nlohmann::ordered_json line;
  line["global_step"] = step;
  for (const auto& [name, value] : metrics) line[name] = value;
  std::ofstream out(path, mode == WriteMode::kAppend ? std::ios::app : std::ios::trunc);
  if (!out) throw IoError("cannot write " + path);
  out << line.dump() << "\n";
  if (!out) throw IoError("write failed: " + path);
}

std::string format_metrics(const std::map<std::string, double>& metrics) {
  std::string out;
  for (const auto& [name, value] : metrics) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}:{:.6f}", name, value);
  }
  return out;
}

}  // namespace tzrec::train
