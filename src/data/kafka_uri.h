// KafkaDataset input paths (no torch): `kafka://broker:9092[,broker2:9092]/topic?group.id=g&...`
// as TorchEasyRec writes them (docs/tzrec-compatibility.md §6.7). The query's parameters go to
// librdkafka unchanged (its CONFIGURATION.md), except this dataset's own two: `start.timestamp.ms`
// starts each partition at its first message at or after that time (a saved read position takes
// precedence); `malformed.messages` is `fail` (the default: a message that cannot be decoded
// stops the job with an error naming topic, partition and offset) or `skip` (such a message is
// logged with the running count of skipped messages and not trained). `group.id` is required; `enable.auto.commit` defaults to false (the
// read position lives in the checkpoints, not in the broker's committed offsets).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tzrec::data {

struct KafkaUri {
  std::string uri;      // as given, for messages
  std::string brokers;  // bootstrap.servers
  std::string topic;
  // librdkafka configuration (bootstrap.servers and the defaults included), by name.
  std::map<std::string, std::string> params;
  std::optional<int64_t> start_timestamp_ms;
  bool skip_malformed = false;  // malformed.messages=skip
};

// Whether `input_path` names a Kafka topic (starts with "kafka://").
bool is_kafka_uri(const std::string& input_path);

// Parses `input_path`; `field` names the config field for errors ("train_input_path").
// Query values are percent-decoded ('+' is a space), a repeated key keeps its last value.
// Throws ConfigError naming the field and what is missing or malformed.
KafkaUri parse_kafka_uri(const std::string& input_path, const std::string& field);

}  // namespace tzrec::data
