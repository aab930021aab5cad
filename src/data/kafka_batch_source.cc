#include "data/kafka_batch_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "arrow/ipc_reader.h"
#include "base/error.h"
#include "base/logging.h"
#include "base/stop_signal.h"
#include "parquet/column_slice.h"

namespace tzrec::data {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPollInterval(200);
constexpr std::chrono::seconds kWaitLogInterval(60);

// Rows [begin, end) of `src` appended to the column being built (created by the first slice).
void append_slice(const parquet::ColumnData& src, int64_t begin, int64_t end,
                  std::optional<parquet::ColumnData>* dst) {
  if (!dst->has_value()) {
    *dst = parquet::slice_rows(src, begin, end);
  } else {
    parquet::append_rows(src, begin, end, &**dst);
  }
}

}  // namespace

KafkaBatchSource::KafkaBatchSource(KafkaSourceOptions options,
                                   std::unique_ptr<KafkaConsumer> consumer,
                                   std::vector<int32_t> partitions, const ReadPosition& start,
                                   std::string who)
    : options_(std::move(options)),
      consumer_(std::move(consumer)),
      partitions_(std::move(partitions)),
      who_(std::move(who)) {
  std::map<int32_t, int64_t> offsets;
  std::vector<int32_t> by_time;
  for (int32_t p : partitions_) {
    if (const PartitionPosition* pos = start.partition_position(p)) {
      offsets[p] = pos->offset;
      resumed_[p] = *pos;
    } else if (options_.uri.start_timestamp_ms) {
      by_time.push_back(p);
    } else {
      offsets[p] = KafkaConsumer::kOffsetDefault;
    }
  }
  if (!by_time.empty()) {
    for (const auto& [p, offset] : consumer_->offsets_for_time(by_time, *options_.uri.start_timestamp_ms)) {
      offsets[p] = offset;
    }
  }
  consumer_->assign(offsets);
  log::info("{} ({}): reading partitions [{}] of topic '{}'", options_.uri.uri, who_,
            fmt::join(partitions_, ", "), options_.uri.topic);
  last_message_ = last_wait_log_ = Clock::now();
}

arrow::ArrowBatch KafkaBatchSource::decode(const KafkaMessage& message, const std::string& context) {
  arrow::ReadOptions read;
  read.columns = options_.columns;
  if (options_.input_schema) {
    return arrow::read_record_batch_message(message.payload(), *options_.input_schema, context, read);
  }
  arrow::ArrowStream stream = arrow::read_ipc_stream(message.payload(), context, read);
  if (!stream_schema_) {
    const std::vector<std::string> missing = stream.schema.missing(options_.columns);
    if (!missing.empty()) {
      throw DataError(fmt::format(
          "{}: the message has no column(s) [{}] that the config reads (its columns: [{}]); "
          "produce them, or give their types in data_config.input_fields",
          context, fmt::join(missing, ", "), fmt::join(stream.schema.names(), ", ")));
    }
    arrow::ArrowSchema contract;
    for (const auto& c : options_.columns) {
      contract.fields.push_back(stream.schema.fields[static_cast<size_t>(stream.schema.find(c))]);
    }
    stream_schema_ = std::move(contract);
  } else {
    const arrow::SchemaDiff diff = arrow::compare_schemas(*stream_schema_, stream.schema);
    if (!diff.compatible()) {
      throw DataError(fmt::format(
          "{}: the message's schema is incompatible with the columns read so far: {} (message "
          "columns: [{}]); columns may be added or reordered upstream, not removed or retyped",
          context, diff.to_string(), fmt::join(stream.schema.names(), ", ")));
    }
  }
  if (stream.batches.empty()) {
    arrow::ArrowBatch empty;
    empty.columns = arrow::empty_columns(*stream_schema_);
    return empty;
  }
  return std::move(stream.batches.front());
}

