// `tzrec create_online_infer_data`: TorchEasyRec's `python -m tzrec.tools.create_online_infer_data`,
// the same flags — an online request built from the first rows of the training data, and the
// parsed features and outputs the offline model gives for it (export/online_infer_data.h,
// docs/tzrec-compatibility.md §3.5).
#include <memory>

#include "cli/commands.h"
#include "export/online_infer_data.h"

namespace tzrec::cli {

Action add_create_online_infer_data_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("create_online_infer_data",
                                 "Write an online request and the offline model's features and outputs for it");
  auto options = std::make_shared<exporting::OnlineInferDataOptions>();
  cmd->add_option("--scripted_model_path", options->scripted_model_path,
                  "export directory of `tzrec export`; writes debug_data/ and debug_result/ in it")
      ->required();
  cmd->add_option("--item_id", options->item_id,
                  "the item id column (fgout.json's keys); without it the request is one row");
  cmd->add_option("--batch_size", options->batch_size, "rows of the request (default 512)");
  return [options]() {
    exporting::create_online_infer_data(*options);
    return 0;
  };
}

}  // namespace tzrec::cli
