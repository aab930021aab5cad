// One loader worker's share of a KafkaDataset topic (no torch): the partitions assigned to it,
// read from where the read position says (else start.timestamp.ms, else librdkafka's
// committed offset / auto.offset.reset), each message decoded as an Arrow record batch
// (arrow/ipc_reader.h) and the rows cut into batches of batch_size (a message's rows may straddle
// two batches). Each batch carries where its partitions stand after it (SourcedBatch::
// stream_marks: offset of the message the next row is in, rows of it already delivered), so a
// checkpoint resumes exactly: no row is read twice or skipped. The stream never ends; next()
// waits for messages until cancel().
//
// Message formats (docs/tzrec-compatibility.md §6.7), as TorchEasyRec's KafkaDataset:
//   - with data_config.input_fields: schema-less record batch messages decoded with that schema;
//   - without: Arrow IPC streams carrying their schema; the first batch of each message is read.
//     The first message fixes the types of the columns read; later messages may add or reorder
//     columns, but a column that is missing or has another type is an error.
// Rows are described in errors as "topic <t> partition <p> offset <o>". A message that cannot be
// decoded is a DataError naming them, or with malformed.messages=skip (KafkaUri) a warning with
// the count of messages skipped so far, and the message is not trained (the read position moves
// past it with the partition's next message).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrow/batch.h"
#include "arrow/ipc_schema.h"
#include "data/batch_source.h"
#include "data/kafka_consumer.h"
#include "data/kafka_uri.h"
#include "data/read_position.h"

namespace tzrec::data {

struct KafkaSourceOptions {
  KafkaUri uri;
  std::vector<std::string> columns;                // delivered in this order
  std::optional<arrow::ArrowSchema> input_schema;  // schema-less messages
  int64_t batch_size = 1;
};

class KafkaBatchSource : public BatchSource {
 public:
  // Reads `partitions` of the topic with `consumer` (created for this worker; `who` names it in
  // logs), starting where `start` says.
  KafkaBatchSource(KafkaSourceOptions options, std::unique_ptr<KafkaConsumer> consumer,
                   std::vector<int32_t> partitions, const ReadPosition& start, std::string who);

  std::optional<SourcedBatch> next() override;
  void cancel() override { cancelled_ = true; }
  // Messages skipped as malformed (malformed.messages=skip) by this source.
  int64_t skipped_messages() const { return skipped_; }

 private:
  struct PendingMessage {
    arrow::ArrowBatch batch;
    int32_t partition = 0;
    int64_t offset = 0;
    int64_t next_row = 0;  // first row not yet delivered
    double timestamp_s = -1.0;
  };

  arrow::ArrowBatch decode(const KafkaMessage& message, const std::string& context);
  SourcedBatch take_batch();

  KafkaSourceOptions options_;
  std::unique_ptr<KafkaConsumer> consumer_;
  std::vector<int32_t> partitions_;
  std::string who_;
  std::atomic<bool> cancelled_{false};
  // Where resumed partitions stood (until their first message is read): rows of a partly
  // consumed message are skipped, a message the broker no longer has is an error.
  std::map<int32_t, PartitionPosition> resumed_;
  std::deque<PendingMessage> pending_;
  int64_t pending_rows_ = 0;
  // Embedded-schema messages: the schema of the first message (the reader's contract).
  std::optional<arrow::ArrowSchema> stream_schema_;
  int64_t skipped_ = 0;
  std::chrono::steady_clock::time_point last_message_;
  std::chrono::steady_clock::time_point last_wait_log_;
};

}  // namespace tzrec::data
