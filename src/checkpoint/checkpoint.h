// Checkpoint directories (TorchEasyRec's model_dir/model.ckpt-<step>/ layout, with safetensors
// files instead of torch.distributed.checkpoint shards):
//
//   model_dir/model.ckpt-<step>/
//     model.safetensors      model parameters and buffers by state-dict name
//     optimizer.safetensors  optimizer state, keys "sparse.<...>" / "dense.<...>"
//     manifest.json          {"format_version": 1, "step", "config_digest", "tzrec_version",
//                             "parameters": [{"name", "shape", "dtype"}], "optimizer_state": [...]}
//     dataloader_state.json  opaque JSON from the caller (null when absent)
//
// Tensors are stored whole (sharding independent), so a checkpoint loads on any world size.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tzrec::checkpointing {

inline constexpr int kCheckpointFormatVersion = 1;

struct CheckpointData {
  int64_t step = 0;
  std::map<std::string, torch::Tensor> model;      // state-dict name -> tensor
  std::map<std::string, torch::Tensor> optimizer;  // "sparse.<...>", "dense.<...>"
  nlohmann::json dataloader_state;                 // may be null
  std::string config_digest;
  std::string dir;  // set by load_checkpoint: the directory it was read from
};

// model_dir/model.ckpt-<step>
std::string checkpoint_dir(const std::string& model_dir, int64_t step);

// Writes checkpoint_dir(model_dir, data.step) atomically: everything goes into a hidden temporary
// sibling directory which then replaces the final one (an existing checkpoint of the same step is
// swapped out with renameat2(RENAME_EXCHANGE) where the filesystem supports it, then deleted).
// Creates model_dir if needed. Optimizer keys must start with "sparse." or "dense.".
// Throws IoError / CheckpointError.
void save_checkpoint(const std::string& model_dir, const CheckpointData& data);

// The steps of save_checkpoint, for writers that stage a checkpoint from several processes
// (train/distributed_checkpoint.h): the tensor files, manifest.json (plus `extra_manifest` keys)
// and dataloader_state.json into `dir`; the hidden staging directory name of a step; and the
// atomic move of a staged directory to checkpoint_dir(model_dir, step).
void write_checkpoint_files(const std::string& dir, const CheckpointData& data,
                            const nlohmann::ordered_json& extra_manifest);
std::string checkpoint_staging_dir(const std::string& model_dir, int64_t step, const std::string& tag);
void publish_checkpoint_dir(const std::string& model_dir, const std::string& staging_dir, int64_t step);

// TorchEasyRec's latest_checkpoint: a path whose last component is "model.ckpt-<...>" is returned
// as-is (step parsed from the name, 0 if not numeric); otherwise the highest-step
// model.ckpt-<digits> directory inside; otherwise, if the directory itself holds a checkpoint
// (manifest.json or model.safetensors), (dir, its manifest step or 0); otherwise nullopt.
std::optional<std::pair<std::string, int64_t>> latest_checkpoint(const std::string& dir_or_ckpt);

// The model.ckpt-<digits> directories in model_dir, sorted by step (then name). Other entries
// (files, temporary dirs, "model.ckpt-abc") are ignored; a missing model_dir gives {}.
std::vector<std::pair<std::string, int64_t>> list_checkpoints(const std::string& model_dir);

// Reads and cross-checks a checkpoint directory (manifest against the tensor files). A missing
// file, bad manifest or mismatch throws CheckpointError naming the file and how to fix it. A
// checkpoint of a multi-rank job (train/distributed_checkpoint.h) also gets its sharded tables
// and their optimizer state assembled into whole tensors, unless assemble_shards is false (a
// distributed session reads its blocks itself).
CheckpointData load_checkpoint(const std::string& ckpt_dir, bool assemble_shards = true);

// Copies `stored` into `params` in place (under no_grad). Every param must be present with the
// same shape and dtype, else CheckpointError naming the key and the expected and found
// shape/dtype; stored keys that match no param are an error too unless allow_extra. Nothing is
// copied unless everything matches. `what` names the state in messages ("model", "optimizer").
void restore_tensors(const std::map<std::string, torch::Tensor>& stored,
                     const std::vector<std::pair<std::string, torch::Tensor>>& params,
                     const std::string& what, bool allow_extra = false);

// Writes `text` to `path` (replacing it) and fsyncs it. IoError naming the file on failure.
void write_text_file(const std::string& path, const std::string& text);

// Lower-case hex SHA-256 of `text` (FIPS 180-4), used as the pipeline config digest.
std::string digest_text(const std::string& text);

}  // namespace tzrec::checkpointing
