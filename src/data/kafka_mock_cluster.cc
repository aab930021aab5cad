#include "data/kafka_mock_cluster.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::data {

KafkaMockCluster::KafkaMockCluster(const std::string& topic, int partitions) : topic_(topic) {
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "test.mock.num.brokers", "1", errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    throw Error(fmt::format("mock Kafka cluster: {}", errstr));
  }
  rd_kafka_conf_set_log_cb(conf, [](const rd_kafka_t*, int level, const char* facility, const char* line) {
    log::debug("librdkafka mock {} [{}]: {}", level, facility, line);
  });
  producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (producer_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw Error(fmt::format("mock Kafka cluster: {}", errstr));
  }
  cluster_ = rd_kafka_handle_mock_cluster(producer_);
  if (cluster_ == nullptr ||
      rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_destroy(producer_);
    throw Error(fmt::format("mock Kafka cluster: cannot create topic '{}' with {} partitions", topic,
                            partitions));
  }
}

KafkaMockCluster::~KafkaMockCluster() { rd_kafka_destroy(producer_); }

std::string KafkaMockCluster::bootstrap() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }

void KafkaMockCluster::produce(int32_t partition, std::string_view payload, int64_t timestamp_ms) {
  for (;;) {
    const auto err = rd_kafka_producev(
        producer_, RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_VALUE(const_cast<char*>(payload.data()), payload.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(timestamp_ms), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(producer_, 100);  // let deliveries make room
      continue;
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw Error(fmt::format("mock Kafka cluster: cannot produce to '{}' partition {}: {}", topic_,
                              partition, rd_kafka_err2str(err)));
    }
    rd_kafka_poll(producer_, 0);
    return;
  }
}

void KafkaMockCluster::flush() {
  if (rd_kafka_flush(producer_, 30000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw Error(fmt::format("mock Kafka cluster: messages to '{}' not stored within 30 s", topic_));
  }
}

}  // namespace tzrec::data
