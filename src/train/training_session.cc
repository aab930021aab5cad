#include "train/training_session.h"

#include <cctype>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>

#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/malloc_tuning.h"
#include "data/input_fields.h"
#include "data/kafka_dataset.h"
#include "embedding/dynamic_checkpoint_layout.h"
#include "embedding/sharded_lookup.h"
#include "feature/features.h"
#include "models/mixed_precision.h"
#include "train/delta_embedding_dump.h"
#include "train/embedding_sharding.h"
#include "checkpoint/local_shard_state.h"
#include "train/lr_scheduler_builder.h"
#include "train/optimizer_builder.h"
#include "train/pooling_factors.h"
#include "train/remapped_shard_checkpoint.h"

namespace tzrec::train {
namespace {

// Set on this thread while check_construction builds a session: its tables are never allocated
// (the model is built as for a distributed job) and no fused sparse optimizer is attached.
thread_local bool tables_deferred_for_check = false;
// The world size check_construction checks for (1: the single-process memory rule applies).
thread_local int check_world_size = 1;

struct CheckConstruction {
  explicit CheckConstruction(int world_size) {
    tables_deferred_for_check = true;
    check_world_size = world_size;
  }
  ~CheckConstruction() {
    tables_deferred_for_check = false;
    check_world_size = 1;
  }
};

// While alive: the random generator's state is kept (restored at the end) and log lines below
// ERROR are held back.
class QuietBuild {
 public:
  QuietBuild() : gen_(at::detail::getDefaultCPUGenerator()), rng_state_(gen_.get_state()), level_(log::current_level()) {
    log::set_level(log::Level::kError);
  }
  ~QuietBuild() {
    log::set_level(level_);
    gen_.set_state(rng_state_);
  }
  QuietBuild(const QuietBuild&) = delete;
  QuietBuild& operator=(const QuietBuild&) = delete;

 private:
  at::Generator gen_;
  torch::Tensor rng_state_;
  log::Level level_;
};

// Applies check_tables_fit_one_process before a single-process session allocates its tables: the
// table shapes come from the model built once more without its tables, quietly (the real build
// logs its warnings, and its initial values do not change: the generator's state is restored).
void check_before_allocating(const protos::EasyRecConfig& config, const std::vector<feature::FeatureInfo>& features,
                             const std::string& model_tower, const embedding::FusedOptimizerOptions& optimizer) {
  std::shared_ptr<models::Model> shapes;
  {
    QuietBuild quiet;
    embedding::DeferTableAllocation defer;
    shapes = models::create_model(config, features, model_tower);  // errors: the same as the real build's
  }
  check_tables_fit_one_process(config, shapes->embeddings(), optimizer);
}

constexpr const char* kSparsePrefix = "sparse.";
constexpr const char* kDensePrefix = "dense.";
// Inside the "dense." namespace: EMA shadows, the FP16 loss scaler and part optimizer i state.
constexpr const char* kEmaPrefix = "ema.";
constexpr const char* kGradScalerPrefix = "grad_scaler.";
std::string part_prefix(int config_index) { return fmt::format("part{}.", config_index); }
// TorchEasyRec's parameter FQN: TrainWrapper holds the model as attribute "model".
constexpr const char* kFqnPrefix = "model.";

std::map<std::string, torch::Tensor> with_prefix(const std::map<std::string, torch::Tensor>& in,
                                                 const std::string& prefix) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : in) out.emplace(prefix + k, v);
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

optim::GradScalerOptions grad_scaler_options(const protos::TrainConfig& train_config) {
  const protos::GradScaler& gs = train_config.grad_scaler();
  optim::GradScalerOptions o;
  o.init_scale = gs.init_scale();
  o.growth_factor = gs.growth_factor();
  o.backoff_factor = gs.backoff_factor();
  o.growth_interval = gs.growth_interval();
  return o;
}

}  // namespace

std::map<std::string, torch::Tensor> strip_prefix(const std::map<std::string, torch::Tensor>& in,
                                                  const std::string& prefix) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : in) {
    if (starts_with(k, prefix)) out.emplace(k.substr(prefix.size()), v);
  }
  return out;
}

