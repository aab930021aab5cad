// Files written by another implementation, Apache Arrow's JavaScript library (tests/data/arrow,
// see its README), decode to exactly the rows that library decodes from them
// (expected/<file>.json): streams with every supported type and nulls, several batches, legacy
// framing, no end marker, ZSTD and LZ4_FRAME bodies, sliced arrays, no batches, empty batches,
// schema-less record batch messages, and columns of unsupported types skipped. And the reverse:
// the JavaScript library reads the streams our writer wrote (tzrec_writer_*.arrows) back to the
// rows it wrote in all_types.arrows.
#include <filesystem>
#include <iterator>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "arrow/ipc_reader.h"
#include "arrow/ipc_writer.h"
#include "arrow/testing_util.h"
#include "base/error.h"

namespace tzrec::arrow {
namespace js_files_test {

using testing::json;

json expected(const std::string& file) {
  return json::parse(testing::read_file(testing::data_dir() + "/expected/" + file + ".json"));
}

std::string bytes_of(const std::string& file) {
  return testing::read_file(testing::data_dir() + "/" + file);
}

void expect_schema(const ArrowSchema& got, const json& want, const std::string& file) {
  ASSERT_EQ(got.fields.size(), want.size()) << file;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got.fields[i].name, want[i]["name"].get<std::string>()) << file;
    EXPECT_EQ(got.fields[i].type.to_string(), want[i]["type"].get<std::string>()) << file;
    EXPECT_EQ(got.fields[i].nullable, want[i]["nullable"].get<bool>())
        << file << " " << got.fields[i].name;
  }
}

void expect_rows(const ArrowBatch& batch, const json& want, const std::string& what) {
  std::string where;
  EXPECT_EQ(batch.num_rows, static_cast<int64_t>(want.size())) << what;
  EXPECT_TRUE(testing::same_json(testing::rows_json(batch), want, &where)) << what << where;
}

// The descriptors of decoded columns are those empty_columns() gives the schema's fields.
void expect_descriptors(const ArrowBatch& batch, const ArrowSchema& schema) {
  ArrowSchema sub;
  for (const auto& c : batch.columns) {
    sub.fields.push_back(schema.fields[static_cast<size_t>(schema.find(c.name))]);
  }
  const std::vector<ArrowColumn> want = empty_columns(sub);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(batch.columns[i].values.descriptor.path_string,
              want[i].values.descriptor.path_string);
    EXPECT_EQ(batch.columns[i].values.descriptor.max_def, want[i].values.descriptor.max_def);
    EXPECT_EQ(batch.columns[i].values.lists.size(), want[i].values.lists.size());
    EXPECT_EQ(batch.columns[i].values.num_rows, batch.num_rows);
  }
}

void check_stream(const std::string& file) {
  SCOPED_TRACE(file);
  const json want = expected(file);
  ReadOptions options;
  if (want.contains("columns")) options.columns = want["columns"].get<std::vector<std::string>>();
  const ArrowStream s = read_ipc_stream(bytes_of(file), file, options);
  expect_schema(s.schema, want["schema"], file);
  EXPECT_EQ(s.has_end_marker, want["has_end_marker"].get<bool>());
  ASSERT_EQ(s.batches.size(), want["batches"].size());
  for (size_t b = 0; b < s.batches.size(); ++b) {
    expect_rows(s.batches[b], want["batches"][b], file + " batch " + std::to_string(b));
    expect_descriptors(s.batches[b], s.schema);
  }
  EXPECT_EQ(read_stream_schema(bytes_of(file), file).to_string(), s.schema.to_string());
}

TEST(JsFilesTest, Streams) {
  for (const char* file : {"all_types.arrows", "legacy.arrows", "input_fields.arrows",
                           "no_end_marker.arrows", "zstd.arrows", "lz4.arrows", "no_batches.arrows",
                           "zero_rows.arrows", "sliced.arrows", "unsupported.arrows"}) {
    check_stream(file);
  }
}

