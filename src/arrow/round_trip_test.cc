// Writer -> reader round trips: every supported type, nullable and not, with nulls, empty lists,
// empty strings and null lists, in streams and schema-less messages, uncompressed, ZSTD and
// LZ4_FRAME; and Arrow layouts our writer never produces but others may (null lists with values
// behind them, offsets that do not start at 0).
#include <random>

#include <gtest/gtest.h>

#include "arrow/ipc_reader.h"
#include "arrow/ipc_writer.h"
#include "parquet/column_slice.h"
#include "arrow/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::arrow {
namespace round_trip_test {

using parquet::ColumnBuilder;

ArrowType t(TypeId id) { return ArrowType(id); }

const TypeId kPrimitives[] = {
    TypeId::kBool,   TypeId::kInt8,      TypeId::kInt16,   TypeId::kInt32,
    TypeId::kInt64,  TypeId::kUInt8,     TypeId::kUInt16,  TypeId::kUInt32,
    TypeId::kUInt64, TypeId::kFloat16,   TypeId::kFloat32, TypeId::kFloat64,
    TypeId::kUtf8,   TypeId::kLargeUtf8, TypeId::kBinary,  TypeId::kLargeBinary};

ArrowSchema every_type_schema() {
  ArrowSchema s;
  for (TypeId id : kPrimitives) {
    const std::string n = t(id).to_string();
    s.fields.emplace_back(n, t(id));
    s.fields.emplace_back(n + "_not_null", t(id), false);
    s.fields.emplace_back("list_" + n, ArrowType::list(t(id)));
    s.fields.emplace_back("list_list_" + n, ArrowType::list(ArrowType::list(t(id))));
    s.fields.emplace_back("map_string_" + n, ArrowType::map(t(TypeId::kUtf8), t(id)));
    s.fields.emplace_back("map_" + n + "_int64", ArrowType::map(t(id), t(TypeId::kInt64)));
  }
  s.fields.emplace_back("list_not_null", ArrowType::list(t(TypeId::kInt64), false), false);
  s.fields.emplace_back("large_list",
                        ArrowType::list(ArrowType::list(t(TypeId::kUtf8), true, true), true, true));
  s.fields.emplace_back("list_list_list",
                        ArrowType::list(ArrowType::list(ArrowType::list(t(TypeId::kInt32)))));
  s.fields.emplace_back("map_not_null",
                        ArrowType::map(t(TypeId::kInt32), t(TypeId::kFloat64), false), false);
  return s;
}

class ValueMaker {
 public:
  explicit ValueMaker(uint64_t seed) : rng_(seed) {}

  void append(ColumnBuilder& b, const ArrowType& type, bool nullable, bool key = false) {
    if (nullable && rng_() % 5 == 0) {
      if (type.is_list()) {
        b.append_null_list();
      } else {
        b.append_null();
      }
      return;
    }
    if (type.is_list()) {
      b.begin_list();
      const int n = static_cast<int>(rng_() % 4);
      for (int k = 0; k < n; ++k) append(b, type.element().type, type.element().nullable);
      b.end_list();
      return;
    }
    const uint64_t r = rng_();
    switch (type.id) {
      case TypeId::kBool: b.append(r % 2 == 0); break;
      case TypeId::kInt8: b.append<int32_t>(static_cast<int8_t>(r)); break;
      case TypeId::kInt16: b.append<int32_t>(static_cast<int16_t>(r)); break;
      case TypeId::kUInt8: b.append<int32_t>(static_cast<uint8_t>(r)); break;
      case TypeId::kUInt16: b.append<int32_t>(static_cast<uint16_t>(r)); break;
      case TypeId::kInt32: b.append<int32_t>(static_cast<int32_t>(r)); break;
      case TypeId::kInt64: b.append<int64_t>(static_cast<int64_t>(r)); break;
      case TypeId::kUInt32: b.append<int64_t>(static_cast<int64_t>(r & 0xffffffffu)); break;
      case TypeId::kUInt64: b.append<int64_t>(static_cast<int64_t>(r)); break;
      // Halves of the integers -1000..1000 / 8 are exact in float16.
      case TypeId::kFloat16:
        b.append<float>(static_cast<float>(static_cast<int>(r % 2001) - 1000) / 8.0f);
        break;
      case TypeId::kFloat32:
        b.append<float>(static_cast<float>(static_cast<int64_t>(r % 100000) - 50000) / 7.0f);
        break;
      case TypeId::kFloat64:
        b.append<double>(static_cast<double>(static_cast<int64_t>(r)) / 3.0);
        break;
      default: {
        // Strings and binary: empty sometimes, bytes 0..255 for binary.
        std::string s;
        const size_t n = key ? 1 + r % 6 : r % 7;
        for (size_t i = 0; i < n; ++i) {
          const bool bin = type.id == TypeId::kBinary || type.id == TypeId::kLargeBinary;
          s.push_back(static_cast<char>(bin ? rng_() % 256 : 'a' + rng_() % 26));
        }
        b.append_string(s);
      }
    }
  }