std::map<std::string, torch::Tensor> dense_optimizer_state(const std::map<std::string, torch::Tensor>& optimizer_state) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [key, value] : strip_prefix(optimizer_state, kDensePrefix)) {
    const bool part = starts_with(key, "part") && key.size() > 4 && std::isdigit(static_cast<unsigned char>(key[4]));
    if (!part && !starts_with(key, kEmaPrefix) && !starts_with(key, kGradScalerPrefix)) out.emplace(key, value);
  }
  return out;
}

bool use_dense_ema_for_eval(const protos::EasyRecConfig& config) {
  if (config.eval_config().has_use_dense_ema()) return config.eval_config().use_dense_ema();
  return config.train_config().dense_optimizer().has_ema();
}

void TrainingSession::check_construction(const protos::EasyRecConfig& config, int world_size) {
  CheckConstruction scope(world_size);
  data::check_kafka_dataset(config);
  data::input_fields(config.data_config());  // input_fields_str's items, as the loader reads them
  TrainingSession session(config, /*with_optimizers=*/true);
}

TrainingSession::TrainingSession(const protos::EasyRecConfig& config, bool with_optimizers,
                                 std::shared_ptr<dist::ProcessGroup> process_group,
                                 const std::optional<dist::ShardingPlan>& saved_plan,
                                 const std::string& model_tower)
    : config_(config), process_group_(std::move(process_group)) {
  features_ = feature::build_feature_infos(config_);
  const bool distributed = process_group_ != nullptr && process_group_->world_size() > 1;
  const auto sparse_options = (distributed || with_optimizers)
                                  ? sparse_optimizer_options(config_.train_config().sparse_optimizer())
                                  : embedding::FusedOptimizerOptions{};
  if (distributed || tables_deferred_for_check) {
    // No full table is ever allocated: the collection gets this rank's shards below.
    embedding::DeferTableAllocation defer(distributed ? process_group_->world_size() : check_world_size);
    model_ = models::create_model(config_, features_, model_tower);
    // check_config of a single-process job: the memory rule that job applies below.
    if (tables_deferred_for_check && check_world_size == 1) {
      check_tables_fit_one_process(config_, model_->embeddings(), sparse_options);
    }
  } else {
    // A caller's DeferTableAllocation (an export's tower package) allocates nothing either.
    if (!embedding::DeferTableAllocation::active()) {
      check_before_allocating(config_, features_, model_tower, sparse_options);
    }
    model_ = models::create_model(config_, features_, model_tower);
  }
  model_->set_process_group(process_group_.get());
  if (with_optimizers) check_delta_embedding_dump_tables(config_, model_->embeddings());
  if (with_optimizers && models::mixed_precision_dtype(config_) == c10::ScalarType::BFloat16) {
    tune_malloc_for_bf16_autocast();  // base/malloc_tuning.h
  }
  if (distributed) {
    const embedding::EmbeddingGroupSet& group = model_->embeddings();
    // Training jobs that plan (no saved plan for this world size) measure the pooling factors on
    // the first batches of every rank's data.
    const bool plans = !saved_plan || saved_plan->world_size != process_group_->world_size();
    const auto pooling_factors = with_optimizers && plans
                                     ? measure_pooling_factors(config_, planner_bags(group), process_group_.get())
                                     : std::map<std::string, double>{};
    const dist::ShardingPlan plan =
        plan_embedding_sharding(config_, group, sparse_options, *process_group_, saved_plan, pooling_factors);
    sharded_ = attach_sharded_tables(group, sparse_options, plan, process_group_, with_optimizers);
    std::vector<torch::Tensor> dense;
    for (auto& [name, tensor] : model_->dense_parameters()) dense.push_back(tensor);
    gradient_sync_ = std::make_unique<DenseGradientSync>(process_group_, std::move(dense));
    gradient_sync_->broadcast_parameters();
  }
  if (with_optimizers) {
    const auto& train_config = config_.train_config();
    // TorchRec's fused tables: the sparse optimizer (and its gradient clipping of the pooled
    // output gradient) runs inside the embedding backward.
    if (!distributed && !tables_deferred_for_check) {
      sparse_optimizer_ = &model_->embeddings().enable_fused_optimizer(sparse_options);
    }
    const auto& dense_config = train_config.dense_optimizer();
    const auto dense_named = model_->dense_parameters();
    // Group the dense parameters by part_optimizers[i].regex_pattern (first full match wins).
    const int num_patterns = dense_config.part_optimizers_size();
    std::vector<std::regex> patterns;
    for (int i = 0; i < num_patterns; ++i) {
      const std::string& pattern = dense_config.part_optimizers(i).regex_pattern();
      if (!dense_config.part_optimizers(i).has_regex_pattern()) {
        throw ConfigError(fmt::format(
            "train_config.dense_optimizer.part_optimizers[{}].regex_pattern: required (a full-match regex on "
            "parameter names such as model.deep_mlp.mlp.0.perceptron.0.weight)",
            i));
      }
      try {
        patterns.emplace_back(pattern, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw ConfigError(fmt::format(
            "train_config.dense_optimizer.part_optimizers[{}].regex_pattern: '{}' is not a valid "
            "regular expression ({}); parameter names look like model.<module>.<param>, e.g. "
            "'model\\.deep_mlp\\..*'",
            i, pattern, e.what()));
      }
    }
    std::vector<std::pair<std::string, torch::Tensor>> remaining;
    std::vector<std::vector<std::pair<std::string, torch::Tensor>>> grouped(num_patterns);
    for (const auto& named : dense_named) {
      const std::string fqn = kFqnPrefix + named.first;
      int matched = -1;
      for (int i = 0; i < num_patterns && matched < 0; ++i) {
        if (std::regex_match(fqn, patterns[i])) matched = i;
      }
      (matched < 0 ? remaining : grouped[matched]).push_back(named);
    }
    dense_optimizer_ = std::make_unique<optim::DenseOptimizer>(dense_optimizer_options(dense_config),
                                                               remaining);
    sparse_lr_ = std::make_unique<optim::LrScheduler>(build_lr_scheduler(train_config.sparse_optimizer()));
    dense_lr_ = std::make_unique<optim::LrScheduler>(build_lr_scheduler(dense_config));
    for (int i = 0; i < num_patterns; ++i) {
      const std::string path = fmt::format("train_config.dense_optimizer.part_optimizers[{}]", i);
      if (grouped[i].empty()) {
        log::warning("{}: regex_pattern '{}' matches no dense parameter; this part optimizer is "
                     "not used", path, dense_config.part_optimizers(i).regex_pattern());
        continue;
      }
      std::vector<std::string> names;
      for (const auto& [name, t] : grouped[i]) names.push_back(kFqnPrefix + name);
      log::info("{} ({}) optimizes: {}", path, dense_config.part_optimizers(i).regex_pattern(),
                fmt::join(names, ", "));
      Part part;
      part.config_index = i;
      part.optimizer = std::make_unique<optim::DenseOptimizer>(
          dense_optimizer_options(dense_config.part_optimizers(i), path), grouped[i]);
      part.lr = std::make_unique<optim::LrScheduler>(build_part_lr_scheduler(dense_config, i));
      part.optimizer->set_lr(part.lr->lr());
      parts_.push_back(std::move(part));
    }
    if (dense_config.has_ema()) {
      ema_ = std::make_unique<optim::DenseEma>(dense_named, dense_config.ema().decay());
    }
    set_sparse_lr(sparse_lr_->lr());
    dense_optimizer_->set_lr(dense_lr_->lr());
    if (train_config.mixed_precision() == "FP16") {
      scaler_ = std::make_unique<optim::GradScaler>(grad_scaler_options(train_config));
    }
    clipping_ = grad_clipping_options(train_config);
    accumulation_ = gradient_accumulation(train_config);
    for (auto& [name, tensor] : model_->dense_parameters()) dense_params_.push_back(tensor);
  }
}

embedding::FusedOptimizerGroup& TrainingSession::sparse_optimizer() {
  TORCH_CHECK(sparse_optimizer_ != nullptr, "sparse_optimizer(): the session is distributed or has no optimizers");
  return *sparse_optimizer_;
}

embedding::FusedEmbeddingBags::Timing TrainingSession::embedding_timing() const {
  if (sparse_optimizer_ != nullptr) return sparse_optimizer_->timing();
  if (sharded_ != nullptr) return sharded_->timing();
  return {};
}

void TrainingSession::set_sparse_lr(double lr) {
  if (sparse_optimizer_ != nullptr) sparse_optimizer_->set_lr(lr);
  if (sharded_ != nullptr) sharded_->set_lr(lr);
}

std::vector<std::pair<std::string, torch::Tensor>> TrainingSession::model_tensors() {
  model_->embeddings().sync_embedding_state();  // dynamic tables' index into their buffers
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& item : model_->named_parameters(/*recurse=*/true)) {
    out.emplace_back(item.key(), item.value());
  }
  // Distributed: the remapping tables' per-row state buffers are row blocks of the shards
  // (checkpoint_blocks).
  const std::set<std::string> sharded_buffers =
      sharded_ != nullptr ? remapped_state_buffer_names(*model_, model_->embeddings()) : std::set<std::string>{};
  for (const auto& item : model_->named_buffers(/*recurse=*/true)) {
    if (!sharded_buffers.count(item.key())) out.emplace_back(item.key(), item.value());
  }
  return out;
}

