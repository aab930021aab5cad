// How a stream dataset (KafkaDataset) reads the data_config settings that reorder or re-cut
// training batches. TorchEasyRec's KafkaReader hands neither `shuffle` nor `batch_cost_size` to its
// base reader, so a stream is trained in the order it arrives, batch_size rows per batch, and the
// two are accepted and ignored there (check_config warns). One rule for check_config and the
// loader.
#pragma once

#include "tzrec/protos/data.pb.h"

namespace tzrec::config {

// The data set is a stream (KafkaDataset).
bool reads_a_stream(const protos::DataConfig& dc);
// Training batches go through a shuffle buffer: `shuffle` set and not a stream.
bool shuffles_batches(const protos::DataConfig& dc);
// Batches are cut by cost: `batch_cost_size` > 0 and not a stream.
bool cuts_batches_by_cost(const protos::DataConfig& dc);

}  // namespace tzrec::config
