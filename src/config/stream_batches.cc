#include "config/stream_batches.h"

namespace tzrec::config {

bool reads_a_stream(const protos::DataConfig& dc) { return dc.dataset_type() == protos::KafkaDataset; }

bool shuffles_batches(const protos::DataConfig& dc) { return dc.shuffle() && !reads_a_stream(dc); }

bool cuts_batches_by_cost(const protos::DataConfig& dc) { return dc.batch_cost_size() > 0 && !reads_a_stream(dc); }

}  // namespace tzrec::config