TEST(JsFilesTest, SchemaLessRecordBatchMessages) {
  for (const char* file : {"all_types.batch.arrow_message", "legacy.batch.arrow_message",
                           "zstd.batch.arrow_message"}) {
    SCOPED_TRACE(file);
    const json want = expected(file);
    const ArrowSchema schema =
        read_stream_schema(bytes_of(want["schema_from"].get<std::string>()), "schema source");
    const ArrowBatch batch = read_record_batch_message(bytes_of(file), schema, file);
    expect_rows(batch, want["batches"][0], file);
    expect_descriptors(batch, schema);
  }
}

TEST(JsFilesTest, SchemaLessMessageWithInputFields) {
  // The schema KafkaDataset builds from data_config.input_fields.
  const std::string file = "input_fields.batch.arrow_message";
  const json want = expected(file);
  std::vector<std::pair<std::string, std::string>> fields;
  const std::map<std::string, std::string> names = {{"i32", "INT32"},
                                                    {"i64", "INT64"},
                                                    {"f32", "FLOAT"},
                                                    {"f64", "DOUBLE"},
                                                    {"str", "STRING"},
                                                    {"list_i32", "ARRAY_INT32"},
                                                    {"list_i64", "ARRAY_INT64"},
                                                    {"list_f32", "ARRAY_FLOAT"},
                                                    {"list_f64", "ARRAY_DOUBLE"},
                                                    {"list_str", "ARRAY_STRING"},
                                                    {"ll_i32", "ARRAY_ARRAY_INT32"},
                                                    {"ll_i64", "ARRAY_ARRAY_INT64"},
                                                    {"ll_f32", "ARRAY_ARRAY_FLOAT"},
                                                    {"ll_f64", "ARRAY_ARRAY_DOUBLE"},
                                                    {"ll_str", "ARRAY_ARRAY_STRING"},
                                                    {"map_str_i32", "MAP_STRING_INT32"},
                                                    {"map_str_i64", "MAP_STRING_INT64"},
                                                    {"map_str_f32", "MAP_STRING_FLOAT"},
                                                    {"map_str_f64", "MAP_STRING_DOUBLE"},
                                                    {"map_str_str", "MAP_STRING_STRING"},
                                                    {"map_i64_i32", "MAP_INT64_INT32"},
                                                    {"map_i64_str", "MAP_INT64_STRING"},
                                                    {"map_i32_f64", "MAP_INT32_DOUBLE"},
                                                    {"map_i32_i64", "MAP_INT32_INT64"}};
  for (const auto& f : want["schema"]) {
    const std::string name = f["name"].get<std::string>();
    fields.emplace_back(name, names.at(name));
  }
  const ArrowSchema schema = schema_from_input_fields(fields);
  // The JavaScript writer's schema is the same (compare_schemas as a Kafka reader would).
  const ArrowSchema written =
      read_stream_schema(bytes_of("input_fields.arrows"), "input_fields.arrows");
  EXPECT_TRUE(compare_schemas(schema, written).identical())
      << compare_schemas(schema, written).to_string();
  const ArrowBatch batch =
      read_record_batch_message(bytes_of(file), schema, "topic t partition 0 offset 0");
  expect_rows(batch, want["batches"][0], file);
  // Only some columns.
  ReadOptions options;
  options.columns = {"map_str_f32", "i64", "absent"};
  const ArrowBatch some = read_record_batch_message(bytes_of(file), schema, "ctx", options);
  ASSERT_EQ(some.columns.size(), 2u);
  EXPECT_EQ(some.columns[0].name, "i64");
  EXPECT_EQ(some.columns[1].name, "map_str_f32");
  for (size_t r = 0; r < want["batches"][0].size(); ++r) {
    std::string where;
    EXPECT_TRUE(testing::same_json(testing::cell_json(some.columns[1], static_cast<int64_t>(r)),
                                   want["batches"][0][r]["map_str_f32"], &where))
        << where;
  }
}

