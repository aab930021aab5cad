// Reading Arrow IPC messages (the Arrow columnar format's "encapsulated message format") without
// an Arrow dependency, as TorchEasyRec's KafkaDataset reads Kafka messages:
//   - a schema-less record batch message (pyarrow RecordBatch.serialize(), read there with
//     pa.ipc.read_record_batch(message, schema)): one RecordBatch message decoded against a
//     schema the caller gives (read_record_batch_message);
//   - an Arrow IPC stream (pyarrow ipc.new_stream, read there with pa.ipc.open_stream): a Schema
//     message, record batch messages, then optionally the end-of-stream marker
//     (read_ipc_stream; TorchEasyRec uses the first batch).
//
// Message framing: 0xFFFFFFFF, int32 metadata length, a flatbuffer Message padded to 8 bytes,
// then the body (bodyLength bytes); the legacy framing without the 0xFFFFFFFF marker (before
// Arrow 0.15) is accepted too. Metadata versions V4 and V5 are read. Bytes after the message
// (read_record_batch_message) or after the end-of-stream marker are ignored, as pyarrow does.
// Bodies compressed with LZ4_FRAME or ZSTD (BodyCompression) are decompressed. Dictionary batch
// messages of a stream are skipped (dictionary-encoded columns are not supported).
//
// Columns are decoded into the engine's columnar form (batch.h: the types, how they are widened
// and which ones are refused). A column whose type is not supported throws NotSupportedError
// when it is read; ReadOptions::columns limits the read to the columns the caller needs, so that
// other columns of any type (which a producer may have added) are skipped.
//
// Errors: malformed input (truncated data, lengths or offsets out of range, offsets that
// decrease, buffers too short for their array, a message of the wrong type, an unknown metadata
// version, a schema whose columns do not match the batch) throws one DataError line that starts
// with `context` (e.g. "topic t partition 3 offset 17") and names the column and what is wrong.
// No input makes the reader read out of bounds, loop without end, or allocate more than the input
// can hold (declared uncompressed sizes are checked against what their codec can produce).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arrow/batch.h"
#include "arrow/ipc_schema.h"

namespace tzrec::arrow {

struct ReadOptions {
  // Names of the top-level columns to decode, empty for all. The others are skipped (their types
  // need not be supported); names the schema lacks are ignored (see compare_schemas()).
  std::vector<std::string> columns;
};

struct ArrowStream {
  ArrowSchema schema;
  std::vector<ArrowBatch> batches;  // in stream order (possibly none)
  bool has_end_marker = false;      // the stream ended with the end-of-stream marker
};

// Decodes one schema-less record batch message against `schema` (whose fields must be those the
// producer wrote, in its order: a batch whose field nodes or buffers do not match it is refused).
ArrowBatch read_record_batch_message(std::string_view bytes, const ArrowSchema& schema,
                                     const std::string& context, const ReadOptions& options = {});

// Decodes an Arrow IPC stream: its schema and every record batch.
ArrowStream read_ipc_stream(std::string_view bytes, const std::string& context,
                            const ReadOptions& options = {});

// The schema of an Arrow IPC stream (its first message), without decoding any batch.
ArrowSchema read_stream_schema(std::string_view bytes, const std::string& context);

}  // namespace tzrec::arrow
