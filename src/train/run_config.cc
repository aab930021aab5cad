#include "train/run_config.h"

#include <cstdlib>
#include <thread>

#include <torch/torch.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/manual_seed.h"
#include "blas/sgemm_bridge.h"
#include "config/pipeline_config.h"

namespace tzrec::train {

protos::EasyRecConfig load_run_config(const std::string& pipeline_config_path,
                                      const ConfigOverrides& overrides) {
  if (pipeline_config_path.empty()) {
    throw UsageError("--pipeline_config_path is required");
  }
  protos::EasyRecConfig config = config::load_pipeline_config(pipeline_config_path);
  if (!overrides.edit_config_json.empty()) config::edit_config(&config, overrides.edit_config_json);
  if (!overrides.model_dir.empty()) config.set_model_dir(overrides.model_dir);
  if (!overrides.train_input_path.empty()) config.set_train_input_path(overrides.train_input_path);
  if (!overrides.eval_input_path.empty()) config.set_eval_input_path(overrides.eval_input_path);
  if (!overrides.fine_tune_checkpoint.empty()) {
    config.mutable_train_config()->set_fine_tune_checkpoint(overrides.fine_tune_checkpoint);
  }
  config::check_valid(config);
  if (overrides.require_model_dir && config.model_dir().empty()) {
    throw ConfigError("model_dir: is empty; set it in the config or pass --model_dir");
  }
  return config;
}

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long parsed = std::strtol(v, &end, 10);
  if (*end != '\0' || parsed <= 0) {
    throw UsageError(fmt::format("environment variable {}={} is not a positive integer", name, v));
  }
  return static_cast<int>(parsed);
}

}  // namespace

void setup_runtime() {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = env_int("OMP_NUM_THREADS", cores);
  torch::set_num_threads(threads);
  if (const std::optional<uint64_t> seed = manual_seed()) torch::manual_seed(*seed);
  log::debug("intra-op threads: {}", threads);
  log::debug("fp32 matrix products: {}", blas::gemm_route_name(blas::gemm_route()));  // checks TZREC_GEMM
}

}  // namespace tzrec::train
