#include "train/fine_tune.h"

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "checkpoint/local_shard_state.h"
#include "checkpoint/sharded_checkpoint.h"
#include "train/remapped_shard_checkpoint.h"

namespace tzrec::train {
namespace {

std::string shape_text(const torch::Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// Why the sparse state of the checkpoint cannot be loaded into `current`, or "" when it fits
// exactly (same keys, same shapes). The sparse state exists from construction, so this is a
// complete check; the dense side is checked by DenseOptimizer::load_state_dict itself.
std::string sparse_state_mismatch(const std::map<std::string, torch::Tensor>& stored,
                                  const std::map<std::string, torch::Tensor>& current) {
  for (const auto& [key, value] : current) {
    auto it = stored.find(key);
    if (it == stored.end()) return fmt::format("sparse optimizer state '{}' is not in the checkpoint", key);
    if (!it->second.sizes().equals(value.sizes())) {
      return fmt::format("sparse optimizer state '{}' has shape {} in the checkpoint, {} here", key,
                         shape_text(it->second), shape_text(value));
    }
  }
  for (const auto& [key, value] : stored) {
    if (current.count(key) == 0) return fmt::format("sparse optimizer state '{}' has no table here", key);
  }
  return "";
}

}  // namespace

std::map<std::string, std::string> read_param_map(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw ConfigError(fmt::format("train_config.fine_tune_ckpt_param_map: cannot open '{}'", path));
  }
  std::map<std::string, std::string> out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream fields(line);
    std::vector<std::string> parts;
    for (std::string f; fields >> f;) parts.push_back(f);
    if (parts.empty() || parts[0][0] == '#') continue;
    if (parts.size() != 2) {
      throw ConfigError(fmt::format(
          "{}:{}: expected '<name in current model> <name in checkpoint>', got {} field(s): '{}'", path,
          line_no, parts.size(), line));
    }
    if (!out.emplace(parts[0], parts[1]).second) {
      throw ConfigError(fmt::format("{}:{}: parameter '{}' is mapped twice", path, line_no, parts[0]));
    }
  }
  return out;
}

PartialLoadResult load_partial(const std::map<std::string, torch::Tensor>& stored,
                               const std::vector<std::pair<std::string, torch::Tensor>>& params,
                               const std::map<std::string, std::string>& param_map) {
  std::set<std::string> param_names;
  for (const auto& [name, tensor] : params) param_names.insert(name);
  for (const auto& [name, source] : param_map) {
    if (param_names.count(name) == 0) {
      throw ConfigError(fmt::format(
          "fine_tune_ckpt_param_map maps '{}' (to '{}'), which is not a parameter of this model; "
          "list the model's names with `tzrec list_checkpoint_params` on one of its checkpoints",
          name, source));
    }
  }
  PartialLoadResult result;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (target, source)
  for (const auto& [name, target] : params) {
    auto mapped = param_map.find(name);
    const std::string& source_name = mapped != param_map.end() ? mapped->second : name;
    auto it = stored.find(source_name);
    if (it == stored.end()) {
      result.missing.push_back(name);
      continue;
    }
    const torch::Tensor& source = it->second;
    const std::string label =
        source_name == name ? fmt::format("'{}'", name) : fmt::format("'{}' (checkpoint '{}')", name, source_name);
    if (!source.sizes().equals(target.sizes())) {
      throw CheckpointError(fmt::format(
          "fine_tune_checkpoint: parameter {} has shape {} in the model but {} in the checkpoint; "
          "map it to a compatible tensor with fine_tune_ckpt_param_map or rename it",
          label, shape_text(target), shape_text(source)));
    }
    if (source.scalar_type() != target.scalar_type()) {
      throw CheckpointError(fmt::format(
          "fine_tune_checkpoint: parameter {} has dtype {} in the model but {} in the checkpoint", label,
          c10::toString(target.scalar_type()), c10::toString(source.scalar_type())));
    }
    copies.emplace_back(target, source);
    result.loaded.push_back(name);
  }
  torch::NoGradGuard no_grad;
  for (auto& [target, source] : copies) target.copy_(source);
  return result;
}