std::map<std::string, torch::Tensor> TrainingSession::optimizer_state() const {
  TORCH_CHECK(has_optimizers(), "optimizer_state() on a session built without optimizers");
  std::map<std::string, torch::Tensor> out;
  if (sparse_optimizer_ != nullptr) out = with_prefix(sparse_optimizer_->state_dict(), kSparsePrefix);
  auto dense = with_prefix(dense_optimizer_->state_dict(), kDensePrefix);
  out.insert(dense.begin(), dense.end());
  for (const Part& part : parts_) {
    auto state = with_prefix(part.optimizer->state_dict(),
                             kDensePrefix + part_prefix(part.config_index));
    out.insert(state.begin(), state.end());
  }
  if (ema_) {
    auto state = with_prefix(ema_->state_dict(), std::string(kDensePrefix) + kEmaPrefix);
    out.insert(state.begin(), state.end());
  }
  if (scaler_) {
    auto state = with_prefix(scaler_->state_dict(), std::string(kDensePrefix) + kGradScalerPrefix);
    out.insert(state.begin(), state.end());
  }
  return out;
}

std::vector<double> TrainingSession::dense_group_lrs() const {
  TORCH_CHECK(has_optimizers(), "dense_group_lrs() on a session built without optimizers");
  std::vector<double> out = {dense_lr_->lr()};
  for (const Part& part : parts_) out.push_back(part.lr->lr());
  return out;
}

