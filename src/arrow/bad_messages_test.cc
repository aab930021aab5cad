// Malformed and unsupported Arrow messages give one line of error (DataError, or
// NotSupportedError for types not read yet) that starts with the caller's context and names the
// column and what is wrong — never a crash, a hang or a huge allocation.
#include <functional>
#include <random>

#include <gtest/gtest.h>

#include "arrow/ipc_reader.h"
#include "arrow/ipc_writer.h"
#include "arrow/testing_util.h"
#include "base/error.h"
#include "parquet/writer.h"

namespace tzrec::arrow {
namespace bad_messages_test {

using parquet::ColumnBuilder;
using testing::peek;
using testing::poke;

const std::string kContext = "topic t partition 3 offset 17";
const std::string kPrefix = kContext + ": Arrow record batch message: ";

ArrowType t(TypeId id) { return ArrowType(id); }

ArrowSchema schema() {
  ArrowSchema s;
  s.fields.emplace_back("id", t(TypeId::kInt64));
  s.fields.emplace_back("tags", ArrowType::list(t(TypeId::kInt64)));
  s.fields.emplace_back("name", t(TypeId::kUtf8));
  return s;
}

// 20 rows; id null in rows 3 and 13; tags: [r, r + 1] (row 5: null); name "n<r>".
ArrowBatch batch(int64_t rows = 20) {
  ArrowBatch b;
  b.num_rows = rows;
  b.columns = empty_columns(schema());
  ColumnBuilder id(b.columns[0].values.descriptor);
  ColumnBuilder tags(b.columns[1].values.descriptor);
  ColumnBuilder name(b.columns[2].values.descriptor);
  for (int64_t r = 0; r < rows; ++r) {
    if (r % 10 == 3) {
      id.append_null();
    } else {
      id.append<int64_t>(r);
    }
    if (r == 5) {
      tags.append_null_list();
    } else {
      tags.begin_list();
      tags.append<int64_t>(r);
      tags.append<int64_t>(r + 1);
      tags.end_list();
    }
    name.append_string("n" + std::to_string(r));
  }
  b.columns[0].values = id.finish();
  b.columns[1].values = tags.finish();
  b.columns[2].values = name.finish();
  return b;
}

std::string message(BodyCodec codec = BodyCodec::kNone) {
  WriteOptions options;
  options.compression = codec;
  return write_record_batch_message(schema(), batch(), options);
}

// Buffers of the message: 0 id validity, 1 id values, 2 tags validity, 3 tags offsets, 4 element
// validity, 5 elements, 6 name validity, 7 name offsets, 8 name data. Nodes: id, tags, element,
// name.
size_t buffer_offset(const std::string& m, int i) {
  const testing::MessageLayout l = testing::layout_of(m);
  return l.body + static_cast<size_t>(peek<int64_t>(m, l.buffers[static_cast<size_t>(i)]));
}

template <typename E = DataError>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error";
  return "";
}

std::string read_error(const std::string& m, const ArrowSchema& s = schema()) {
  return error_of([&] { read_record_batch_message(m, s, kContext); });
}

TEST(BadMessagesTest, TheUntouchedMessageReads) {
  const ArrowBatch b = read_record_batch_message(message(), schema(), kContext);
  testing::expect_same_batch(b, batch(), "message");
}

TEST(BadMessagesTest, TruncatedMessages) {
  const std::string m = message();
  const size_t body = testing::layout_of(m).body;
  EXPECT_EQ(read_error(m.substr(0, m.size() - 8)),
            kPrefix + fmt::format("body length {} runs past the end of the data ({} bytes left)",
                                  m.size() - body, m.size() - body - 8));
  EXPECT_EQ(read_error(m.substr(0, 6)),
            kPrefix + "truncated: 6 byte(s) left where a message starts");
  EXPECT_EQ(
      read_error(m.substr(0, 40)),
      kPrefix + fmt::format("metadata length {} runs past the end of the data (32 bytes left)",
                            body - 8));
  EXPECT_EQ(read_error(""), kPrefix + "empty message (no Arrow data)");
  // Every truncation is refused cleanly.
  for (size_t n = 0; n < m.size(); ++n) {
    error_of([&] { read_record_batch_message(m.substr(0, n), schema(), kContext); });
  }
}

TEST(BadMessagesTest, MetadataLengthBeyondTheData) {
  std::string m = message();
  poke<int32_t>(&m, 4, 1 << 20);
  EXPECT_EQ(read_error(m),
            kPrefix + fmt::format("metadata length 1048576 runs past the end of the data ({} bytes "
                                  "left)",
                                  m.size() - 8));
  poke<int32_t>(&m, 4, -8);
  EXPECT_EQ(read_error(m), kPrefix + "negative metadata length -8");
  // Legacy framing (no continuation marker) with a bad length.
  EXPECT_EQ(read_error(std::string("\x10\x00\x00\x00\x00\x00\x00\x00", 8)),
            kPrefix + "metadata length 16 runs past the end of the data (4 bytes left)");
}

TEST(BadMessagesTest, MalformedFlatbuffer) {
  std::string m = message();
  poke<uint32_t>(&m, 8, 1u << 30);  // the root table offset
  EXPECT_EQ(
      read_error(m).rfind(
          kPrefix + "malformed Message metadata: flatbuffer offset at byte 0 points to byte", 0),
      0u);
}

TEST(BadMessagesTest, UnknownMetadataVersion) {
  std::string m = message();
  const size_t version = testing::layout_of(m).version;
  ASSERT_GT(version, 0u);
  poke<int16_t>(&m, version, 7);
  EXPECT_EQ(read_error(m), kPrefix + "unknown metadata version 7 (V4 and V5 are read)");
  poke<int16_t>(&m, version, 2);
  EXPECT_EQ(read_error(m), kPrefix + "metadata version V3 is not supported (V4 and V5 are)");
  poke<int16_t>(&m, version, 3);  // V4 reads like V5
  testing::expect_same_batch(read_record_batch_message(m, schema(), kContext), batch(), "V4");
}

TEST(BadMessagesTest, OffsetsThatDecrease) {
  std::string m = message();
  const size_t offsets = buffer_offset(m, 3);
  poke<int32_t>(&m, offsets + 4 * 2, 1);  // offsets 0, 2, 1, ...
  EXPECT_EQ(read_error(m), kPrefix + "column 'tags': list offsets decrease at value 1 (2 -> 1)");
  m = message();
  const size_t name_offsets = buffer_offset(m, 7);
  poke<int32_t>(&m, name_offsets + 4 * 1, 100);
  EXPECT_EQ(read_error(m),
            kPrefix + "column 'name': values offsets decrease at value 1 (100 -> 4)");
  m = message();
  poke<int32_t>(&m, buffer_offset(m, 3), -1);
  EXPECT_EQ(read_error(m), kPrefix + "column 'tags': list offsets start at -1");
}

TEST(BadMessagesTest, ListOffsetsPastTheChildArray) {
  std::string m = message();
  const size_t offsets = buffer_offset(m, 3);
  poke<int32_t>(&m, offsets + 4 * 20, 1000);
  EXPECT_EQ(read_error(m),
            kPrefix +
                "column 'tags': list offsets reach 1000 but the list's values array has 38 "
                "values");
  m = message();
  poke<int32_t>(&m, buffer_offset(m, 7) + 4 * 20, 5000);
  EXPECT_EQ(read_error(m).rfind(
                kPrefix + "column 'name': values offsets reach 5000 but the data buffer has", 0),
            0u);
}

TEST(BadMessagesTest, BuffersTooShortForTheirArray) {
  std::string m = message();
  const testing::MessageLayout l = testing::layout_of(m);
  poke<int64_t>(&m, l.buffers[0] + 8, 1);  // id validity: 1 byte for 20 values
  EXPECT_EQ(read_error(m),
            kPrefix + "column 'id': values validity bitmap of 1 bytes is too short for 20 values");
  poke<int64_t>(&m, l.buffers[0] + 8, 0);
  EXPECT_EQ(read_error(m),
            kPrefix + "column 'id': values array has 2 null(s) but no validity bitmap");
  m = message();
  poke<int64_t>(&m, l.buffers[1] + 8, 8);
  EXPECT_EQ(read_error(m),
            kPrefix + "column 'id': values buffer of 8 bytes is too short for 20 int64 values");
  m = message();
  poke<int64_t>(&m, l.buffers[3] + 8, 12);
  EXPECT_EQ(read_error(m),
            kPrefix +
                "column 'tags': list offsets buffer of 12 bytes is too short for 20 values (21 "
                "offsets of 4 bytes)");
  m = message();
  poke<int64_t>(&m, l.buffers[1], int64_t{1} << 40);
  EXPECT_EQ(read_error(m),
            kPrefix + fmt::format("column 'id': buffer 1 (offset 1099511627776, 160 bytes) lies "
                                  "outside the message body ({} bytes)",
                                  m.size() - l.body));
}

TEST(BadMessagesTest, FieldNodesThatContradictTheBatch) {
  std::string m = message();
  const testing::MessageLayout l = testing::layout_of(m);
  poke<int64_t>(&m, l.nodes[0], 21);
  EXPECT_EQ(read_error(m),
            kPrefix + "column 'id': its array has 21 values but the record batch has 20 rows");
  m = message();
  poke<int64_t>(&m, l.nodes[0] + 8, 50);
  EXPECT_EQ(read_error(m), kPrefix + "column 'id': values array of 20 values has null_count 50");
  m = message();
  poke<int64_t>(&m, l.nodes[2], 5);  // the elements array: 5 values, offsets reach 38
  EXPECT_EQ(
      read_error(m),
      kPrefix + "column 'tags': list offsets reach 38 but the list's values array has 5 values");
}

TEST(BadMessagesTest, SchemaWithOtherColumnsThanTheMessage) {
  const std::string m = message();
  ArrowSchema fewer = schema();
  fewer.fields.pop_back();
  EXPECT_EQ(read_error(m, fewer),
            kPrefix +
                "the record batch has 4 field nodes and 9 buffers, but the schema (2 column(s): "
                "id: int64, tags: "
                "list<int64>) describes 3 and 6: the message was written with another schema");
  ArrowSchema more = schema();
  more.fields.emplace_back("extra", t(TypeId::kFloat32));
  EXPECT_EQ(read_error(m, more), kPrefix +
                                     "the record batch has 4 field nodes and 9 buffers, but the "
                                     "schema (4 column(s): id: int64, tags: "
                                     "list<int64>, name: string, extra: float) describes 5 and 11: "
                                     "the message was written with "
                                     "another schema");
  // The same counts but another type: values that do not fit are caught by the buffer checks.
  ArrowSchema retyped = schema();
  retyped.fields[0].type = t(TypeId::kUtf8);
  EXPECT_EQ(
      read_error(m, retyped).rfind(kPrefix + "the record batch has 4 field nodes and 9 buffers", 0),
      0u);
  ArrowSchema not_null = schema();
  not_null.fields[0].nullable = false;
  EXPECT_EQ(read_error(m, not_null),
            kPrefix + "column 'id': values: slot 3 is null but the field is not nullable");
  not_null = schema();
  not_null.fields[1].nullable = false;
  EXPECT_EQ(read_error(m, not_null),
            kPrefix + "column 'tags': list: slot 5 is null but the field is not nullable");
}

TEST(BadMessagesTest, WrongMessageTypes) {
  const std::string schema_message = write_schema_message(schema());
  EXPECT_EQ(read_error(schema_message), kPrefix +
                                            "the message is a Schema message, not a record batch: "
                                            "is it an Arrow IPC stream (read with the "
                                            "schema it carries)?");
  const std::string stream = write_ipc_stream(schema(), {batch()});
  EXPECT_EQ(read_error(stream), read_error(schema_message));
  EXPECT_EQ(read_error(end_of_stream_marker()),
            kPrefix + "the message is an end-of-stream marker, not a record batch");
  const std::string stream_prefix = kContext + ": Arrow IPC stream, message 0 (byte 0): ";
  EXPECT_EQ(
      error_of([&] { read_ipc_stream(message(), kContext); }),
      stream_prefix +
          "the stream starts with a RecordBatch message, not a Schema: is it a schema-less record "
          "batch message (which needs the schema from input_fields)?");
  EXPECT_EQ(error_of([&] { read_ipc_stream(end_of_stream_marker(), kContext); }),
            stream_prefix + "the stream ends before its schema");
  EXPECT_EQ(
      error_of([&] { read_ipc_stream(schema_message + schema_message, kContext); }),
      kContext + fmt::format(": Arrow IPC stream, message 1 (byte {}): a second Schema message",
                             schema_message.size()));
  // A stream cut inside its second message.
  EXPECT_EQ(
      error_of([&] { read_ipc_stream(stream.substr(0, schema_message.size() + 20), kContext); })
          .rfind(kContext + fmt::format(": Arrow IPC stream, message 1 (byte {}): metadata length",
                                        schema_message.size()),
                 0),
      0u);
}

TEST(BadMessagesTest, UnsupportedTypesAreNamed) {
  const std::string m = message();
  ArrowSchema s = schema();
  ArrowType st(TypeId::kStruct);
  st.children.emplace_back("a", t(TypeId::kInt64));
  s.fields[0].type = st;
  EXPECT_EQ(error_of<NotSupportedError>([&] { read_record_batch_message(m, s, kContext); }),
            "not supported yet: Arrow type struct<a: int64> of column 'id' (" + kContext + ")");
  ArrowType dict(TypeId::kDictionary);
  dict.detail = "int32";
  dict.children.emplace_back("values", t(TypeId::kUtf8));
  s = schema();
  s.fields[2].type = dict;
  EXPECT_EQ(
      error_of<NotSupportedError>([&] { read_record_batch_message(m, s, kContext); }),
      "not supported yet: Arrow type dictionary<values=string, indices=int32> of column 'name' (" +
          kContext + ")");
  // Not read: skipped (a dictionary-encoded column takes one node and two buffers, like int64).
  ReadOptions options;
  options.columns = {"id", "tags"};
  s = schema();
  s.fields[2].type = dict;
  ArrowSchema s2 = schema();
  s2.fields[2].type = t(TypeId::kInt64);
  const std::string m2 = [&] {
    ArrowBatch b = batch();
    ColumnBuilder ids(empty_columns(s2)[2].values.descriptor);
    for (int64_t r = 0; r < b.num_rows; ++r) ids.append<int64_t>(r % 2);
    b.columns[2].values = ids.finish();
    return write_record_batch_message(s2, b);
  }();
  const ArrowBatch got = read_record_batch_message(m2, s, kContext, options);
  ASSERT_EQ(got.columns.size(), 2u);
  EXPECT_EQ(got.columns[1].name, "tags");
  s.big_endian = true;
  EXPECT_EQ(error_of<NotSupportedError>([&] { read_record_batch_message(m2, s, kContext); }),
            "not supported yet: big-endian Arrow data (" + kContext + ")");
}

TEST(BadMessagesTest, CorruptCompressedBuffers) {
  for (BodyCodec codec : {BodyCodec::kZstd, BodyCodec::kLz4Frame}) {
    SCOPED_TRACE(to_string(codec));
    // 300 rows so that the id values buffer (buffer 1) compresses.
    WriteOptions options;
    options.compression = codec;
    const std::string good = write_record_batch_message(schema(), batch(300), options);
    const testing::MessageLayout l = testing::layout_of(good);
    const size_t values = l.body + static_cast<size_t>(peek<int64_t>(good, l.buffers[1]));
    const int64_t stored = peek<int64_t>(good, l.buffers[1] + 8);
    ASSERT_EQ(peek<int64_t>(good, values), 2400) << "the values buffer is not compressed";
    std::string m = good;
    poke<int64_t>(&m, values, int64_t{1} << 50);
    EXPECT_EQ(error_of([&] { read_record_batch_message(m, schema(), kContext); }),
              kPrefix + fmt::format("column 'id': compressed buffer 1 claims 1125899906842624 "
                                    "uncompressed bytes from {} "
                                    "{} bytes, more than the codec can produce",
                                    stored - 8, to_string(codec)));
    m = good;
    poke<int64_t>(&m, values, 2000);
    EXPECT_EQ(
        error_of([&] { read_record_batch_message(m, schema(), kContext); })
            .rfind(kPrefix + fmt::format("column 'id': compressed buffer 1: {}", to_string(codec)),
                   0),
        0u);
    m = good;
    for (size_t i = 12; i < static_cast<size_t>(stored); ++i) {
      m[values + i] = static_cast<char>(m[values + i] ^ 0x5a);
    }
    EXPECT_EQ(
        error_of([&] { read_record_batch_message(m, schema(), kContext); })
            .rfind(kPrefix + fmt::format("column 'id': compressed buffer 1: {}", to_string(codec)),
                   0),
        0u);
    m = good;
    poke<int64_t>(&m, l.buffers[1] + 8, 5);
    EXPECT_EQ(
        error_of([&] { read_record_batch_message(m, schema(), kContext); }),
        kPrefix +
            "column 'id': compressed buffer 1 of 5 bytes is shorter than its 8-byte length prefix");
  }
}

TEST(BadMessagesTest, RandomCorruptionsGiveErrorsOnly) {
  // Byte flips anywhere in messages and streams: a result or a tzrec::Error, nothing else.
  std::mt19937 rng(11);
  for (BodyCodec codec : {BodyCodec::kNone, BodyCodec::kZstd, BodyCodec::kLz4Frame}) {
    WriteOptions options;
    options.compression = codec;
    const std::string m = write_record_batch_message(schema(), batch(40), options);
    const std::string s = write_ipc_stream(schema(), {batch(40), batch(3)}, options);
    for (int iter = 0; iter < 3000; ++iter) {
      const std::string& good = iter % 2 == 0 ? m : s;
      std::string bad = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
      if (rng() % 8 == 0) bad.resize(rng() % bad.size());
      try {
        if (iter % 2 == 0) {
          read_record_batch_message(bad, schema(), kContext);
        } else {
          read_ipc_stream(bad, kContext);
        }
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      }
    }
  }
}

}  // namespace bad_messages_test
}  // namespace tzrec::arrow