 private:
  std::mt19937_64 rng_;
};

ArrowBatch make_batch(const ArrowSchema& schema, int64_t rows, uint64_t seed) {
  ArrowBatch batch;
  batch.num_rows = rows;
  batch.columns = empty_columns(schema);
  ValueMaker values(seed);
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    const ArrowField& f = schema.fields[i];
    ArrowColumn& col = batch.columns[i];
    if (f.type.id == TypeId::kMap) {
      ColumnBuilder keys(col.values.descriptor);
      ColumnBuilder vals(col.map_values->descriptor);
      std::mt19937 rng(static_cast<uint32_t>(seed + i));
      for (int64_t r = 0; r < rows; ++r) {
        if (f.nullable && rng() % 5 == 0) {
          keys.append_null_list();
          vals.append_null_list();
          continue;
        }
        keys.begin_list();
        vals.begin_list();
        const int n = static_cast<int>(rng() % 4);
        for (int k = 0; k < n; ++k) {
          values.append(keys, f.type.key().type, false, true);
          values.append(vals, f.type.value().type, f.type.value().nullable);
        }
        keys.end_list();
        vals.end_list();
      }
      col.values = keys.finish();
      col.map_values = vals.finish();
    } else {
      ColumnBuilder b(col.values.descriptor);
      for (int64_t r = 0; r < rows; ++r) values.append(b, f.type, f.nullable);
      col.values = b.finish();
    }
  }
  return batch;
}

TEST(RoundTripTest, EveryTypeInStreamsAndMessages) {
  const ArrowSchema schema = every_type_schema();
  const std::vector<ArrowBatch> batches = {make_batch(schema, 200, 1), make_batch(schema, 0, 2),
                                           make_batch(schema, 1, 3), make_batch(schema, 37, 4)};
  for (BodyCodec codec : {BodyCodec::kNone, BodyCodec::kZstd, BodyCodec::kLz4Frame}) {
    SCOPED_TRACE(to_string(codec));
    WriteOptions options;
    options.compression = codec;
    const std::string bytes = write_ipc_stream(schema, batches, options);
    EXPECT_EQ(bytes.size() % 8, 0u);
    const ArrowStream back = read_ipc_stream(bytes, "round trip");
    EXPECT_TRUE(back.has_end_marker);
    EXPECT_EQ(back.schema.to_string(), schema.to_string());
    ASSERT_EQ(back.batches.size(), batches.size());
    for (size_t b = 0; b < batches.size(); ++b) {
      testing::expect_same_batch(back.batches[b], batches[b], "stream batch " + std::to_string(b));
    }
    for (size_t b = 0; b < batches.size(); ++b) {
      const std::string message = write_record_batch_message(schema, batches[b], options);
      EXPECT_EQ(message.size() % 8, 0u);
      testing::expect_same_batch(read_record_batch_message(message, schema, "message"), batches[b],
                                 "message " + std::to_string(b));
    }
  }
}

TEST(RoundTripTest, ParquetTableLeavesBackToColumns) {
  // batch_of_table inverts to_parquet_table for every supported shape (maps: two leaves).
  const ArrowSchema schema = every_type_schema();
  const ArrowBatch batch = make_batch(schema, 23, 7);
  const ArrowBatch back = batch_of_table(to_parquet_table(batch));
  ASSERT_EQ(back.columns.size(), batch.columns.size());
  for (size_t i = 0; i < batch.columns.size(); ++i) EXPECT_EQ(back.columns[i].name, batch.columns[i].name);
  testing::expect_same_batch(back, batch, "batch_of_table(to_parquet_table(batch))");
  // schema_of names the columns' own types (widened ones as read, batch.h): a stream written with
  // it reads back to the same columns. slice_batch cuts every column (maps too) alike.
  const ArrowStream rewritten = read_ipc_stream(write_ipc_stream(schema_of(batch), {batch}), "rewritten");
  ASSERT_EQ(rewritten.batches.size(), 1u);
  testing::expect_same_batch(rewritten.batches[0], batch, "written with schema_of(batch)");
  const ArrowBatch middle = slice_batch(batch, 5, 12);
  EXPECT_EQ(middle.num_rows, 7);
  for (size_t i = 0; i < batch.columns.size(); ++i) {
    testing::expect_same_column(middle.columns[i].values, parquet::slice_rows(batch.columns[i].values, 5, 12),
                                batch.columns[i].name);
    ASSERT_EQ(middle.columns[i].is_map(), batch.columns[i].is_map());
    if (batch.columns[i].is_map()) {
      testing::expect_same_column(*middle.columns[i].map_values,
                                  parquet::slice_rows(*batch.columns[i].map_values, 5, 12), batch.columns[i].name);
    }
  }
  EXPECT_EQ(schema.missing({"nope", schema.fields[0].name, "also_not"}),
            (std::vector<std::string>{"nope", "also_not"}));
}

