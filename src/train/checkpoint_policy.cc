#include "train/checkpoint_policy.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/logging.h"
#include "checkpoint/checkpoint.h"

namespace fs = std::filesystem;

namespace tzrec::train {

CheckpointRetention checkpoint_retention(const protos::EasyRecConfig& config) {
  CheckpointRetention out;
  out.keep_max = config.train_config().keep_checkpoint_max();
  const auto& export_config = config.export_config();
  out.keep_best = export_config.exporter_type() == "best";
  out.best_metric = export_config.best_exporter_metric();
  out.larger_is_better = export_config.metric_larger_is_better();
  return out;
}

std::optional<int64_t> best_checkpoint_step(const std::string& result_path, const std::string& metric,
                                            bool larger_is_better,
                                            const std::vector<int64_t>& candidates) {
  std::ifstream in(result_path);
  if (!in) return std::nullopt;
  const std::set<int64_t> wanted(candidates.begin(), candidates.end());
  std::optional<int64_t> best_step;
  double best_value = 0.0;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!row.is_object() || !row.contains("global_step") || !row["global_step"].is_number_integer()) {
      throw CheckpointError(fmt::format(
          "{}:{}: expected a JSON object with an integer \"global_step\"; fix or remove the line",
          result_path, line_no));
    }
    const int64_t step = row["global_step"].get<int64_t>();
    if (wanted.count(step) == 0 || !row.contains(metric) || !row[metric].is_number()) continue;
    const double value = row[metric].get<double>();
    const bool better = !best_step || (larger_is_better ? value > best_value : value < best_value);
    if (better) {
      best_step = step;
      best_value = value;
    }
  }
  return best_step;
}

std::vector<std::string> prune_checkpoints(const std::string& model_dir,
                                           const CheckpointRetention& retention,
                                           int64_t just_saved_step) {
  std::vector<std::string> deleted;
  if (retention.keep_max <= 0) return deleted;
  const auto checkpoints = checkpointing::list_checkpoints(model_dir);  // sorted by step, oldest first
  const int64_t count = static_cast<int64_t>(checkpoints.size());
  if (count <= retention.keep_max) return deleted;

  std::set<int64_t> keep;
  for (int64_t i = count - retention.keep_max; i < count; ++i) keep.insert(checkpoints[i].second);
  keep.insert(just_saved_step);
  if (retention.keep_best) {
    std::vector<int64_t> steps;
    for (const auto& [path, step] : checkpoints) steps.push_back(step);
    const auto best = best_checkpoint_step((fs::path(model_dir) / "train_eval_result_v2.txt").string(),
                                           retention.best_metric, retention.larger_is_better, steps);
    if (best) keep.insert(*best);
  }
  for (const auto& [path, step] : checkpoints) {
    if (keep.count(step) != 0) continue;
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) {
      // A checkpoint that cannot be removed costs disk space, not correctness.
      log::warning("keep_checkpoint_max: cannot delete {}: {}", path, ec.message());
      continue;
    }
    log::info("keep_checkpoint_max={}: deleted {}", retention.keep_max, path);
    deleted.push_back(path);
  }
  return deleted;
}

}  // namespace tzrec::train