std::map<std::string, torch::Tensor> TrainingSession::ema_tensors() const {
  std::map<std::string, torch::Tensor> out;
  if (!ema_) return out;
  out = ema_->state_dict();
  out.erase(optim::DenseEma::kNAveragedKey);
  return out;
}

std::unique_ptr<optim::EmaSwapGuard> TrainingSession::swap_in_ema(bool enabled) {
  return std::make_unique<optim::EmaSwapGuard>(enabled ? ema_.get() : nullptr);
}

void TrainingSession::load_ema_weights(const checkpointing::CheckpointData& checkpoint, const std::string& setting) {
  const std::string prefix = std::string(kDensePrefix) + kEmaPrefix;
  std::vector<std::pair<std::string, torch::Tensor>> targets;
  for (const auto& [name, tensor] : model_->dense_parameters()) {
    targets.emplace_back(prefix + name, tensor);
  }
  for (const auto& [key, tensor] : targets) {
    if (checkpoint.optimizer.count(key) == 0) {
      throw CheckpointError(fmt::format(
          "checkpoint step {} has no dense EMA weight '{}' (it was trained without "
          "train_config.dense_optimizer.ema); set {}: false",
          checkpoint.step, key, setting));
    }
  }
  std::map<std::string, torch::Tensor> values;
  for (const auto& [key, tensor] : targets) values.emplace(key, checkpoint.optimizer.at(key));
  checkpointing::restore_tensors(values, targets, "dense EMA");
}

// Table and optimizer-state names of shards: train/sharded_checkpoint.h.

