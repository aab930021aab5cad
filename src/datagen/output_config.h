// The pipeline.config written next to generated data: the input config with train_input_path
// and eval_input_path pointing at the generated Parquet files (absolute paths),
// data_config.dataset_type ParquetDataset (also for ODPS, CSV and Kafka inputs, whose
// input_fields / input_fields_str describe columns of the old input and are dropped), and the
// sampler's input paths pointing at the generated tables.
#pragma once

#include <string>

#include "datagen/sampler_tables.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::datagen {

protos::EasyRecConfig output_config(const protos::EasyRecConfig& input, const std::string& train_path,
                                    const std::string& eval_path, const SamplerTables& tables);

}  // namespace tzrec::datagen
