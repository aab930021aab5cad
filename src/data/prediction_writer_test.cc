#include "data/prediction_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "data/csv_record_stream.h"
#include "data/testing_util.h"
#include "parquet/file_reader.h"

namespace tzrec::data {
namespace prediction_writer_test {

using parquet::ColumnBuilder;
using parquet::PhysicalType;
using parquet::WriterField;
using testing::error_of;
using testing::TempDir;

StringColumn text_column(const std::string& name, const std::vector<std::string>& cells) {
  StringColumn c;
  c.name = name;
  for (const auto& cell : cells) c.append(cell);
  return c;
}

RecordBatch text_batch(std::vector<StringColumn> columns) {
  RecordBatch b;
  b.columns = std::move(columns);
  return b;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Records of a CSV file, parsed by our reader's tokenizer (RFC 4180 quoting).
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  CsvRecordStream stream(path, ',');
  std::vector<std::vector<std::string>> out;
  std::vector<std::string_view> fields;
  while (stream.next(&fields)) out.emplace_back(fields.begin(), fields.end());
  return out;
}

std::vector<float> floats(const parquet::ColumnData& c) {
  return std::vector<float>(c.data<float>(), c.data<float>() + c.num_values());
}

// Typed reserved columns as the Parquet reader returns them (3 rows):
//   id    int64 required        7, 8, 9
//   score double                0.5, null, -1.25
//   tags  list<string>          [a, b], [], null
//   seq   list<list<int32>>     [[1, 2], [3]], [], [[4]]
//   flag  bool                  true, false, true
RecordBatch typed_batch(const TempDir& dir) {
  const std::string path = dir.file("typed_input.parquet");
  {
    parquet::FileWriter w(path, {WriterField{"id", PhysicalType::kInt64, false},
                                 WriterField{"score", PhysicalType::kDouble},
                                 WriterField{"tags", PhysicalType::kByteArray, true, 1},
                                 WriterField{"seq", PhysicalType::kInt32, true, 2},
                                 WriterField{"flag", PhysicalType::kBoolean}});
    ColumnBuilder id(w.schema().column(0)), score(w.schema().column(1)), tags(w.schema().column(2)),
        seq(w.schema().column(3)), flag(w.schema().column(4));
    for (int64_t v : {7, 8, 9}) id.append(v);
    score.append(0.5);
    score.append_null();
    score.append(-1.25);
    tags.begin_list();
    tags.append_string("a");
    tags.append_string("b");
    tags.end_list();
    tags.begin_list();
    tags.end_list();
    tags.append_null_list();
    seq.begin_list();
    seq.begin_list();
    seq.append(int32_t{1});
    seq.append(int32_t{2});
    seq.end_list();
    seq.begin_list();
    seq.append(int32_t{3});
    seq.end_list();
    seq.end_list();
    seq.begin_list();
    seq.end_list();
    seq.begin_list();
    seq.begin_list();
    seq.append(int32_t{4});
    seq.end_list();
    seq.end_list();
    for (bool v : {true, false, true}) flag.append(v);
    parquet::Table t;
    t.num_rows = 3;
    t.columns = {id.finish(), score.finish(), tags.finish(), seq.finish(), flag.finish()};
    w.write(std::move(t));
    w.close();
  }
  parquet::Table t = parquet::FileReader::open(path)->read();
  RecordBatch b;
  b.origin_unit = "row";
  for (const char* name : {"id", "score", "tags", "seq", "flag"}) {
    b.typed_columns.push_back(TypedColumn{name, t.column(name), std::nullopt});
  }
  return b;
}

// A map<string, float> column of one row {k1: 0.5, k2: 1}.
TypedColumn map_column(const TempDir& dir) {
  parquet::FileWriter w(dir.file("kv_schema.parquet"),
                        {WriterField{"k", PhysicalType::kByteArray, true, 1},
                         WriterField{"v", PhysicalType::kFloat, true, 1}});
  ColumnBuilder k(w.schema().column(0)), v(w.schema().column(1));
  k.begin_list();
  k.append_string("k1");
  k.append_string("k2");
  k.end_list();
  v.begin_list();
  v.append(0.5f);
  v.append(1.0f);
  v.end_list();
  TypedColumn out{"kv", k.finish(), v.finish()};
  w.close();
  return out;
}

TEST(PredictionWriter, DefaultWriterTypeAndUnknownTypes) {
  EXPECT_EQ(default_writer_type("ParquetDataset"), "ParquetWriter");
  EXPECT_EQ(default_writer_type("CsvDataset"), "CsvWriter");
  EXPECT_EQ(default_writer_type("OdpsDataset"), "OdpsWriter");
  TempDir dir;
  const auto msg = error_of<NotSupportedError>(
      [&] { make_prediction_writer("OdpsWriter", dir.file("out"), 0); });
  EXPECT_NE(msg.find("not supported yet: writer_type OdpsWriter"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ParquetWriter"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CsvWriter"), std::string::npos) << msg;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST(PredictionWriter, CreatesTheDirectoryOnTheFirstWriteOnly) {
  TempDir dir;
  for (const char* type : {"ParquetWriter", "CsvWriter"}) {
    auto w = make_prediction_writer(type, dir.file("a/b"), 2);
    w->close();
    EXPECT_FALSE(std::filesystem::exists(dir.file("a"))) << type;
    auto written = make_prediction_writer(type, dir.file("a/b"), 2);
    written->write({OutputColumn{"p", 1, {0.5f}}});
    written->close();
    EXPECT_TRUE(std::filesystem::is_regular_file(written->path())) << written->path();
    std::filesystem::remove_all(dir.file("a"));
  }
  EXPECT_EQ(make_prediction_writer("CsvWriter", dir.file("a/b"), 2)->path(),
            dir.file("a/b") + "/part-2.csv");
  EXPECT_EQ(make_prediction_writer("ParquetWriter", dir.file("a/b"), 0)->path(),
            dir.file("a/b") + "/part-0.parquet");
  const std::string file = dir.write("plain_file", "x");
  const auto msg = error_of<IoError>([&] {
    make_prediction_writer("CsvWriter", file, 0)->write({OutputColumn{"p", 1, {0.5f}}});
  });
  EXPECT_NE(msg.find(file), std::string::npos) << msg;
}

TEST(ParquetPredictionWriter, OutputsAndTextColumnsReadBack) {
  TempDir dir;
  auto w = make_prediction_writer("ParquetWriter", dir.file("out"), 1);
  w->write({{"probs", 1, {0.25f, 0.5f}}, {"logits", 2, {1, 2, 3, 4}}},
           text_batch({text_column("user", {"u1", ""}), text_column("note", {"a,b", "c"})}));
  w->write({{"probs", 1, {0.75f}}, {"logits", 2, {5, 6}}},
           text_batch({text_column("user", {"u3"}), text_column("note", {""})}));
  EXPECT_EQ(w->rows_written(), 3);
  w->close();
  w->close();  // idempotent

  auto reader = parquet::FileReader::open(dir.file("out/part-1.parquet"));
  ASSERT_EQ(reader->num_rows(), 3);
  const auto& schema = reader->schema();
  std::vector<std::string> fields;
  for (int f : schema.fields()) fields.push_back(schema.nodes()[static_cast<size_t>(f)].name);
  EXPECT_EQ(fields, (std::vector<std::string>{"probs", "logits", "user", "note"}));
  parquet::Table t = reader->read();

  const auto& probs = t.column("probs");
  EXPECT_EQ(probs.type(), PhysicalType::kFloat);
  EXPECT_EQ(probs.descriptor.max_def, 0);  // required
  EXPECT_EQ(floats(probs), (std::vector<float>{0.25f, 0.5f, 0.75f}));

  const auto& logits = *t.find("logits.list.element");
  EXPECT_EQ(logits.type(), PhysicalType::kFloat);
  ASSERT_EQ(logits.lists.size(), 1u);
  EXPECT_FALSE(logits.descriptor.list_nullable[0]);
  EXPECT_FALSE(logits.descriptor.leaf_nullable);
  EXPECT_EQ(logits.lists[0].offsets, (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(floats(logits), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  const auto& user = t.column("user");
  EXPECT_TRUE(user.descriptor.is_string());
  EXPECT_EQ(user.bytes(0), "u1");
  EXPECT_TRUE(user.is_null(1));  // empty CSV cell -> null
  EXPECT_EQ(user.bytes(2), "u3");
  const auto& note = t.column("note");
  EXPECT_EQ(note.bytes(0), "a,b");
  EXPECT_EQ(note.bytes(1), "c");
  EXPECT_TRUE(note.is_null(2));
}

TEST(ParquetPredictionWriter, TypedReservedColumnsKeepTheirTypes) {
  TempDir dir;
  const RecordBatch reserved = typed_batch(dir);
  parquet::Table in = parquet::FileReader::open(dir.file("typed_input.parquet"))->read();
  auto w = make_prediction_writer("ParquetWriter", dir.file("out"), 0);
  w->write({{"p", 1, {0.1f, 0.2f, 0.3f}}}, reserved);
  w->write({{"p", 1, {0.1f, 0.2f, 0.3f}}}, reserved);
  w->close();

  parquet::Table out = parquet::FileReader::open(w->path())->read();
  ASSERT_EQ(out.num_rows, 6);
  for (const char* name : {"id", "score", "tags", "seq", "flag"}) {
    SCOPED_TRACE(name);
    const auto& a = in.column(name);
    const auto& b = out.column(name);
    EXPECT_EQ(b.type(), a.type());
    EXPECT_EQ(b.descriptor.is_string(), a.descriptor.is_string());
    ASSERT_EQ(b.lists.size(), a.lists.size());
    // Rows 3..5 repeat rows 0..2.
    for (int64_t row = 0; row < 6; ++row) {
      const auto [ab, ae] = a.row_slots(row % 3);
      const auto [bb, be] = b.row_slots(row);
      ASSERT_EQ(be - bb, ae - ab) << row;
      for (int64_t k = 0; k < ae - ab; ++k) {
        EXPECT_EQ(b.is_null(bb + k), a.is_null(ab + k));
        if (!a.is_null(ab + k) && a.type() == PhysicalType::kByteArray) {
          EXPECT_EQ(b.bytes(bb + k), a.bytes(ab + k));
        } else if (!a.is_null(ab + k)) {
          const int width = a.value_width();
          EXPECT_EQ(std::memcmp(b.values.data() + (bb + k) * width,
                                a.values.data() + (ab + k) * width, static_cast<size_t>(width)),
                    0);
        }
      }
      if (!a.lists.empty()) EXPECT_EQ(b.lists[0].is_null(row), a.lists[0].is_null(row % 3));
    }
  }
  EXPECT_TRUE(out.column("score").is_null(1));
  EXPECT_TRUE(out.column("tags").lists[0].is_null(2));
  EXPECT_FALSE(out.column("tags").lists[0].is_null(1));  // empty, not null
}

TEST(ParquetPredictionWriter, MapColumnsAreRefusedByName) {
  TempDir dir;
  RecordBatch reserved;
  reserved.typed_columns.push_back(map_column(dir));
  auto w = make_prediction_writer("ParquetWriter", dir.file("out"), 0);
  const auto msg = error_of<NotSupportedError>([&] { w->write({{"p", 1, {0.5f}}}, reserved); });
  EXPECT_NE(msg.find("'kv'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("map<string,float>"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CsvWriter"), std::string::npos) << msg;
}

// int64 outputs (the SID models' codes) keep their type: INT64 / LIST<INT64> in Parquet, integers in
// CSV.
TEST(PredictionWriter, Int64Outputs) {
  auto codes = [](std::vector<int64_t> v, int64_t width) {
    OutputColumn c;
    c.name = width == 1 ? "code" : "codes";
    c.width = width;
    c.int64 = true;
    c.int64_values = std::move(v);
    return c;
  };
  TempDir dir;
  auto w = make_prediction_writer("ParquetWriter", dir.file("out"), 0);
  w->write({codes({3, 0, 9007199254740993LL, 1}, 2), codes({5, 6}, 1)});
  w->close();
  parquet::Table t = parquet::FileReader::open(w->path())->read();
  const auto& list = *t.find("codes.list.element");
  EXPECT_EQ(list.type(), PhysicalType::kInt64);
  EXPECT_EQ(list.lists[0].offsets, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(std::vector<int64_t>(list.data<int64_t>(), list.data<int64_t>() + 4),
            (std::vector<int64_t>{3, 0, 9007199254740993LL, 1}));  // beyond float precision
  EXPECT_EQ(t.column("code").type(), PhysicalType::kInt64);

  auto csv = make_prediction_writer("CsvWriter", dir.file("csv"), 0);
  csv->write({codes({3, 0, 12, 1}, 2)});
  csv->close();
  EXPECT_EQ(read_text(csv->path()), "codes\n\"3,0\"\n\"12,1\"\n");
  // A batch whose int64 output has another width than the first's is refused.
  auto again = make_prediction_writer("CsvWriter", dir.file("csv2"), 0);
  again->write({codes({1, 2}, 2)});
  EXPECT_THROW(again->write({codes({1, 2, 3}, 3)}), DataError);
}

TEST(CsvPredictionWriter, HeaderQuotingAndListOutputs) {
  TempDir dir;
  auto w = make_prediction_writer("CsvWriter", dir.file("out"), 0);
  w->write({{"score", 1, {0.5f, 1.0f}}, {"vec", 2, {0.25f, 0.75f, -1.0f, 2.0f}}},
           text_batch({text_column("note", {"a,b", "say \"hi\""}), text_column("id", {"", "u2"})}));
  w->write({{"score", 1, {0.125f}}, {"vec", 2, {3, 4}}},
           text_batch({text_column("note", {"two\nlines"}), text_column("id", {"u3"})}));
  w->close();
  EXPECT_EQ(read_text(w->path()),
            "score,vec,note,id\n"
            "0.5,\"0.25,0.75\",\"a,b\",\n"
            "1,\"-1,2\",\"say \"\"hi\"\"\",u2\n"
            "0.125,\"3,4\",\"two\nlines\",u3\n");
  EXPECT_EQ(read_csv(w->path()),
            (std::vector<std::vector<std::string>>{{"score", "vec", "note", "id"},
                                                   {"0.5", "0.25,0.75", "a,b", ""},
                                                   {"1", "-1,2", "say \"hi\"", "u2"},
                                                   {"0.125", "3,4", "two\nlines", "u3"}}));
}

TEST(CsvPredictionWriter, FloatsRoundTripAndOtherDelimiters) {
  TempDir dir;
  const std::vector<float> values = {0.1f,  1.0f / 3,    1e-8f,           3.4028235e38f,
                                     -2.5f, 16777216.0f, 1.17549435e-38f, 123456.789f};
  PredictionWriterOptions options;
  options.csv_delimiter = '\t';
  auto w = make_prediction_writer("CsvWriter", dir.file("out"), 0, options);
  w->write({{"x", 1, values}},
           text_batch({text_column("t", std::vector<std::string>(values.size(), "a\tb,c"))}));
  w->close();
  std::istringstream lines(read_text(w->path()));
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "x\tt");
  for (float v : values) {
    ASSERT_TRUE(std::getline(lines, line));
    const auto tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos);
    EXPECT_EQ(line.substr(tab + 1), "\"a\tb,c\"");  // quoted for the tab, not the comma
    const std::string text = line.substr(0, tab);
    const float back = std::strtof(text.c_str(), nullptr);
    EXPECT_EQ(std::memcmp(&back, &v, sizeof(float)), 0) << text;
  }
  EXPECT_EQ(read_text(w->path()).find("0.1\t"), 4u);  // shortest form: "0.1", not 0.100000001
}

TEST(CsvPredictionWriter, TypedColumnsAsText) {
  TempDir dir;
  RecordBatch reserved = typed_batch(dir);
  auto w = make_prediction_writer("CsvWriter", dir.file("out"), 0);
  w->write({{"p", 1, {0.1f, 0.2f, 0.3f}}}, reserved);
  RecordBatch kv;
  kv.typed_columns.push_back(map_column(dir));
  auto wm = make_prediction_writer("CsvWriter", dir.file("out_map"), 0);
  wm->write({}, kv);
  w->close();
  wm->close();
  EXPECT_EQ(read_text(w->path()),
            "p,id,score,tags,seq,flag\n"
            "0.1,7,0.5,\"a,b\",\"1,2;3\",true\n"
            "0.2,8,,,,false\n"
            "0.3,9,-1.25,,4,true\n");
  EXPECT_EQ(read_text(wm->path()), "kv\n\"k1:0.5,k2:1\"\n");
}

TEST(CsvPredictionWriter, LoneEmptyFieldIsQuoted) {
  TempDir dir;
  auto w = make_prediction_writer("CsvWriter", dir.file("out"), 0);
  w->write({}, text_batch({text_column("id", {"a", "", "c"})}));
  w->close();
  EXPECT_EQ(read_text(w->path()), "id\na\n\"\"\nc\n");
  EXPECT_EQ(read_csv(w->path()).size(), 4u);  // the empty row is not skipped
}

TEST(PredictionWriter, NameClashesAndInconsistentBatchesAreDataErrors) {
  TempDir dir;
  for (const char* type : {"ParquetWriter", "CsvWriter"}) {
    SCOPED_TRACE(type);
    auto w = make_prediction_writer(type, dir.file(type), 0);
    auto msg = error_of<DataError>([&] {
      w->write({{"probs", 1, {0.5f}}}, text_batch({text_column("probs", {"x"})}));
    });
    EXPECT_NE(msg.find("'probs' is both a model output and a reserved input column"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("drop it"), std::string::npos) << msg;
    msg = error_of<DataError>([&] { w->write({{"a", 1, {1}}, {"a", 1, {2}}}); });
    EXPECT_NE(msg.find("output 'a' is given twice"), std::string::npos) << msg;
    msg = error_of<DataError>([&] {
      w->write({{"a", 1, {1, 2}}}, text_batch({text_column("u", {"x"})}));
    });
    EXPECT_NE(msg.find("column 'u' has 1 rows but column 'a' has 2"), std::string::npos) << msg;
    msg = error_of<DataError>([&] { w->write({{"a", 2, {1, 2, 3}}}); });
    EXPECT_NE(msg.find("output 'a' has 3 values, not rows x width 2"), std::string::npos) << msg;
    EXPECT_NE(error_of<DataError>([&] { w->write({}); }).find("without columns"),
              std::string::npos);

    w->write({{"a", 1, {1}}}, text_batch({text_column("u", {"x"})}));
    msg = error_of<DataError>([&] { w->write({{"a", 1, {1}}}); });
    EXPECT_NE(msg.find("this batch has columns [a: float] but the first batch had [a: float, "
                       "u: string]"),
              std::string::npos)
        << msg;
    msg = error_of<DataError>([&] {
      w->write({{"a", 2, {1, 2}}}, text_batch({text_column("u", {"x"})}));
    });
    EXPECT_NE(msg.find("a: list<float>[2]"), std::string::npos) << msg;
    msg = error_of<DataError>([&] {
      w->write({{"b", 1, {1}}}, text_batch({text_column("u", {"x"})}));
    });
    EXPECT_NE(msg.find("first batch had"), std::string::npos) << msg;
    w->write({{"a", 1, {2}}}, text_batch({text_column("u", {"y"})}));  // still usable
    w->close();
    EXPECT_NE(error_of<DataError>([&] {
                w->write({{"a", 1, {1}}});
              }).find("write after close"),
              std::string::npos);
    EXPECT_EQ(w->rows_written(), 2);
  }
}

}  // namespace prediction_writer_test
}  // namespace tzrec::data
