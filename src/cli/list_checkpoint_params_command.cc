// `tzrec list_checkpoint_params`: the tensors stored in a checkpoint, one "<name> <shape> <dtype>"
// line each, sorted by name; the tables of a multi-rank checkpoint with their whole shapes, read
// from the file headers. `tzrec list_distcp_param` is the same under the name of TorchEasyRec's
// tool (tzrec.tools.list_distcp_param, the same flag), which lists the model's tensors and then
// the optimizer's.
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "cli/commands.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/sharded_checkpoint.h"

namespace tzrec::cli {
namespace {

struct ListOptions {
  std::string checkpoint_path;
  bool optimizer = false;
};

// torch's Python names (torch.float32 → "float32"), which tzrec users know.
std::string dtype_name(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat: return "float32";
    case torch::kDouble: return "float64";
    case torch::kHalf: return "float16";
    case torch::kBFloat16: return "bfloat16";
    case torch::kLong: return "int64";
    case torch::kInt: return "int32";
    case torch::kShort: return "int16";
    case torch::kChar: return "int8";
    case torch::kByte: return "uint8";
    case torch::kBool: return "bool";
    default: return c10::toString(t);
  }
}

// The tensors of one file prefix ("model" / "optimizer"), from the headers alone: tables of a
// multi-rank checkpoint with their global shapes, nothing read into memory.
void print_tensors(const checkpointing::CheckpointTensorIndex& index, const std::string& prefix) {
  for (const std::string& name : index.names()) {
    if (index.file_prefix(name) != prefix) continue;
    std::printf("%s\n", fmt::format("{} [{}] {}", name, fmt::join(index.shape(name), ", "),
                                    dtype_name(index.dtype(name)))
                            .c_str());
  }
}

// The command `name`; `optimizer`: the optimizer state is listed too (else only with --optimizer).
Action add_list_command(CLI::App& app, const std::string& name, const std::string& description, bool optimizer) {
  auto* cmd = app.add_subcommand(name, description);
  auto options = std::make_shared<ListOptions>();
  options->optimizer = optimizer;
  cmd->add_option("--checkpoint_path", options->checkpoint_path,
                  "checkpoint dir (model_dir/model.ckpt-N) or a model_dir (its latest checkpoint)")
      ->required();
  if (!optimizer) cmd->add_flag("--optimizer", options->optimizer, "also list the optimizer state tensors");
  return [options]() {
    auto latest = checkpointing::latest_checkpoint(options->checkpoint_path);
    if (!latest) {
      throw CheckpointError(fmt::format(
          "no checkpoint found in {}; pass a model_dir holding model.ckpt-* or a model.ckpt-N directory",
          options->checkpoint_path));
    }
    log::info("listing {}", latest->first);
    // Headers only: a checkpoint's tables are not read into memory.
    for (const char* file : {"manifest.json", "model.safetensors", "optimizer.safetensors"}) {
      if (!std::filesystem::exists(std::filesystem::path(latest->first) / file)) {
        throw CheckpointError(fmt::format("{}: missing {}; not a complete checkpoint written by tzrec — use "
                                          "another checkpoint",
                                          latest->first, file));
      }
    }
    const checkpointing::CheckpointTensorIndex index(latest->first);
    print_tensors(index, "model");
    if (options->optimizer) print_tensors(index, "optimizer");
    std::fflush(stdout);
    return 0;
  };
}

}  // namespace

Action add_list_checkpoint_params_command(CLI::App& app) {
  return add_list_command(app, "list_checkpoint_params",
                          "Print the name, shape and dtype of every tensor stored in a checkpoint", false);
}

Action add_list_distcp_param_command(CLI::App& app) {
  return add_list_command(app, "list_distcp_param",
                          "Print the name, shape and dtype of every model and optimizer tensor stored in a checkpoint "
                          "(TorchEasyRec's list_distcp_param)",
                          true);
}

}  // namespace tzrec::cli
