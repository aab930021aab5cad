// KafkaDataset benchmark: rows per second from Kafka messages to training batches (fetch, Arrow
// decode, batch assembly and feature generation) against librdkafka's mock cluster, next to the
// same rows read from Parquet by ParquetDataset.
//
// Writes the config's data once with gen_data (--rows rows, into --data_dir), produces it as
// Arrow IPC stream messages of --rows_per_message rows over --partitions partitions of an
// in-process mock cluster (not timed), then with --threads loader workers reads all of it
// --repeat times through each dataset (alternating; a fresh consumer group each time) and
// reports the best rows/s of each. librdkafka's mock broker keeps only a few MB per partition
// (older messages are deleted), hence the many partitions by default.
//
//   build/tzrec_kafka_throughput_bench --rows 400000 --threads 2
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <string>

#include "arrow/batch.h"
#include "arrow/ipc_writer.h"
#include "base/error.h"
#include "config/pipeline_config.h"
#include "data/kafka_mock_cluster.h"
#include "generated_data.h"
#include "feature/batch_loader.h"
#include "parquet/file_reader.h"

namespace {

using namespace tzrec;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Rows/s of reading `batches` batches (a stream has no end) or all of a file (batches < 0).
double rows_per_second(const protos::EasyRecConfig& config, const std::string& path, int64_t batches) {
  const auto t0 = std::chrono::steady_clock::now();
  int64_t rows = 0, n = 0;
  {
    feature::BatchLoader loader(config, path, feature::Mode::kTrain);
    while (batches < 0 || n < batches) {
      auto b = loader.next();
      if (!b) break;
      rows += b->batch.batch_size;
      ++n;
    }
  }
  return static_cast<double>(rows) / seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("tzrec KafkaDataset benchmark (mock cluster messages -> training batches)");
  std::string config_path = "examples/deepfm_criteo_synth.config";
  int64_t rows = 400000, rows_per_message = 1024;
  int threads = 2, partitions = 32, repeat = 3;
  std::string data_dir = "/tmp/tzrec_kafka_bench";
  app.add_option("--pipeline_config_path", config_path, "config whose features are generated")->capture_default_str();
  app.add_option("--rows", rows, "rows of the generated data")->capture_default_str();
  app.add_option("--rows_per_message", rows_per_message, "rows per Kafka message")->capture_default_str();
  app.add_option("--partitions", partitions, "partitions of the topic")->capture_default_str();
  app.add_option("--threads", threads, "loader workers (data_config.num_workers)")->capture_default_str();
  app.add_option("--repeat", repeat, "runs per dataset (best is reported)")->capture_default_str();
  app.add_option("--data_dir", data_dir, "where the generated data is kept")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    const bench::GeneratedData generated = bench::generated_data(config_path, data_dir, rows);
    const std::string& data_path = generated.data_path;
    protos::EasyRecConfig parquet_config = config::load_pipeline_config(generated.config_path);
    parquet_config.mutable_data_config()->set_num_workers(static_cast<uint32_t>(threads));
    const int64_t batch_size = parquet_config.data_config().batch_size();

    // The file's rows as messages, partition i % P for message i.
    data::KafkaMockCluster cluster("bench", partitions);
    auto reader = parquet::FileReader::open(data_path);
    const arrow::ArrowBatch all = arrow::batch_of_table(reader->read());
    const arrow::ArrowSchema schema = arrow::schema_of(all);
    const auto t0 = std::chrono::steady_clock::now();
    int64_t messages = 0;
    for (int64_t begin = 0; begin < all.num_rows; begin += rows_per_message, ++messages) {
      const int64_t end = std::min(all.num_rows, begin + rows_per_message);
      cluster.produce(static_cast<int32_t>(messages % partitions),
                      arrow::write_ipc_stream(schema, {arrow::slice_batch(all, begin, end)}));
    }
    cluster.flush();
    fmt::print("{}: {} rows as {} messages over {} partitions in {:.1f} s; {} loader threads, batch {}, "
               "best of {}\n",
               config_path, all.num_rows, messages, partitions, seconds_since(t0), threads, batch_size, repeat);

    // Whole batches every worker can fill (the round-robin takes one batch per worker in turn).
    const int64_t batches = all.num_rows / batch_size / threads * threads;
    double kafka = 0, parquet = 0;
    for (int r = 0; r < repeat; ++r) {
      protos::EasyRecConfig kafka_config = parquet_config;
      kafka_config.mutable_data_config()->set_dataset_type(protos::KafkaDataset);
      const std::string uri = fmt::format("kafka://{}/bench?group.id=bench-{}&auto.offset.reset=earliest",
                                          cluster.bootstrap(), r);
      kafka = std::max(kafka, rows_per_second(kafka_config, uri, batches));
      parquet = std::max(parquet, rows_per_second(parquet_config, data_path, batches));
    }
    fmt::print("{:<16} {:>12}\n", "dataset", "rows/s");
    fmt::print("{:<16} {:>12.0f}\n", "KafkaDataset", kafka);
    fmt::print("{:<16} {:>12.0f}\n", "ParquetDataset", parquet);
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
