#include "data/kafka_consumer.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::data {
namespace {

using Clock = std::chrono::steady_clock;

int env_int(const char* name, int fallback, int min_value) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long parsed = std::strtol(v, &end, 10);
  if (*end != '\0' || parsed < min_value) {
    throw ConfigError(fmt::format("environment variable {}='{}': expected an integer >= {}", name,
                                  v, min_value));
  }
  return static_cast<int>(parsed);
}

double env_seconds(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const double parsed = std::strtod(v, &end);
  if (*end != '\0' || !(parsed > 0)) {
    throw ConfigError(
        fmt::format("environment variable {}='{}': expected a positive number of seconds", name, v));
  }
  return parsed;
}

// librdkafka's own log lines (connection attempts, retries) at debug level: what matters reaches
// the error callback and, from there, the dataset's warnings and errors.
void on_log(const rd_kafka_t*, int level, const char* facility, const char* line) {
  log::debug("librdkafka {} [{}]: {}", level, facility, line);
}

struct PartitionList {
  rd_kafka_topic_partition_list_t* list;
  explicit PartitionList(int n) : list(rd_kafka_topic_partition_list_new(n)) {}
  ~PartitionList() { rd_kafka_topic_partition_list_destroy(list); }
};

}  // namespace

KafkaMessage::KafkaMessage(rd_kafka_message_s* message) : message_(message) {}
KafkaMessage::~KafkaMessage() { rd_kafka_message_destroy(message_); }
int32_t KafkaMessage::partition() const { return message_->partition; }
int64_t KafkaMessage::offset() const { return message_->offset; }
std::string_view KafkaMessage::payload() const {
  return std::string_view(static_cast<const char*>(message_->payload), message_->len);
}
int64_t KafkaMessage::timestamp_ms() const {
  rd_kafka_timestamp_type_t type;
  const int64_t ts = rd_kafka_message_timestamp(message_, &type);
  return type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? -1 : ts;
}

// Written by librdkafka's callbacks (served inside poll calls of the owning thread) and read by
// that thread; the mutex keeps it safe if librdkafka ever calls back from its own threads.
struct KafkaConsumer::ErrorState {
  std::mutex mu;
  std::optional<Clock::time_point> brokers_down_since;
  std::string last_error;
  Clock::time_point last_warning{};
  bool fatal = false;
};

void KafkaConsumer::on_error(rd_kafka_s* rk, int err, const char* reason, void* opaque) {
  auto* state = static_cast<ErrorState*>(opaque);
  std::lock_guard<std::mutex> lock(state->mu);
  state->last_error = fmt::format("{} ({})", reason, rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)));
  if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && !state->brokers_down_since) {
    state->brokers_down_since = Clock::now();
  }
  if (err == RD_KAFKA_RESP_ERR__FATAL) state->fatal = true;
  const auto now = Clock::now();
  if (now - state->last_warning > std::chrono::seconds(30)) {
    state->last_warning = now;
    log::warning("kafka: {} (retrying)", state->last_error);
  }
}

KafkaConsumer::KafkaConsumer(const KafkaUri& uri, std::string who)
    : uri_(uri), who_(std::move(who)), errors_(std::make_unique<ErrorState>()) {
  broker_timeout_ = std::chrono::seconds(
      static_cast<int64_t>(env_seconds("TZREC_KAFKA_BROKER_TIMEOUT_S", 120)));
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [key, value] : uri_.params) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof errstr) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw ConfigError(fmt::format("{}: librdkafka rejects the parameter {}={}: {}", uri_.uri, key,
                                    value, errstr));
    }
  }
  rd_kafka_conf_set_error_cb(conf, [](rd_kafka_t* rk, int err, const char* reason, void* opaque) {
    on_error(rk, err, reason, opaque);
  });
  rd_kafka_conf_set_log_cb(conf, on_log);
  rd_kafka_conf_set_opaque(conf, errors_.get());
  rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
  if (rk_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw ConfigError(fmt::format("{}: cannot create a Kafka consumer: {}", uri_.uri, errstr));
  }
  rd_kafka_poll_set_consumer(rk_);
}

KafkaConsumer::~KafkaConsumer() {
  if (rk_ == nullptr) return;
  rd_kafka_consumer_close(rk_);
  rd_kafka_destroy(rk_);
}

void KafkaConsumer::fail_unreachable(const std::string& what) const {
  std::string last;
  {
    std::lock_guard<std::mutex> lock(errors_->mu);
    last = errors_->last_error;
  }
  throw DataError(fmt::format(
      "{} ({}): {} within {} s (last error: {}); check that the brokers '{}' are up and "
      "reachable, or wait longer with TZREC_KAFKA_BROKER_TIMEOUT_S",
      uri_.uri, who_, what, broker_timeout_.count(), last.empty() ? "none" : last, uri_.brokers));
}

int32_t KafkaConsumer::partition_count() {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, uri_.topic.c_str(), nullptr);
  const struct rd_kafka_metadata* md = nullptr;
  const auto err = rd_kafka_metadata(rk_, 0, rkt, &md,
                                     static_cast<int>(std::chrono::milliseconds(broker_timeout_).count()));
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    fail_unreachable(fmt::format("no metadata for topic '{}' ({})", uri_.topic, rd_kafka_err2str(err)));
  }
  std::optional<int32_t> count;
  std::string topic_error;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (uri_.topic != md->topics[i].topic) continue;
    if (md->topics[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      topic_error = rd_kafka_err2str(md->topics[i].err);
    } else {
      count = md->topics[i].partition_cnt;
    }
  }
  rd_kafka_metadata_destroy(md);
  if (!count || *count <= 0) {
    throw DataError(fmt::format("{} ({}): topic '{}' is not on the brokers '{}'{}; check the topic "
                                "name",
                                uri_.uri, who_, uri_.topic, uri_.brokers,
                                topic_error.empty() ? "" : " (" + topic_error + ")"));
  }
  return *count;
}