checkpointing::ShardBlocks TrainingSession::checkpoint_blocks(const DynamicRowsInUse* rows) const {
  TORCH_CHECK(sharded_ != nullptr, "checkpoint_blocks() on a single-process session");
  checkpointing::ShardBlocks out;
  // A dynamic table's block (weight or optimizer state rows) cut to its rows in use.
  auto cut = [&](const std::string& table) -> const DynamicRowsInUse::Table* {
    if (rows == nullptr) return nullptr;
    auto it = rows->tables.find(table);
    return it == rows->tables.end() ? nullptr : &it->second;
  };
  auto cut_block = [&](const DynamicRowsInUse::Table& t, const std::string& name, const torch::Tensor& value) {
    const embedding::DynamicSavedLayout& layout = t.layout;
    const auto r = static_cast<size_t>(rows->rank);
    std::vector<int64_t> shape = value.sizes().vec();
    shape[0] = layout.weight_rows;
    return checkpointing::TensorBlock{name, shape, layout.weight_offsets.at(r), 0,
                                      embedding::rows_in_use_block(value, layout.rows_in_use.at(r), layout.capacity)};
  };
  for (const auto& ls : sharded_->local_shards()) {
    const dist::TableSharding& ts = sharded_->plan().table(ls.table);
    const std::string name = checkpointing::table_weight_name(model_->embeddings(), ls.table);
    if (const DynamicRowsInUse::Table* t = cut(ls.table)) {
      out.model.push_back(cut_block(*t, name, ls.weight));
      continue;
    }
    out.model.push_back({name, {ts.num_embeddings, ts.embedding_dim}, ls.shard.row_offset, ls.shard.col_offset, ls.weight});
  }
  for (auto& block : remapped_state_blocks(*model_, model_->embeddings(), rows)) out.model.push_back(std::move(block));
  if (!has_optimizers()) return out;
  for (const checkpointing::LocalShardState& s : sharded_->shard_states()) {
    const dist::TableSharding& ts = sharded_->plan().table(s.shard->table);
    const dist::Shard& shard = s.shard->shard;
    const DynamicRowsInUse::Table* t = cut(s.shard->table);
    if (t != nullptr && s.value.dim() > 0) {
      out.optimizer.push_back(cut_block(*t, s.stored_name, s.value));
    } else if (s.value.dim() == 0) {
      out.optimizer.push_back({s.stored_name, {}, 0, 0, s.value});
    } else if (s.value.dim() == 1) {
      out.optimizer.push_back({s.stored_name, {ts.num_embeddings}, shard.row_offset, 0, s.value});
    } else {
      out.optimizer.push_back(
          {s.stored_name, {ts.num_embeddings, ts.embedding_dim}, shard.row_offset, shard.col_offset, s.value});
    }
  }
  return out;
}

void TrainingSession::restore_shards(const std::string& ckpt_dir, bool restore_optimizer) {
  const checkpointing::CheckpointTensorIndex index(ckpt_dir);
  torch::NoGradGuard no_grad;
  // Dynamic tables' rows depend on the world size: restore_remapped_shards moves their live rows.
  const std::set<std::string> dynamic = dynamic_table_names(model_->embeddings());
  for (const auto& ls : sharded_->local_shards()) {
    if (dynamic.count(ls.table)) continue;
    const std::string name = checkpointing::table_weight_name(model_->embeddings(), ls.table);
    if (!index.contains(name)) {
      throw CheckpointError(fmt::format("checkpoint {} has no embedding table weight '{}'", ckpt_dir, name));
    }
    const auto shape = index.shape(name);
    const dist::TableSharding& ts = sharded_->plan().table(ls.table);
    if (shape != std::vector<int64_t>{ts.num_embeddings, ts.embedding_dim}) {
      throw CheckpointError(fmt::format("checkpoint {}: '{}' is [{}] but the model's table is [{}, {}]", ckpt_dir,
                                        name, fmt::join(shape, ", "), ts.num_embeddings, ts.embedding_dim));
    }
    ls.weight.copy_(index.read_block(name, ls.shard.row_offset, ls.shard.rows, ls.shard.col_offset, ls.shard.cols));
  }
  const bool with_optimizer_state = restore_optimizer && has_optimizers();
  if (with_optimizer_state) restore_shard_optimizer_state(ckpt_dir, index);
  // Zero-collision hashed and dynamic tables: this rank's state, and the rows of ids that moved.
  restore_remapped_shards(*model_, model_->embeddings(), *sharded_, ckpt_dir, index, with_optimizer_state,
                          /*required=*/true);
}

