// Writing Arrow IPC messages (the inverse of ipc_reader.h), e.g. to produce Kafka messages as
// pyarrow producers do and for tests:
//   - write_ipc_stream: a Schema message, record batch messages, the end-of-stream marker (what
//     pa.ipc.new_stream writes);
//   - write_record_batch_message: one schema-less record batch message (what pyarrow's
//     RecordBatch.serialize() writes).
// Messages use the current framing (0xFFFFFFFF, int32 metadata length), metadata version V5,
// little-endian data, 8-byte aligned buffers padded with zeros and bodies whose length is a
// multiple of 8. Validity bitmaps are written only for arrays that have nulls.
//
// Columns are the batch's ColumnData (batch.h), written as the schema's field types: the
// schema's field i is the batch's column i (same name). Values are narrowed or converted to the
// field's type (INT32 -> int8 / int16 / uint8 / uint16 with a range check, INT32 -> uint32 and
// INT64 -> uint64 bit for bit, INT64 -> uint32 with a range check, FLOAT -> float16 rounded to
// nearest even, BYTE_ARRAY -> string / large_string / binary / large_binary); a column whose
// physical type does not fit its field's type, whose shape differs from it (list levels, map
// values) or whose data is inconsistent (offsets, validity, value sizes) throws DataError naming
// the column. Types that the reader refuses are refused here too (NotSupportedError).
#pragma once

#include <string>
#include <vector>

#include "arrow/batch.h"
#include "arrow/body_compression.h"
#include "arrow/ipc_schema.h"

namespace tzrec::arrow {

struct WriteOptions {
  // Body compression: each buffer compressed on its own (stored uncompressed, with the length
  // prefix -1, where compression does not make it smaller; empty buffers without a prefix).
  BodyCodec compression = BodyCodec::kNone;
};

// The Schema message of `schema`.
std::string write_schema_message(const ArrowSchema& schema);

// One record batch message of `batch`'s columns as `schema`'s fields.
std::string write_record_batch_message(const ArrowSchema& schema, const ArrowBatch& batch,
                                       const WriteOptions& options = {});

// The end-of-stream marker: 0xFFFFFFFF then a zero metadata length.
std::string end_of_stream_marker();

// A complete stream: the Schema message, one record batch message per batch, the end marker.
std::string write_ipc_stream(const ArrowSchema& schema, const std::vector<ArrowBatch>& batches,
                             const WriteOptions& options = {});

}  // namespace tzrec::arrow
