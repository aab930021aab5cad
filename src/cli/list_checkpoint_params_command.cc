// `tzrec list_checkpoint_params`: the tensors stored in a checkpoint (TorchEasyRec's
// tzrec.tools.list_distcp_param), one "<name> <shape> <dtype>" line each.
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "cli/commands.h"
#include "train/checkpoint.h"

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

void print_tensors(const std::map<std::string, torch::Tensor>& tensors) {
  for (const auto& [name, tensor] : tensors) {
    std::printf("%s\n", fmt::format("{} [{}] {}", name, fmt::join(tensor.sizes(), ", "),
                                    dtype_name(tensor.scalar_type()))
                            .c_str());
  }
}

}  // namespace

Action add_list_checkpoint_params_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list_checkpoint_params",
                                 "Print the name, shape and dtype of every tensor stored in a checkpoint");
  auto options = std::make_shared<ListOptions>();
  cmd->add_option("--checkpoint_path", options->checkpoint_path,
                  "checkpoint dir (model_dir/model.ckpt-N) or a model_dir (its latest checkpoint)")
      ->required();
  cmd->add_flag("--optimizer", options->optimizer, "also list the optimizer state tensors");
  return [options]() {
    auto latest = train::latest_checkpoint(options->checkpoint_path);
    if (!latest) {
      throw CheckpointError(fmt::format(
          "no checkpoint found in {}; pass a model_dir holding model.ckpt-* or a model.ckpt-N directory",
          options->checkpoint_path));
    }
    log::info("listing {}", latest->first);
    const auto checkpoint = train::load_checkpoint(latest->first);
    print_tensors(checkpoint.model);
    if (options->optimizer) print_tensors(checkpoint.optimizer);
    std::fflush(stdout);
    return 0;
  };
}

}  // namespace tzrec::cli