TEST(RoundTripTest, CompressionShrinksRepetitiveBodies) {
  ArrowSchema schema;
  schema.fields.emplace_back("x", t(TypeId::kInt64));
  ArrowBatch batch;
  batch.num_rows = 10000;
  batch.columns = empty_columns(schema);
  ColumnBuilder b(batch.columns[0].values.descriptor);
  for (int64_t i = 0; i < batch.num_rows; ++i) b.append<int64_t>(i % 3);
  batch.columns[0].values = b.finish();
  const size_t plain = write_record_batch_message(schema, batch).size();
  for (BodyCodec codec : {BodyCodec::kZstd, BodyCodec::kLz4Frame}) {
    WriteOptions options;
    options.compression = codec;
    const std::string packed = write_record_batch_message(schema, batch, options);
    EXPECT_LT(packed.size() * 10, plain) << to_string(codec);
    testing::expect_same_batch(read_record_batch_message(packed, schema, "ctx"), batch,
                               to_string(codec));
  }
}

TEST(RoundTripTest, WriterRefusesDataThatDoesNotFitTheSchema) {
  ArrowSchema schema;
  schema.fields.emplace_back("small", t(TypeId::kInt8));
  ArrowBatch batch;
  batch.num_rows = 1;
  batch.columns = empty_columns(schema);
  ColumnBuilder b(batch.columns[0].values.descriptor);
  b.append<int32_t>(300);
  batch.columns[0].values = b.finish();
  try {
    write_record_batch_message(schema, batch);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(), "Arrow writer: column 'small': value 300 at slot 0 does not fit int8");
  }
  // A column of another physical type.
  ArrowSchema other;
  other.fields.emplace_back("small", t(TypeId::kUtf8));
  try {
    write_record_batch_message(other, batch);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_STREQ(
        e.what(),
        "Arrow writer: column 'small': values are Parquet INT32 values, which cannot be written "
        "as Arrow string");
  }
  // Columns that do not match the schema's fields.
  ArrowSchema two = schema;
  two.fields.emplace_back("y", t(TypeId::kInt64));
  EXPECT_THROW(write_record_batch_message(two, batch), DataError);
  ArrowSchema renamed;
  renamed.fields.emplace_back("other", t(TypeId::kInt8));
  EXPECT_THROW(write_record_batch_message(renamed, batch), DataError);
}

// A list<int64> column written by our writer, with its offsets buffer rewritten.
std::string list_message(const std::vector<std::vector<int64_t>>& rows,
                         const std::vector<bool>& null_rows,
                         const std::vector<int32_t>& new_offsets, const ArrowSchema& schema) {
  ArrowBatch batch;
  batch.num_rows = static_cast<int64_t>(rows.size());
  batch.columns = empty_columns(schema);
  ColumnBuilder b(batch.columns[0].values.descriptor);
  for (size_t r = 0; r < rows.size(); ++r) {
    if (null_rows[r]) {
      b.append_null_list();
      continue;
    }
    b.begin_list();
    for (int64_t v : rows[r]) b.append<int64_t>(v);
    b.end_list();
  }
  batch.columns[0].values = b.finish();
  std::string message = write_record_batch_message(schema, batch);
  const testing::MessageLayout l = testing::layout_of(message);
  const int64_t offsets_at = testing::peek<int64_t>(message, l.buffers[1]);
  for (size_t i = 0; i < new_offsets.size(); ++i) {
    testing::poke<int32_t>(&message, l.body + static_cast<size_t>(offsets_at) + 4 * i,
                           new_offsets[i]);
  }
  return message;
}

TEST(RoundTripTest, NullListsWithValuesBehindThemAndOffsetsPastZero) {
  ArrowSchema schema;
  schema.fields.emplace_back("tags", ArrowType::list(t(TypeId::kInt64)));
  // [[1, 2], null, [4]] rewritten so that the null list covers the value 4 and the last list is
  // empty: Arrow allows values behind a null list; they are not part of any row.
  std::string m = list_message({{1, 2}, {}, {4}}, {false, true, false}, {0, 2, 3, 3}, schema);
  ArrowBatch got = read_record_batch_message(m, schema, "ctx");
  const parquet::ColumnData& c = got.columns[0].values;
  EXPECT_EQ(c.lists[0].offsets, (std::vector<int64_t>{0, 2, 2, 2}));
  EXPECT_EQ(c.lists[0].validity, (std::vector<uint8_t>{1, 0, 1}));
  ASSERT_EQ(c.num_values(), 2);
  EXPECT_EQ(c.data<int64_t>()[1], 2);

  // [[7], [1, 2], [4]] rewritten to offsets 1, 1, 3, 4: the value 7 belongs to no row.
  m = list_message({{7}, {1, 2}, {4}}, {false, false, false}, {1, 1, 3, 4}, schema);
  got = read_record_batch_message(m, schema, "ctx");
  const parquet::ColumnData& d = got.columns[0].values;
  EXPECT_EQ(d.lists[0].offsets, (std::vector<int64_t>{0, 0, 2, 3}));
  ASSERT_EQ(d.num_values(), 3);
  EXPECT_EQ(d.data<int64_t>()[0], 1);
  EXPECT_EQ(d.data<int64_t>()[2], 4);
}

}  // namespace round_trip_test
}  // namespace tzrec::arrow