std::map<int32_t, int64_t> KafkaConsumer::offsets_for_time(const std::vector<int32_t>& partitions,
                                                           int64_t timestamp_ms) {
  const int chunk = env_int("TZREC_KAFKA_OFFSETS_FOR_TIMES_BATCH_SIZE", 32, 1);
  const double timeout_s = env_seconds("TZREC_KAFKA_OFFSETS_FOR_TIMES_TIMEOUT", 30.0);
  const int retries = env_int("TZREC_KAFKA_OFFSETS_FOR_TIMES_RETRIES", 2, 0);
  std::map<int32_t, int64_t> out;
  for (size_t begin = 0; begin < partitions.size(); begin += static_cast<size_t>(chunk)) {
    const size_t end = std::min(partitions.size(), begin + static_cast<size_t>(chunk));
    for (int attempt = 0;; ++attempt) {
      PartitionList l(static_cast<int>(end - begin));
      for (size_t i = begin; i < end; ++i) {
        rd_kafka_topic_partition_list_add(l.list, uri_.topic.c_str(), partitions[i])->offset = timestamp_ms;
      }
      const auto err = rd_kafka_offsets_for_times(rk_, l.list, static_cast<int>(timeout_s * 1000));
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        for (int i = 0; i < l.list->cnt; ++i) {
          const auto& e = l.list->elems[i];
          const bool found = e.err == RD_KAFKA_RESP_ERR_NO_ERROR && e.offset >= 0;
          if (!found) {
            log::warning("{}: no message at or after start.timestamp.ms={} in partition {}: starting "
                      "it by auto.offset.reset",
                      uri_.uri, timestamp_ms, e.partition);
          }
          out[e.partition] = found ? e.offset : kOffsetDefault;
        }
        break;
      }
      if (attempt >= retries) {
        throw DataError(fmt::format(
            "{} ({}): cannot resolve start.timestamp.ms={} to offsets of {} partition(s) after {} "
            "retries: {}; raise TZREC_KAFKA_OFFSETS_FOR_TIMES_TIMEOUT / _RETRIES or lower "
            "_BATCH_SIZE",
            uri_.uri, who_, timestamp_ms, end - begin, retries, rd_kafka_err2str(err)));
      }
      log::warning("{}: offsets for start.timestamp.ms, attempt {}/{} failed ({}), retrying",
                uri_.uri, attempt + 1, retries, rd_kafka_err2str(err));
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(2.0 * (attempt + 1), 10.0)));
    }
  }
  return out;
}

void KafkaConsumer::assign(const std::map<int32_t, int64_t>& partition_offsets) {
  PartitionList l(static_cast<int>(partition_offsets.size()));
  for (const auto& [p, offset] : partition_offsets) {
    rd_kafka_topic_partition_list_add(l.list, uri_.topic.c_str(), p)->offset =
        offset == kOffsetDefault ? RD_KAFKA_OFFSET_INVALID : offset;
  }
  const auto err = rd_kafka_assign(rk_, l.list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw DataError(fmt::format("{} ({}): cannot assign partitions of topic '{}': {}", uri_.uri,
                                who_, uri_.topic, rd_kafka_err2str(err)));
  }
}

void KafkaConsumer::check_health() {
  std::optional<Clock::time_point> since;
  bool fatal = false;
  {
    std::lock_guard<std::mutex> lock(errors_->mu);
    since = errors_->brokers_down_since;
    fatal = errors_->fatal;
  }
  if (fatal) {
    char errstr[512];
    rd_kafka_fatal_error(rk_, errstr, sizeof errstr);
    throw DataError(fmt::format("{} ({}): fatal consumer error: {}", uri_.uri, who_, errstr));
  }
  if (!since || Clock::now() - *since < broker_timeout_) return;
  // librdkafka reports brokers going down, not coming back: ask before giving up.
  const struct rd_kafka_metadata* md = nullptr;
  if (rd_kafka_metadata(rk_, 0, nullptr, &md, 2000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_metadata_destroy(md);
    std::lock_guard<std::mutex> lock(errors_->mu);
    errors_->brokers_down_since.reset();
    return;
  }
  fail_unreachable("no broker could be reached");
}

std::unique_ptr<KafkaMessage> KafkaConsumer::poll(std::chrono::milliseconds timeout) {
  rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, static_cast<int>(timeout.count()));
  if (m == nullptr) {
    check_health();
    return nullptr;
  }
  auto message = std::make_unique<KafkaMessage>(m);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::lock_guard<std::mutex> lock(errors_->mu);
    errors_->brokers_down_since.reset();
    return message;
  }
  if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return nullptr;
  const std::string what = rd_kafka_message_errstr(m);
  if (m->rkt != nullptr && m->partition >= 0) {
    // An error of one partition (e.g. its offset is gone and auto.offset.reset=error): reading on
    // would skip or repeat messages.
    throw DataError(fmt::format("{} ({}): topic '{}' partition {} offset {}: {} ({})", uri_.uri, who_,
                                uri_.topic, m->partition, m->offset, what, rd_kafka_err2name(m->err)));
  }
  check_health();
  log::warning("{} ({}): {} (retrying)", uri_.uri, who_, what);
  return nullptr;
}

}  // namespace tzrec::data
