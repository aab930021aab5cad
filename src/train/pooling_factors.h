// Pooling factors for the sharding planner's cost model, measured on the first training batches
// (reference: TorchRec's planner takes them per table; TorchEasyRec leaves its default of 1).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dist/planner.h"
#include "dist/process_group.h"
#include "embedding/embedding_config.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::train {

// Batches of each rank's share of train_input_path that the measurement reads.
constexpr int kPoolingFactorBatches = 4;

// Mean ids per sample of each table of `bags` (summed over the features that read it), from the
// first `max_batches` batches of train_input_path that each rank would train on, summed over the
// ranks of `pg` (nullptr: this process alone), so every rank gets the same numbers. A collective
// when `pg` is given: every rank calls it. Returns an empty map — the planner then keeps its
// estimates — when there is no train input, the input is a KafkaDataset stream (not read ahead
// of training), or no rank read a row; a rank that cannot read its
// data logs a warning and the measurement is dropped on every rank (training then reports the
// data error itself).
std::map<std::string, double> measure_pooling_factors(const protos::EasyRecConfig& config,
                                                      const std::vector<embedding::BagConfig>& bags,
                                                      dist::ProcessGroup* pg, int max_batches = kPoolingFactorBatches);

// Sets pooling_factor (and pooling_measured) of every table in `measured`.
void apply_pooling_factors(const std::map<std::string, double>& measured, std::vector<dist::PlannerTable>* tables);

}  // namespace tzrec::train
