#include "datagen/output_config.h"

namespace tzrec::datagen {

protos::EasyRecConfig output_config(const protos::EasyRecConfig& input, const std::string& train_path,
                                    const std::string& eval_path, const SamplerTables& tables) {
  protos::EasyRecConfig config = input;
  config.set_train_input_path(train_path);
  config.set_eval_input_path(eval_path);
  auto* data = config.mutable_data_config();
  data->set_dataset_type(protos::ParquetDataset);
  data->clear_input_fields();
  data->clear_input_fields_str();
  point_sampler_at(tables, &config);
  return config;
}

}  // namespace tzrec::datagen
