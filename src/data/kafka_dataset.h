// data_config.dataset_type KafkaDataset (no torch): the settings read from the config and input
// path, checked the same way by check_config and by the loader, and the loader workers' sources
// (docs/tzrec-compatibility.md §6.7).
//
// Partitions are assigned explicitly, not by the consumer group's rebalancing: global reader
// g = rank * num_workers + w of world_size * num_workers reads partitions p with
// p % (world_size * num_workers) == g. The spread is deterministic, so saved positions map to
// readers again on resume (with any number of ranks or workers). Fewer partitions than readers
// reduce num_workers (logged); fewer partitions than ranks is an error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "arrow/ipc_schema.h"
#include "data/dataset_sources.h"
#include "data/kafka_uri.h"
#include "tzrec/protos/data.pb.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::data {

struct KafkaDatasetSettings {
  KafkaUri uri;
  // From data_config.input_fields_str / input_fields: the schema of schema-less messages;
  // nullopt when the messages carry their schema (Arrow IPC streams).
  std::optional<arrow::ArrowSchema> input_schema;
};

// `field` names the input path's config field in errors. Throws ConfigError for a malformed
// URI or input field type.
KafkaDatasetSettings kafka_dataset_settings(const protos::DataConfig& dc,
                                            const std::string& input_path,
                                            const std::string& field);

// check_config's part: the settings of the train and eval input paths of a KafkaDataset config
// (nothing for other dataset types), without connecting to the brokers.
void check_kafka_dataset(const protos::EasyRecConfig& config);

// The partitions global reader `reader` of `readers` reads (see above).
std::vector<int32_t> partitions_of_reader(int32_t num_partitions, int reader, int readers);

// The sources of one rank (see make_dataset_sources). `columns` must be in the input schema when
// there is one (ConfigError otherwise). Connects to the brokers for the partition count.
DatasetSources kafka_sources(const protos::DataConfig& dc, const std::string& input_path,
                             const std::vector<std::string>& columns, const BatchOptions& batch,
                             const ReadPosition* resume, int rank, int world_size);

}  // namespace tzrec::data