TEST(JsFilesTest, UnsupportedColumnsAreRefusedWhenRead) {
  const std::string bytes = bytes_of("unsupported.arrows");
  try {
    read_ipc_stream(bytes, "topic t partition 1 offset 5");
    FAIL() << "no error";
  } catch (const NotSupportedError& e) {
    EXPECT_STREQ(e.what(),
                 "not supported yet: Arrow type struct<a: int32, b: string> of column 's' (topic t "
                 "partition 1 offset 5)");
  }
  const std::pair<const char*, const char*> cases[] = {
      {"d", "dictionary<values=string, indices=int32>"},
      {"ts", "timestamp[ms]"},
      {"sv", "string_view"},
      {"fsl", "fixed_size_list<int32>[2]"},
      {"day", "date32[day]"},
  };
  for (const auto& [column, type] : cases) {
    ReadOptions options;
    options.columns = {"id", column};
    try {
      read_ipc_stream(bytes, "ctx", options);
      FAIL() << "no error for " << column;
    } catch (const NotSupportedError& e) {
      EXPECT_EQ(std::string(e.what()),
                fmt::format("not supported yet: Arrow type {} of column '{}' (ctx)", type, column));
    }
  }
}

// Our writer's stream of all_types.arrows' batches, as checked in (tzrec_writer_*.arrows, read by
// the JavaScript library into expected/tzrec_writer_*.arrows.json).
TEST(JsFilesTest, ArrowJsReadsWhatTheWriterWrote) {
  const ArrowStream source = read_ipc_stream(bytes_of("all_types.arrows"), "all_types.arrows");
  const json js_rows = expected("all_types.arrows")["batches"];
  const std::filesystem::path out_dir =
      std::filesystem::path(TZREC_BINARY_DIR) / "arrow_js_files_test";
  std::filesystem::create_directories(out_dir);
  const std::pair<const char*, BodyCodec> variants[] = {
      {"tzrec_writer_plain.arrows", BodyCodec::kNone},
      {"tzrec_writer_zstd.arrows", BodyCodec::kZstd},
      {"tzrec_writer_lz4.arrows", BodyCodec::kLz4Frame},
  };
  // All written first, so that every file is there to check in when the test is new.
  std::vector<std::string> outputs;
  for (const auto& [file, codec] : variants) {
    WriteOptions options;
    options.compression = codec;
    outputs.push_back(write_ipc_stream(source.schema, source.batches, options));
    testing::write_file((out_dir / file).string(), outputs.back());
  }
  for (size_t v = 0; v < std::size(variants); ++v) {
    const auto& [file, codec] = variants[v];
    SCOPED_TRACE(file);
    const std::string& written = outputs[v];
    const std::string checked_in_path = testing::data_dir() + "/" + file;
    ASSERT_TRUE(std::filesystem::exists(checked_in_path))
        << "copy " << (out_dir / file).string()
        << " to tests/data/arrow and run tools/write_files.mjs read-back";
    const std::string checked_in = testing::read_file(checked_in_path);
    // Compressed bytes depend on the codec library's version: only the uncompressed stream must be
    // identical; the compressed ones must decode to the same data.
    if (codec == BodyCodec::kNone) {
      EXPECT_TRUE(written == checked_in)
          << "the writer's output changed: compare " << (out_dir / file).string()
          << " with tests/data/arrow/" << file
          << ", and if the change is intended, check it in and rerun "
             "tools/write_files.mjs read-back";
    }
    for (const std::string* bytes : {&written, &checked_in}) {
      const ArrowStream back = read_ipc_stream(*bytes, file);
      EXPECT_EQ(back.schema.to_string(), source.schema.to_string());
      ASSERT_EQ(back.batches.size(), source.batches.size());
      for (size_t b = 0; b < back.batches.size(); ++b) {
        testing::expect_same_batch(back.batches[b], source.batches[b],
                                   std::string(file) + " batch " + std::to_string(b));
      }
    }
    // What the JavaScript library read from the checked-in file: the rows it wrote.
    ASSERT_TRUE(std::filesystem::exists(testing::data_dir() + "/expected/" + file + ".json"))
        << "run tools/write_files.mjs read-back";
    const json js = expected(file);
    expect_schema(source.schema, js["schema"], file);
    EXPECT_TRUE(js["has_end_marker"].get<bool>());
    ASSERT_EQ(js["batches"].size(), js_rows.size());
    for (size_t b = 0; b < js_rows.size(); ++b) {
      std::string where;
      EXPECT_TRUE(testing::same_json(js["batches"][b], js_rows[b], &where))
          << "batch " << b << where;
    }
  }
}

}  // namespace js_files_test
}  // namespace tzrec::arrow
