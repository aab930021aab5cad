#include "data/kafka_dataset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "base/error.h"
#include "base/logging.h"
#include "data/kafka_batch_source.h"
#include "data/kafka_consumer.h"

namespace tzrec::data {
namespace {

// (name, type) of the input fields; a field without a type is an error: schema-less messages
// carry nothing to infer it from.
std::vector<std::pair<std::string, std::string>> typed_input_fields(const protos::DataConfig& dc) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& f : input_fields(dc)) {
    if (f.type.empty()) {
      throw ConfigError(fmt::format(
          "data_config.input_fields: '{}' has no type; KafkaDataset decodes schema-less messages "
          "with the input fields' types (give every field one, or no input fields for messages "
          "that carry their schema)",
          f.name));
    }
    out.emplace_back(std::move(f.name), std::move(f.type));
  }
  return out;
}

}  // namespace

KafkaDatasetSettings kafka_dataset_settings(const protos::DataConfig& dc,
                                            const std::string& input_path,
                                            const std::string& field) {
  KafkaDatasetSettings out;
  out.uri = parse_kafka_uri(input_path, field);
  const auto fields = typed_input_fields(dc);
  if (!fields.empty()) out.input_schema = arrow::schema_from_input_fields(fields);
  return out;
}

void check_kafka_dataset(const protos::EasyRecConfig& config) {
  if (config.data_config().dataset_type() != protos::KafkaDataset) return;
  kafka_dataset_settings(config.data_config(), config.train_input_path(), "train_input_path");
  if (!config.eval_input_path().empty()) {
    kafka_dataset_settings(config.data_config(), config.eval_input_path(), "eval_input_path");
    if (!config.eval_config().has_num_steps() || config.eval_config().num_steps() == 0) {
      throw ConfigError(
          "eval_config.num_steps: required when eval_input_path is a Kafka topic (a stream has no "
          "end, so evaluation would never finish); set the number of eval batches");
    }
  }
}

std::vector<int32_t> partitions_of_reader(int32_t num_partitions, int reader, int readers) {
  std::vector<int32_t> out;
  for (int32_t p = reader; p < num_partitions; p += readers) out.push_back(p);
  return out;
}

DatasetSources kafka_sources(const protos::DataConfig& dc, const std::string& input_path,
                             const std::vector<std::string>& columns, const BatchOptions& batch,
                             const ReadPosition* resume, int rank, int world_size) {
  KafkaDatasetSettings settings = kafka_dataset_settings(dc, input_path, "input_path");
  if (settings.input_schema) {
    const std::vector<std::string> missing = settings.input_schema->missing(columns);
    if (!missing.empty()) {
      throw ConfigError(fmt::format(
          "data_config.input_fields: no field(s) [{}] that the config reads (fields: [{}]); "
          "KafkaDataset decodes schema-less messages with input_fields, so list every column",
          fmt::join(missing, ", "), fmt::join(settings.input_schema->names(), ", ")));
    }
  }
  if (resume && (resume->kind != PositionKind::kStream || resume->topic != settings.uri.topic)) {
    throw DataError(fmt::format(
        "cannot resume: the saved data position was written for {}, but the input is topic '{}' "
        "of {}; resume with the same input",
        resume->kind == PositionKind::kStream ? fmt::format("topic '{}'", resume->topic)
                                              : std::string("files"),
        settings.uri.topic, input_path));
  }
  const std::string rank_name = fmt::format("rank {}", rank);
  auto first = std::make_unique<KafkaConsumer>(settings.uri, rank_name + " worker 0");
  const int32_t partitions = first->partition_count();
  if (partitions < world_size) {
    throw DataError(fmt::format(
        "{}: topic '{}' has {} partition(s), fewer than the {} ranks: each rank reads whole "
        "partitions; add partitions or train on fewer ranks",
        input_path, settings.uri.topic, partitions, world_size));
  }
  int workers = std::max(1, static_cast<int>(dc.num_workers()));
  if (partitions < world_size * workers) {
    workers = std::max(1, partitions / world_size);
    log::info("data_config.num_workers reset to {}: topic '{}' has {} partitions for {} rank(s)",
              workers, settings.uri.topic, partitions, world_size);
  }
  if (partitions % (world_size * workers) != 0) {
    log::warning("topic '{}': {} partitions do not divide evenly over {} readers ({} rank(s) x {} "
                 "workers): some read more partitions than others",
                 settings.uri.topic, partitions, world_size * workers, world_size, workers);
  }
  DatasetSources out;
  out.files = {input_path};
  out.start = resume ? resume->for_workers(workers, rank, world_size)
                     : ReadPosition::start_stream(settings.uri.topic, workers, world_size);
  KafkaSourceOptions options;
  options.uri = settings.uri;
  options.columns = columns;
  options.input_schema = settings.input_schema;
  options.batch_size = batch.batch_size;
  for (int w = 0; w < workers; ++w) {
    const std::string who = fmt::format("{} worker {}", rank_name, w);
    auto consumer = w == 0 ? std::move(first) : std::make_unique<KafkaConsumer>(settings.uri, who);
    out.sources.push_back(std::make_unique<KafkaBatchSource>(
        options, std::move(consumer), partitions_of_reader(partitions, rank * workers + w, world_size * workers),
        out.start, who));
  }
  return out;
}

}  // namespace tzrec::data
