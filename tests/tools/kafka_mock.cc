// tzrec_kafka_mock: an in-process Kafka cluster (librdkafka's mock cluster: the real protocol on
// a local port) for the KafkaDataset tests, optionally filled with the rows of a Parquet file as
// Arrow messages, the way a producer such as TorchEasyRec's Flink UDTF writes them.
//
//   tzrec_kafka_mock --topic T [--partitions P] [--produce F.parquet] [--rows_per_message N]
//                    [--format stream|schemaless] [--compression none|zstd|lz4]
//                    [--first_timestamp_ms MS] [--timestamp_step_ms S] [--hold_after_rows R]
//
// Prints "bootstrap <host:port>" and, after producing, "produced <messages> messages <rows>
// rows", then serves until the process gets SIGTERM / SIGINT.
// Message i holds rows [i*N, (i+1)*N) of the file, goes to partition i % P, and has the timestamp
// first_timestamp_ms + i * timestamp_step_ms. With --hold_after_rows, producing pauses once R rows
// are stored ("holding after <rows> rows") until the process gets SIGUSR1.
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "arrow/batch.h"
#include "arrow/ipc_writer.h"
#include "data/kafka_mock_cluster.h"
#include "parquet/file_reader.h"

namespace {

volatile std::sig_atomic_t stop_requested = 0;
volatile std::sig_atomic_t released = 0;
void on_signal(int) { stop_requested = 1; }
void on_release(int) { released = 1; }

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "tzrec_kafka_mock: %s\n", what.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string topic, produce, format = "stream", compression = "none";
  int partitions = 1;
  int64_t rows_per_message = 16, first_ts = 1700000000000, ts_step = 1000, hold_after = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value of " + a);
      return argv[++i];
    };
    if (a == "--topic") topic = value();
    else if (a == "--partitions") partitions = std::atoi(value().c_str());
    else if (a == "--produce") produce = value();
    else if (a == "--rows_per_message") rows_per_message = std::atoll(value().c_str());
    else if (a == "--format") format = value();
    else if (a == "--compression") compression = value();
    else if (a == "--first_timestamp_ms") first_ts = std::atoll(value().c_str());
    else if (a == "--timestamp_step_ms") ts_step = std::atoll(value().c_str());
    else if (a == "--hold_after_rows") hold_after = std::atoll(value().c_str());
    else die("unknown flag " + a);
  }
  if (topic.empty() || partitions < 1 || rows_per_message < 1) die("need --topic, --partitions >= 1, --rows_per_message >= 1");
  if (format != "stream" && format != "schemaless") die("--format must be stream or schemaless");
  tzrec::arrow::WriteOptions write;
  if (compression == "zstd") write.compression = tzrec::arrow::BodyCodec::kZstd;
  else if (compression == "lz4") write.compression = tzrec::arrow::BodyCodec::kLz4Frame;
  else if (compression != "none") die("--compression must be none, zstd or lz4");

  std::unique_ptr<tzrec::data::KafkaMockCluster> cluster;
  try {
    cluster = std::make_unique<tzrec::data::KafkaMockCluster>(topic, partitions);
  } catch (const std::exception& e) {
    die(e.what());
  }
  std::printf("bootstrap %s\n", cluster->bootstrap().c_str());
  std::fflush(stdout);

  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGUSR1, on_release);
  if (!produce.empty()) {
    int64_t messages = 0, rows = 0;
    try {
      auto reader = tzrec::parquet::FileReader::open(produce);
      const tzrec::parquet::Table table = reader->read();
      const tzrec::arrow::ArrowBatch all = tzrec::arrow::batch_of_table(table);
      const tzrec::arrow::ArrowSchema schema = tzrec::arrow::schema_of(all);
      for (int64_t begin = 0; begin < table.num_rows; begin += rows_per_message, ++messages) {
        const int64_t end = std::min(table.num_rows, begin + rows_per_message);
        const tzrec::arrow::ArrowBatch batch = tzrec::arrow::slice_batch(all, begin, end);
        const std::string payload = format == "stream"
                                        ? tzrec::arrow::write_ipc_stream(schema, {batch}, write)
                                        : tzrec::arrow::write_record_batch_message(schema, batch, write);
        cluster->produce(static_cast<int32_t>(messages % partitions), payload, first_ts + messages * ts_step);
        rows += end - begin;
        if (hold_after >= 0 && rows >= hold_after && !released) {
          cluster->flush();
          std::printf("holding after %lld rows\n", static_cast<long long>(rows));
          std::fflush(stdout);
          while (!released && !stop_requested) ::usleep(50000);
          if (stop_requested) return 0;
        }
      }
      cluster->flush();
    } catch (const std::exception& e) {
      die(e.what());
    }
    std::printf("produced %lld messages %lld rows\n", static_cast<long long>(messages), static_cast<long long>(rows));
    std::fflush(stdout);
  }

  while (!stop_requested) ::usleep(100000);
  return 0;
}