namespace {

// A multi-rank session: dense tensors from the checkpoint's whole-tensor files, each local table
// shard read block by block (train/sharded_checkpoint.h), whatever world size wrote the checkpoint.
PartialLoadResult load_partial_sharded(TrainingSession& session, const checkpointing::CheckpointData& checkpoint,
                                       const checkpointing::CheckpointTensorIndex& index,
                                       const std::map<std::string, std::string>& param_map) {
  ShardedTables& sharded = *session.sharded_embeddings();
  const embedding::EmbeddingGroupSet& group = session.model().embeddings();
  std::set<std::string> table_names;
  for (const auto& ts : sharded.plan().tables) table_names.insert(checkpointing::table_weight_name(group, ts.table));
  std::map<std::string, std::string> dense_map, table_map;
  for (const auto& [name, source] : param_map) (table_names.count(name) ? table_map : dense_map).emplace(name, source);
  PartialLoadResult result = load_partial(checkpoint.model, session.model_tensors(), dense_map);

  auto source_of = [&](const std::string& name) {
    auto it = table_map.find(name);
    return it != table_map.end() ? it->second : name;
  };
  // Dynamic tables' rows depend on the world size: restore_remapped_shards moves their live rows.
  const std::set<std::string> dynamic = dynamic_table_names(group);
  for (const auto& ts : sharded.plan().tables) {
    const std::string name = checkpointing::table_weight_name(group, ts.table);
    const std::string source = source_of(name);
    if (!index.contains(source)) {
      result.missing.push_back(name);
      continue;
    }
    if (dynamic.count(ts.table)) {
      result.loaded.push_back(name);
      continue;
    }
    const std::vector<int64_t> expected = {ts.num_embeddings, ts.embedding_dim};
    if (index.shape(source) != expected) {
      throw CheckpointError(fmt::format(
          "fine_tune_checkpoint: parameter '{}'{} has shape [{}] in the model but [{}] in the checkpoint; "
          "map it to a compatible tensor with fine_tune_ckpt_param_map or rename it",
          name, source == name ? "" : fmt::format(" (checkpoint '{}')", source), fmt::join(expected, ", "),
          fmt::join(index.shape(source), ", ")));
    }
    result.loaded.push_back(name);
  }
  torch::NoGradGuard no_grad;
  for (const auto& ls : sharded.local_shards()) {
    if (dynamic.count(ls.table)) continue;
    const std::string name = checkpointing::table_weight_name(group, ls.table);
    const std::string source = source_of(name);
    if (index.contains(source)) ls.weight.copy_(checkpointing::read_shard_block(index, source, ls.shard));
  }
  return result;
}

// Why this rank's sparse optimizer state cannot come from the checkpoint, or "" when every slot
// of every local shard is stored with this shard's shape.
std::string sharded_state_mismatch(TrainingSession& session, const checkpointing::CheckpointTensorIndex& index) {
  const std::set<std::string> dynamic = dynamic_table_names(session.model().embeddings());
  for (const checkpointing::LocalShardState& s : session.sharded_embeddings()->shard_states()) {
    if (!index.contains(s.stored_name)) {
      return fmt::format("sparse optimizer state '{}' is not in the checkpoint", s.stored_name);
    }
    if (dynamic.count(s.shard->table)) continue;  // moved with their rows
    std::vector<int64_t> shape = index.shape(s.stored_name);
    if (shape.size() >= 1) shape[0] = s.shard->shard.rows;
    if (shape.size() == 2) shape[1] = s.shard->shard.cols;
    if (!s.value.sizes().equals(shape)) {
      return fmt::format("sparse optimizer state '{}' does not fit shard {} of table {}", s.stored_name,
                         s.shard->shard_index, s.shard->table);
    }
  }
  return "";
}

void restore_sharded_state(TrainingSession& session, const checkpointing::CheckpointTensorIndex& index) {
  torch::NoGradGuard no_grad;
  const std::set<std::string> dynamic = dynamic_table_names(session.model().embeddings());
  for (const checkpointing::LocalShardState& s : session.sharded_embeddings()->shard_states()) {
    if (dynamic.count(s.shard->table)) continue;  // moved with their rows
    torch::Tensor value = s.value;
    value.copy_(checkpointing::read_shard_block(index, s.stored_name, s.shard->shard));
  }
}

// Whether every rank says yes (a collective; single process: `ok`).
bool all_ranks_agree(TrainingSession& session, bool ok) {
  dist::ProcessGroup* pg = session.process_group();
  if (pg == nullptr || pg->world_size() == 1) return ok;
  torch::Tensor flag = torch::tensor({ok ? 1 : 0}, torch::kInt32);
  pg->all_reduce(flag, dist::ReduceOp::kMin, "fine_tune_checkpoint optimizer state check");
  return flag.item<int>() == 1;
}

}  // namespace

