// librdkafka's mock cluster (the real Kafka protocol served in process on a local port) with one
// topic, and a producer for it (no torch): what the KafkaDataset tests, tzrec_kafka_mock and the
// Kafka benchmark produce their Arrow messages into. Consumers connect to bootstrap() like to any
// broker; the cluster lives as long as the object.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct rd_kafka_s;
struct rd_kafka_mock_cluster_s;

namespace tzrec::data {

class KafkaMockCluster {
 public:
  // One broker holding `topic` with `partitions` partitions. Throws Error when librdkafka cannot
  // start it.
  KafkaMockCluster(const std::string& topic, int partitions);
  ~KafkaMockCluster();
  KafkaMockCluster(const KafkaMockCluster&) = delete;
  KafkaMockCluster& operator=(const KafkaMockCluster&) = delete;

  // "127.0.0.1:<port>"
  std::string bootstrap() const;
  const std::string& topic() const { return topic_; }

  // Queues one message (copied) to `partition`, with `timestamp_ms` (0: the producer's clock).
  void produce(int32_t partition, std::string_view payload, int64_t timestamp_ms = 0);
  // Waits until every queued message is stored (Error after 30 s).
  void flush();

 private:
  std::string topic_;
  rd_kafka_s* producer_ = nullptr;
  rd_kafka_mock_cluster_s* cluster_ = nullptr;
};

}  // namespace tzrec::data