std::optional<SourcedBatch> KafkaBatchSource::next() {
  while (pending_rows_ < options_.batch_size) {
    // A stop request (SIGTERM) ends the wait: the trainer saves where it is.
    if (cancelled_ || stop_requested()) return std::nullopt;
    std::unique_ptr<KafkaMessage> message = consumer_->poll(kPollInterval);
    if (!message) {
      const auto now = Clock::now();
      if (now - last_message_ > kWaitLogInterval && now - last_wait_log_ > kWaitLogInterval) {
        last_wait_log_ = now;
        log::info("{} ({}): waiting for messages on partitions [{}] ({} of {} rows of the next "
                  "batch read)",
                  options_.uri.uri, who_, fmt::join(partitions_, ", "), pending_rows_,
                  options_.batch_size);
      }
      continue;
    }
    last_message_ = Clock::now();
    const std::string context = fmt::format("topic {} partition {} offset {}", options_.uri.topic,
                                            message->partition(), message->offset());
    PendingMessage m;
    try {
      m.batch = decode(*message, context);
    } catch (const DataError& e) {
      if (!options_.uri.skip_malformed) throw;
      ++skipped_;
      log::warning("{} ({}): skipped a malformed message ({} skipped so far; malformed.messages=skip): {}",
                   options_.uri.uri, who_, skipped_, e.what());
      // A resumed partition whose saved position is this very message starts after it.
      if (auto it = resumed_.find(message->partition());
          it != resumed_.end() && it->second.offset == message->offset() && it->second.rows == 0) {
        resumed_.erase(it);
      }
      continue;
    }
    m.partition = message->partition();
    m.offset = message->offset();
    const int64_t ts = message->timestamp_ms();
    m.timestamp_s = ts >= 0 ? static_cast<double>(ts) / 1000.0 : -1.0;
    if (auto it = resumed_.find(m.partition); it != resumed_.end()) {
      // The first message read of a partition resumed from a checkpoint's position.
      const PartitionPosition& saved = it->second;
      if (saved.offset == m.offset) {
        if (saved.rows > m.batch.num_rows) {
          throw DataError(fmt::format(
              "{}: the read position says {} of its rows were consumed, but it has {}; the topic "
              "is not the one the checkpoint was written for",
              context, saved.rows, m.batch.num_rows));
        }
        m.next_row = saved.rows;
      } else if (saved.rows > 0) {
        throw DataError(fmt::format(
            "{}: the checkpoint resumes inside the message at offset {} of partition {}, which "
            "the broker no longer has (retention?); its remaining rows and the messages before "
            "offset {} cannot be trained",
            context, saved.offset, m.partition, m.offset));
      } else if (m.offset > saved.offset) {
        log::warning("{}: partition {} resumes at offset {} but the checkpoint's position is "
                     "offset {}: the messages in between are no longer on the broker (retention) "
                     "or were not records",
                     options_.uri.uri, m.partition, m.offset, saved.offset);
      }
      resumed_.erase(it);
    }
    pending_rows_ += m.batch.num_rows - m.next_row;
    pending_.push_back(std::move(m));
  }
  return take_batch();
}

SourcedBatch KafkaBatchSource::take_batch() {
  // The messages (and row ranges of them) that make the batch.
  struct Piece {
    PendingMessage* message;
    int64_t begin, end;
  };
  std::vector<Piece> pieces;
  int64_t need = options_.batch_size;
  for (auto& m : pending_) {
    if (need == 0) break;
    const int64_t take = std::min(need, m.batch.num_rows - m.next_row);
    pieces.push_back(Piece{&m, m.next_row, m.next_row + take});
    need -= take;
  }
  SourcedBatch out;
  RecordBatch& records = out.records;
  records.origin_unit = "offset";
  std::map<int32_t, int32_t> file_of_partition;
  for (const auto& piece : pieces) {
    const int32_t p = piece.message->partition;
    if (file_of_partition.emplace(p, static_cast<int32_t>(records.files.size())).second) {
      records.files.push_back(fmt::format("topic {} partition {}", options_.uri.topic, p));
      out.file_ids.push_back(0);
    }
    for (int64_t r = piece.begin; r < piece.end; ++r) {
      records.origins.push_back(RowOrigin{file_of_partition[p], piece.message->offset});
    }
    out.data_timestamp = std::max(out.data_timestamp, piece.message->timestamp_s);
  }
  for (const auto& name : options_.columns) {
    std::optional<parquet::ColumnData> values, map_values;
    for (const auto& piece : pieces) {
      const arrow::ArrowColumn* c = piece.message->batch.find(name);
      if (c == nullptr) {
        throw DataError(fmt::format("topic {} partition {} offset {}: no column '{}'",
                                    options_.uri.topic, piece.message->partition,
                                    piece.message->offset, name));
      }
      append_slice(c->values, piece.begin, piece.end, &values);
      if (c->map_values) append_slice(*c->map_values, piece.begin, piece.end, &map_values);
    }
    TypedColumn column;
    column.name = name;
    column.values = std::move(*values);
    column.map_values = std::move(map_values);
    records.typed_columns.push_back(std::move(column));
  }
  // Where each partition stands after the batch: its last piece's message, or the next one when
  // that message is used up (pieces are in queue order, so a partition's last piece comes last).
  std::map<int32_t, PartitionPosition> marks;
  for (const auto& piece : pieces) {
    PendingMessage& m = *piece.message;
    m.next_row = piece.end;
    marks[m.partition] = m.next_row >= m.batch.num_rows
                             ? PartitionPosition{m.partition, m.offset + 1, 0}
                             : PartitionPosition{m.partition, m.offset, m.next_row};
  }
  pending_rows_ -= options_.batch_size;
  while (!pending_.empty() && pending_.front().next_row >= pending_.front().batch.num_rows) {
    pending_.pop_front();
  }
  for (const auto& [p, mark] : marks) out.stream_marks.push_back(mark);
  return out;
}

}  // namespace tzrec::data