FineTuneResult fine_tune_restore(TrainingSession& session, const FineTuneOptions& options) {
  auto latest = checkpointing::latest_checkpoint(options.checkpoint_path);
  if (!latest) {
    throw CheckpointError(fmt::format(
        "fine_tune_checkpoint '{}' holds no checkpoint; give a model_dir with model.ckpt-* inside or a "
        "model.ckpt-N directory",
        options.checkpoint_path));
  }
  FineTuneResult result;
  result.checkpoint_dir = latest->first;
  const bool sharded = session.distributed();
  checkpointing::CheckpointData checkpoint = checkpointing::load_checkpoint(latest->first, /*assemble_shards=*/!sharded);
  if (!sharded) {  // dynamic tables saved with another layout (another world size): into this one first
    relayout_dynamic_checkpoint(session.model(), session.model().embeddings(), checkpoint,
                                /*sparse_state=*/{});  // fine-tuning starts the optimizers afresh
  }
  std::optional<checkpointing::CheckpointTensorIndex> index;
  if (sharded) index.emplace(latest->first);
  std::map<std::string, std::string> param_map;
  if (!options.param_map_path.empty()) param_map = read_param_map(options.param_map_path);

  result.model = sharded ? load_partial_sharded(session, checkpoint, *index, param_map)
                         : load_partial(checkpoint.model, session.model_tensors(), param_map);
  // Zero-collision hashing and dynamic tables: their state from the loaded buffers (sharded: from
  // the checkpoint's state, rows of moved ids moved).
  if (!sharded) session.model().embeddings().reload_embedding_state();
  if (sharded) {
    restore_remapped_shards(session.model(), session.model().embeddings(), *session.sharded_embeddings(), latest->first,
                       *index, /*move_optimizer_state=*/false, /*required=*/false);
  }
  // Every rank loads the same tensors: one report, from rank 0.
  const bool chief = session.process_group() == nullptr || session.process_group()->rank() == 0;
  if (chief) {
    log::info("fine_tune_checkpoint: loaded {} of {} model tensors from {}", result.model.loaded.size(),
              result.model.loaded.size() + result.model.missing.size(), latest->first);
  }
  if (chief && !result.model.missing.empty()) {
    log::warning("fine_tune_checkpoint: {} model tensor(s) not in {}, kept as initialised: {}",
                 result.model.missing.size(), latest->first, fmt::join(result.model.missing, ", "));
  }

  if (!options.restore_optimizer || !session.has_optimizers()) return result;
  if (checkpoint.optimizer.empty() && !(sharded && index->stored_world_size() > 1)) {
    if (chief) log::info("fine_tune_checkpoint: {} holds no optimizer state; optimizers start fresh", latest->first);
    return result;
  }
  bool remapped = false;
  for (const auto& [name, source] : param_map) remapped = remapped || name != source;
  if (remapped) {
    // Optimizer state is keyed by parameter/table name; remapped names would pair state with the
    // wrong parameters.
    if (chief) {
      log::warning("fine_tune_checkpoint: parameter names were remapped by fine_tune_ckpt_param_map, "
                   "so the optimizer state of {} is not restored; optimizers start fresh", latest->first);
    }
    return result;
  }
  const auto sparse_stored = strip_prefix(checkpoint.optimizer, "sparse.");
  const std::string sparse_problem =
      sharded ? sharded_state_mismatch(session, *index)
              : sparse_state_mismatch(sparse_stored, session.sparse_optimizer().state_dict());
  // Ranks decide together: the dense optimizer state is replicated and must stay identical.
  if (!all_ranks_agree(session, sparse_problem.empty())) {
    log::warning("fine_tune_checkpoint: optimizer state not restored ({}); optimizers start fresh",
                 sparse_problem.empty() ? "it does not fit another rank's shards" : sparse_problem);
    return result;
  }
  try {
    // Validates everything before changing anything, so a failure leaves the state fresh (the
    // same outcome on every rank: they read the same dense state).
    session.dense_optimizer().load_state_dict(dense_optimizer_state(checkpoint.optimizer));
  } catch (const CheckpointError& e) {
    log::warning("fine_tune_checkpoint: optimizer state not restored ({}); optimizers start fresh", e.what());
    return result;
  }
  if (sharded) {
    restore_sharded_state(session, *index);  // checked to fit above
    // The moved rows' optimizer state follows them (the weights move again, identically).
    restore_remapped_shards(session.model(), session.model().embeddings(), *session.sharded_embeddings(), latest->first,
                       *index, /*move_optimizer_state=*/true, /*required=*/false);
  } else {
    session.sparse_optimizer().load_state_dict(sparse_stored);  // checked to fit above
  }
  result.optimizer_restored = true;
  if (chief) log::info("fine_tune_checkpoint: restored optimizer state from {}", latest->first);
  return result;
}

}  // namespace tzrec::train
