// One librdkafka consumer of a KafkaDataset topic (no torch): partition metadata, explicit
// assignment of partitions at given offsets, message polling, and the error policy of the
// dataset (docs/tzrec-compatibility.md §6.7):
//   - brokers that cannot be reached are retried by librdkafka with backoff; when none has been
//     reachable for TZREC_KAFKA_BROKER_TIMEOUT_S seconds (default 120), poll() throws a DataError
//     naming the brokers and the last error, so training never waits forever on a dead cluster;
//   - a fatal consumer error or an unknown topic is a DataError naming the topic;
//   - start.timestamp.ms is resolved to offsets in chunks with retries, as TorchEasyRec does
//     (TZREC_KAFKA_OFFSETS_FOR_TIMES_BATCH_SIZE / _TIMEOUT / _RETRIES).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/kafka_uri.h"

struct rd_kafka_s;
struct rd_kafka_message_s;

namespace tzrec::data {

// A polled message; the payload stays valid while the message lives.
class KafkaMessage {
 public:
  explicit KafkaMessage(rd_kafka_message_s* message);
  ~KafkaMessage();
  KafkaMessage(const KafkaMessage&) = delete;
  KafkaMessage& operator=(const KafkaMessage&) = delete;

  int32_t partition() const;
  int64_t offset() const;
  std::string_view payload() const;
  // Milliseconds since the Unix epoch, -1 when the message has none.
  int64_t timestamp_ms() const;

 private:
  rd_kafka_message_s* message_;
};

class KafkaConsumer {
 public:
  // Offset that lets librdkafka decide: the group's committed offset, else auto.offset.reset.
  static constexpr int64_t kOffsetDefault = -1001;

  // `who` names this consumer in messages ("rank 0 worker 1"). Throws ConfigError when librdkafka
  // rejects a parameter of the URI (naming it).
  KafkaConsumer(const KafkaUri& uri, std::string who);
  ~KafkaConsumer();
  KafkaConsumer(const KafkaConsumer&) = delete;
  KafkaConsumer& operator=(const KafkaConsumer&) = delete;

  // The topic's partition count; DataError when the brokers do not answer within the broker
  // timeout or the topic does not exist.
  int32_t partition_count();

  // The first offset at or after `timestamp_ms` of each partition (kOffsetDefault where the
  // partition has no such message: librdkafka then applies auto.offset.reset, as TorchEasyRec).
  std::map<int32_t, int64_t> offsets_for_time(const std::vector<int32_t>& partitions,
                                              int64_t timestamp_ms);

  // Reads `partitions` from the given offsets (kOffsetDefault allowed).
  void assign(const std::map<int32_t, int64_t>& partition_offsets);

  // The next message, or nullptr when none arrived within `timeout`. Throws DataError (see the
  // header comment) on a fatal error or brokers unreachable for too long.
  std::unique_ptr<KafkaMessage> poll(std::chrono::milliseconds timeout);

  const KafkaUri& uri() const { return uri_; }

 private:
  struct ErrorState;
  static void on_error(rd_kafka_s* rk, int err, const char* reason, void* opaque);
  [[noreturn]] void fail_unreachable(const std::string& what) const;
  void check_health();

  KafkaUri uri_;
  std::string who_;
  std::unique_ptr<ErrorState> errors_;
  rd_kafka_s* rk_ = nullptr;
  std::chrono::seconds broker_timeout_;
};

}  // namespace tzrec::data
