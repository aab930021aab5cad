// Evaluation pass over an input path, and the JSON-lines result files TorchEasyRec writes.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "dist/process_group.h"
#include "models/model.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

// Runs the model in eval mode over `input_path` (eval_config.num_steps batches at most when set)
// and returns the metrics (each loss is reported as a metric too). With a process group of more
// than one rank, each rank evaluates its share of the data (rank-sharded like training); a rank
// that runs out first keeps running its last batch without counting it, so that the sharded
// embedding exchanges of the others can complete, and the metrics are merged over all ranks
// (every rank returns the all-rows values). A rank with no eval data at all → DataError on every
// rank.
std::map<std::string, double> evaluate(models::Model& model, const protos::EasyRecConfig& config,
                                       const std::string& input_path, dist::ProcessGroup* pg = nullptr);

// Writes {"global_step": step, "<metric>": value, ...} (metric names sorted) as one JSON line to
// `path`, appended (train_eval_result_v2.txt) or replacing the file (eval_result.txt).
enum class WriteMode { kAppend, kReplace };
void write_result_line(const std::string& path, int64_t step,
                       const std::map<std::string, double>& metrics, WriteMode mode);

// "auc:0.781234 binary_cross_entropy:0.4321"
std::string format_metrics(const std::map<std::string, double>& metrics);

}  // namespace tzrec::train