void TrainingSession::restore_shard_optimizer_state(const std::string& ckpt_dir,
                                                    const checkpointing::CheckpointTensorIndex& index) {
  torch::NoGradGuard no_grad;
  const std::set<std::string> dynamic = dynamic_table_names(model_->embeddings());
  for (const checkpointing::LocalShardState& s : sharded_->shard_states()) {
    if (dynamic.count(s.shard->table)) continue;  // moved with their rows
    if (!index.contains(s.stored_name)) {
      throw CheckpointError(fmt::format("checkpoint {} has no sparse optimizer state '{}' (trained with another "
                                        "sparse optimizer?); pass --ignore_restore_optimizer to start it afresh",
                                        ckpt_dir, s.stored_name));
    }
    torch::Tensor block = checkpointing::read_shard_block(index, s.stored_name, s.shard->shard);
    if (block.sizes() != s.value.sizes()) {
      throw CheckpointError(fmt::format("checkpoint {}: sparse optimizer state '{}' has shape [{}] for this shard, "
                                        "expected [{}]",
                                        ckpt_dir, s.stored_name, fmt::join(block.sizes(), ", "),
                                        fmt::join(s.value.sizes(), ", ")));
    }
    torch::Tensor value = s.value;
    value.copy_(block);
  }
}

void TrainingSession::restore(const checkpointing::CheckpointData& checkpoint, bool restore_optimizer) {
  if (sharded_ != nullptr) {
    // Dense tensors from the whole-tensor files; tables from the blocks (a single-process
    // checkpoint's whole tables are blocks too).
    auto dense = model_tensors();
    std::map<std::string, torch::Tensor> stored;
    for (const auto& [name, tensor] : dense) {
      auto it = checkpoint.model.find(name);
      if (it != checkpoint.model.end()) stored.emplace(name, it->second);
    }
    checkpointing::restore_tensors(stored, dense, "model");
    restore_shards(checkpoint.dir, restore_optimizer);
  } else {
    // Dynamic tables: their saved rows moved into this model's tables first (any saved layout).
    checkpointing::CheckpointData relaid = checkpoint;
    relayout_dynamic_checkpoint(*model_, model_->embeddings(), relaid,
                                restore_optimizer && sparse_optimizer_ != nullptr
                                    ? sparse_optimizer_->state_dict()
                                    : std::map<std::string, torch::Tensor>{});
    checkpointing::restore_tensors(relaid.model, model_tensors(), "model");
    // Zero-collision hashing: step count from the restored buffers; dynamic tables: their index.
    model_->embeddings().reload_embedding_state();
    if (restore_optimizer && sparse_optimizer_ != nullptr) {
      sparse_optimizer_->load_state_dict(strip_prefix(relaid.optimizer, kSparsePrefix));
    }
  }
  if (restore_optimizer && has_optimizers()) {
    dense_optimizer_->load_state_dict(dense_optimizer_state(checkpoint.optimizer));
    for (Part& part : parts_) {
      part.optimizer->load_state_dict(strip_prefix(
          checkpoint.optimizer, kDensePrefix + part_prefix(part.config_index)));
    }
    if (scaler_) {
      auto state = strip_prefix(checkpoint.optimizer, std::string(kDensePrefix) + kGradScalerPrefix);
      if (state.empty()) {
        log::warning("checkpoint step {} has no FP16 loss scaler state (trained without mixed_precision "
                     "FP16?); the loss scale starts at train_config.grad_scaler.init_scale ({})",
                     checkpoint.step, scaler_->scale_value());
      } else {
        scaler_->load_state_dict(state);
      }
    }
  }
  // The EMA is training state of its own (TorchEasyRec's dense_ema/ directory), restored even
  // with --ignore_restore_optimizer when the checkpoint has it.
  if (ema_) {
    auto state = strip_prefix(checkpoint.optimizer, std::string(kDensePrefix) + kEmaPrefix);
    if (state.empty()) {
      log::warning("checkpoint step {} has no dense EMA state; the EMA restarts from the restored "
                   "parameters", checkpoint.step);
    } else {
      ema_->load_state_dict(state);
    }
  }
}

void TrainingSession::set_gradient_observer(std::function<void(int64_t step)> observer) {
  gradient_observer_ = std::move(observer);
}

void TrainingSession::set_sparse_gradient_scale(std::optional<double> scale) {
  if (sparse_optimizer_ != nullptr) sparse_optimizer_->set_gradient_scale(scale);
  if (sharded_ != nullptr) sharded_->set_gradient_scale(scale);
}

bool TrainingSession::sparse_found_inf() const {
  if (sparse_optimizer_ != nullptr) return sparse_optimizer_->last_backward_found_inf();
  if (sharded_ != nullptr) return sharded_->last_backward_found_inf();
  return false;
}

bool TrainingSession::unscale_and_check() {
  bool found_inf = scaler_->unscale(dense_params_);
  found_inf = found_inf || window_found_inf_;
  if (gradient_sync_) {
    // Synced gradients are equal on every rank, but the sparse flags of local shards need not be:
    // all ranks skip, or none.
    torch::Tensor flag = torch::full({1}, found_inf ? 1 : 0, torch::kInt32);
    process_group_->all_reduce(flag, dist::ReduceOp::kMax, "FP16 gradient found_inf");
    found_inf = flag.item<int32_t>() != 0;
  }
  return found_inf;
}

void TrainingSession::backward_and_step(const torch::Tensor& total_loss, int64_t step) {
  TORCH_CHECK(has_optimizers(), "backward_and_step() on a session built without optimizers");
  if (accumulation_.zero_grad_before(step)) {
    dense_optimizer_->zero_grad();
    for (Part& part : parts_) part.optimizer->zero_grad();
    // The fused sparse optimizer updates rows in every backward (also inside an accumulation
    // window, as FBGEMM does); its learning rate changes only at the start of a window.
    set_sparse_lr(sparse_lr_->lr());
    window_found_inf_ = false;
  }
  dense_optimizer_->set_lr(dense_lr_->lr());
  for (Part& part : parts_) part.optimizer->set_lr(part.lr->lr());
  torch::Tensor loss = total_loss;
  if (accumulation_.enabled()) loss = loss / static_cast<double>(accumulation_.loss_divisor());
  if (scaler_) {
    // The sparse side unscales inside backward with the same scale.
    set_sparse_gradient_scale(scaler_->scale_value());
    loss = scaler_->scale(loss);
  }
  const bool steps = accumulation_.step_after(step);
  // The step's backward all-reduces the dense gradients bucket by bucket as they are computed.
  if (gradient_sync_ && steps) gradient_sync_->prepare_for_backward();
  loss.backward();
  last_step_skipped_ = false;
  if (scaler_ && sparse_found_inf()) {
    window_found_inf_ = true;
    last_step_skipped_ = true;
  }
  if (steps) {
    if (gradient_sync_) gradient_sync_->finish();  // the mean over the ranks, like DDP
    const bool found_inf = scaler_ && unscale_and_check();
    if (found_inf) {
      last_step_skipped_ = true;
      log::debug("step {}: inf/nan gradients at loss scale {}; the dense step is skipped", step,
                 scaler_->scale_value());
    } else {
      if (gradient_observer_) gradient_observer_(step);
      optim::clip_gradients(clipping_, dense_params_);
      dense_optimizer_->step();
      for (Part& part : parts_) part.optimizer->step();
      if (ema_) ema_->update();  // TorchEasyRec's EMAOptimizer: after each dense step
    }
    if (scaler_) scaler_->update(found_inf);
  }
}

std::vector<optim::LrScheduler*> TrainingSession::schedulers() {
  std::vector<optim::LrScheduler*> out = {sparse_lr_.get(), dense_lr_.get()};
  for (Part& part : parts_) out.push_back(part.lr.get());
  return out;
}

void TrainingSession::advance_step_schedules() {
  for (auto* scheduler : schedulers()) {
    if (!scheduler->by_epoch()) scheduler->step();
  }
}

void TrainingSession::advance_epoch_schedules() {
  for (auto* scheduler : schedulers()) {
    if (scheduler->by_epoch()) scheduler->step();
  }
}

void TrainingSession::set_schedule_position(int64_t trained_steps, int64_t epochs_completed) {
  // The scheduler's count starts at 1 (torch's initial step) and grows by one per step / epoch.
  for (auto* scheduler : schedulers()) {
    scheduler->set_step_count(1 + (scheduler->by_epoch() ? epochs_completed : trained_steps));
  }
}

}  // namespace tzrec::train
