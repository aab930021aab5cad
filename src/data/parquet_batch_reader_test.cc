// ParquetBatchReader and ParquetFiles: row-range sharding over files written with the project's
// Parquet writer (and hand-made files for shapes it does not write), batch cutting across row
// groups and files, typed columns compared row by row against whole-file reads, and errors.
#include "data/parquet_batch_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "base/error.h"
#include "data/read_position.h"
#include "data/testing_util.h"
#include "parquet/file_reader.h"
#include "parquet/json_rows.h"
#include "parquet/rle.h"
#include "parquet/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::data {
namespace parquet_batch_reader_test {

using parquet::ColumnBuilder;
using parquet::ColumnData;
using parquet::PhysicalType;
using parquet::WriterField;
using testing::error_of;
using testing::TempDir;

// Writes `rows` rows with a required int64 column "id" = first_id + i (the global row number).
std::string write_ids(const TempDir& dir, const std::string& name, int64_t first_id, int64_t rows,
                      int64_t row_group_rows) {
  parquet::WriterOptions o;
  o.row_group_rows = row_group_rows;
  o.page_bytes = 64;  // several pages per row group: partial row groups skip pages
  return testing::write_id_parquet(dir.path() + "/" + name, first_id, rows, o);
}

// Files of 0, 1, 37, 0, 100 and 5 rows with row groups of 7, 1, 10, 3, 16 and 2 rows.
struct IdFiles {
  TempDir dir;
  std::vector<std::string> paths;
  int64_t total = 0;
  IdFiles() {
    const int64_t sizes[] = {0, 1, 37, 0, 100, 5};
    const int64_t groups[] = {7, 1, 10, 3, 16, 2};
    for (int f = 0; f < 6; ++f) {
      paths.push_back(write_ids(dir, "part-" + std::to_string(f) + ".parquet", total, sizes[f], groups[f]));
      total += sizes[f];
    }
  }
};

// Ids of each batch of a reader; checks origins against the ids (id = global row).
std::vector<std::vector<int64_t>> read_ids(ParquetBatchReader& reader, const ParquetFiles& files) {
  std::vector<std::vector<int64_t>> out;
  while (auto b = reader.next()) {
    const RecordBatch& rb = b->records;
    EXPECT_EQ(rb.origin_unit, "row");
    const TypedColumn* id = rb.typed_column("id");
    EXPECT_NE(id, nullptr);
    if (id == nullptr) break;
    EXPECT_EQ(id->values.num_rows, rb.num_rows());
    std::vector<int64_t> ids(id->values.data<int64_t>(), id->values.data<int64_t>() + rb.num_rows());
    for (int64_t i = 0; i < rb.num_rows(); ++i) {
      const RowOrigin& o = rb.origins[static_cast<size_t>(i)];
      const int32_t file_id = b->file_ids.at(static_cast<size_t>(o.file_index));
      EXPECT_EQ(rb.files.at(static_cast<size_t>(o.file_index)), files.path(file_id));
      EXPECT_EQ(files.file_offset(file_id) + o.line, ids[static_cast<size_t>(i)]) << rb.describe_row(i);
    }
    out.push_back(std::move(ids));
  }
  return out;
}

TEST(ParquetFiles, RowCountsOffsetsAndPieces) {
  IdFiles d;
  auto files = ParquetFiles::open(d.paths);
  EXPECT_EQ(files->file_rows(), (std::vector<int64_t>{0, 1, 37, 0, 100, 5}));
  EXPECT_EQ(files->total_rows(), 143);
  EXPECT_EQ(files->file_offset(4), 38);
  EXPECT_EQ(files->pieces(RowRange{0, 143}),
            (std::vector<FilePiece>{{1, 0, 1}, {2, 0, 37}, {4, 0, 100}, {5, 0, 5}}));
  EXPECT_EQ(files->pieces(RowRange{30, 40}), (std::vector<FilePiece>{{2, 29, 37}, {4, 0, 2}}));
  EXPECT_EQ(files->pieces(RowRange{1, 38}), (std::vector<FilePiece>{{2, 0, 37}}));
  EXPECT_TRUE(files->pieces(RowRange{5, 5}).empty());
  EXPECT_THROW(files->pieces(RowRange{100, 144}), UsageError);
}

// Every combination of ranks x workers reads every row exactly once, each worker its contiguous
// calc_slice_position chunk in order, in batches of exactly batch_size but the last.
TEST(ParquetBatchReader, ShardsReadEveryRowOnceInOrder) {
  IdFiles d;
  auto files = ParquetFiles::open(d.paths);
  files->check_columns({"id"});
  const std::vector<std::pair<int, int>> combos = {{1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5},
                                                   {2, 2}, {5, 1}, {2, 1}, {3, 2}};
  for (const auto& [world_size, num_workers] : combos) {
    for (int64_t batch_size : {1, 4, 7, 64, 200}) {
      const int total_workers = world_size * num_workers;
      int64_t next_begin = 0;
      for (int rank = 0; rank < world_size; ++rank) {
        const auto pos = ReadPosition::start_row_ranges(d.paths, files->file_rows(), num_workers, rank, world_size);
        for (int w = 0; w < num_workers; ++w) {
          const int g = rank * num_workers + w;
          // Hand formula: 143 rows over total_workers, the first 143 % n get one more.
          const int64_t size = 143 / total_workers + (g < 143 % total_workers ? 1 : 0);
          ParquetBatchReader reader(files, {"id"}, pos.remaining_ranges()[static_cast<size_t>(w)], batch_size, false);
          const auto batches = read_ids(reader, *files);
          std::vector<int64_t> ids;
          for (size_t k = 0; k < batches.size(); ++k) {
            if (k + 1 < batches.size()) EXPECT_EQ(static_cast<int64_t>(batches[k].size()), batch_size);
            EXPECT_LE(static_cast<int64_t>(batches[k].size()), batch_size);
            ids.insert(ids.end(), batches[k].begin(), batches[k].end());
          }
          std::vector<int64_t> expected(static_cast<size_t>(size));
          for (int64_t i = 0; i < size; ++i) expected[static_cast<size_t>(i)] = next_begin + i;
          EXPECT_EQ(ids, expected) << world_size << "x" << num_workers << " worker " << g << " batch " << batch_size;
          EXPECT_EQ(static_cast<int64_t>(batches.size()), (size + batch_size - 1) / batch_size);
          next_begin += size;
        }
      }
      EXPECT_EQ(next_begin, 143);
    }
  }
}

TEST(ParquetBatchReader, DropRemainder) {
  IdFiles d;
  auto files = ParquetFiles::open(d.paths);
  // Rows [30, 53): 23 rows over files 2 and 4 -> 5, 5, 5, 5, 3.
  auto sizes = [&](bool drop) {
    ParquetBatchReader r(files, {"id"}, {RowRange{30, 53}}, 5, drop);
    std::vector<size_t> out;
    for (const auto& b : read_ids(r, *files)) out.push_back(b.size());
    return out;
  };
  EXPECT_EQ(sizes(false), (std::vector<size_t>{5, 5, 5, 5, 3}));
  EXPECT_EQ(sizes(true), (std::vector<size_t>{5, 5, 5, 5}));
  // Several ranges, also inside one file, are read in the given order.
  ParquetBatchReader r(files, {"id"}, {RowRange{140, 143}, RowRange{0, 2}, RowRange{10, 12}}, 4, false);
  EXPECT_EQ(read_ids(r, *files), (std::vector<std::vector<int64_t>>{{140, 141, 142, 0}, {1, 10, 11}}));
  EXPECT_THROW(ParquetBatchReader(files, {"id"}, {}, 0, false), ConfigError);
}

// ---- typed columns -------------------------------------------------------------------------

// Writes rows with ids [first, first + rows) of every writable column shape; values, nulls and
// list lengths derive from the id.
std::string write_typed(const TempDir& dir, const std::string& name, int64_t first, int64_t rows, int64_t group_rows) {
  WriterField l{"l", PhysicalType::kInt64};
  l.list_depth = 1;
  WriterField ll{"ll", PhysicalType::kByteArray};
  ll.list_depth = 2;
  std::vector<WriterField> fields = {WriterField{"id", PhysicalType::kInt64, false},
                                     WriterField{"i32", PhysicalType::kInt32},
                                     WriterField{"f", PhysicalType::kFloat, false},
                                     WriterField{"d", PhysicalType::kDouble},
                                     WriterField{"s", PhysicalType::kByteArray},
                                     WriterField{"b", PhysicalType::kBoolean},
                                     l,
                                     ll};
  parquet::WriterOptions o;
  o.row_group_rows = group_rows;
  o.page_bytes = 128;
  const std::string path = dir.path() + "/" + name;
  parquet::FileWriter w(path, fields, o);
  std::vector<ColumnBuilder> b;
  for (int c = 0; c < 8; ++c) b.emplace_back(w.schema().column(c));
  for (int64_t id = first; id < first + rows; ++id) {
    b[0].append(id);
    if (id % 5 == 0) {
      b[1].append_null();
    } else {
      b[1].append(static_cast<int32_t>(id * 3));
    }
    b[2].append(static_cast<float>(id) * 0.5f);
    if (id % 7 == 3) {
      b[3].append_null();
    } else {
      b[3].append(static_cast<double>(id) * 0.25);
    }
    if (id % 4 == 1) {
      b[4].append_null();
    } else {
      b[4].append_string(id % 9 == 0 ? "" : "s" + std::to_string(id));
    }
    b[5].append(id % 2 == 1);
    if (id % 6 == 0) {
      b[6].append_null_list();
    } else {
      b[6].begin_list();
      for (int64_t k = 0; k < id % 4; ++k) {
        if (k == 1 && id % 3 == 0) {
          b[6].append_null();
        } else {
          b[6].append(id * 10 + k);
        }
      }
      b[6].end_list();
    }
    if (id % 5 == 0) {
      b[7].append_null_list();
    } else {
      b[7].begin_list();
      for (int64_t j = 0; j < id % 3; ++j) {
        if ((id + j) % 4 == 0) {
          b[7].append_null_list();
          continue;
        }
        b[7].begin_list();
        for (int64_t k = 0; k <= j; ++k) b[7].append_string("a" + std::to_string(id) + "_" + std::to_string(k));
        b[7].end_list();
      }
      b[7].end_list();
    }
  }
  parquet::Table t;
  t.num_rows = rows;
  for (auto& builder : b) t.columns.push_back(builder.finish());
  w.write(std::move(t));
  w.close();
  return path;
}

// Row `row` of a column as text, walking the list levels (independent of the slicing code).
std::string row_text(const ColumnData& c, int64_t row) {
  std::function<std::string(size_t, int64_t)> walk = [&](size_t level, int64_t slot) -> std::string {
    if (level == c.lists.size()) return parquet::value_to_json(c, slot).dump();
    const parquet::ListLevel& lv = c.lists[level];
    if (lv.is_null(slot)) return "null";
    std::string out = "[";
    for (int64_t i = lv.offsets[static_cast<size_t>(slot)]; i < lv.offsets[static_cast<size_t>(slot) + 1]; ++i) {
      if (out.size() > 1) out += ",";
      out += walk(level + 1, i);
    }
    return out + "]";
  };
  return walk(0, row);
}

TEST(ParquetBatchReader, TypedColumnsMatchWholeFileReads) {
  TempDir dir;
  const std::vector<std::string> paths = {write_typed(dir, "a.parquet", 0, 50, 9),
                                          write_typed(dir, "b.parquet", 50, 1, 4),
                                          write_typed(dir, "c.parquet", 51, 0, 4),
                                          write_typed(dir, "d.parquet", 51, 33, 32)};
  auto files = ParquetFiles::open(paths);
  const std::vector<std::string> columns = {"ll", "id", "s", "b", "l", "f", "d", "i32"};
  files->check_columns(columns);
  std::vector<parquet::Table> whole;
  for (const auto& p : paths) whole.push_back(parquet::FileReader::open(p)->read());
  // The reference texts are those of the writer's input, so the reads are checked too.
  const parquet::Table& a = whole[0];
  EXPECT_EQ(row_text(a.column("ll"), 7), R"([["a7_0"]])");
  EXPECT_EQ(row_text(a.column("ll"), 8), R"([null,["a8_0","a8_1"]])");
  EXPECT_EQ(row_text(a.column("ll"), 10), "null");
  EXPECT_EQ(row_text(a.column("l"), 3), R"([30,null,32])");
  EXPECT_EQ(row_text(a.column("l"), 7), R"([70,71,72])");
  EXPECT_EQ(row_text(a.column("l"), 6), "null");
  EXPECT_EQ(row_text(a.column("l"), 9), "[90]");
  EXPECT_EQ(row_text(a.column("l"), 15), "[150,null,152]");
  EXPECT_EQ(row_text(a.column("s"), 18), R"("")");
  EXPECT_EQ(row_text(a.column("s"), 5), "null");
  int64_t rows_seen = 0;
  for (const auto& [num_workers, batch_size] : std::vector<std::pair<int, int64_t>>{{1, 7}, {3, 4}, {2, 50}}) {
    const auto pos = ReadPosition::start_row_ranges(paths, files->file_rows(), num_workers);
    for (const auto& ranges : pos.remaining_ranges()) {
      ParquetBatchReader reader(files, columns, ranges, batch_size, false);
      while (auto b = reader.next()) {
        const RecordBatch& rb = b->records;
        ASSERT_EQ(rb.typed_columns.size(), columns.size());
        for (size_t c = 0; c < columns.size(); ++c) {
          const TypedColumn& col = rb.typed_columns[c];
          EXPECT_EQ(col.name, columns[c]);
          EXPECT_FALSE(col.is_map());
          EXPECT_EQ(col.values.num_rows, rb.num_rows());
          EXPECT_EQ(col.list_depth(), columns[c] == "ll" ? 2 : columns[c] == "l" ? 1 : 0);
          for (int64_t i = 0; i < rb.num_rows(); ++i) {
            const RowOrigin& o = rb.origins[static_cast<size_t>(i)];
            const auto& ref = whole[static_cast<size_t>(b->file_ids[static_cast<size_t>(o.file_index)])];
            EXPECT_EQ(row_text(col.values, i), row_text(ref.column(columns[c]), o.line))
                << columns[c] << " " << rb.describe_row(i);
          }
        }
        rows_seen += rb.num_rows();
      }
    }
  }
  EXPECT_EQ(rows_seen, 3 * 84);
}

// ---- hand-made files: maps and rejected types ------------------------------------------------

std::string with_length(const std::string& s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  return std::string(reinterpret_cast<const char*>(&n), 4) + s;
}

std::string levels(const std::vector<int16_t>& v, int16_t max_level) {
  std::string out;
  int width = 0;
  while ((1 << width) <= max_level) ++width;
  parquet::rle_encode(v.data(), static_cast<int64_t>(v.size()), width, &out);
  return with_length(out);
}

parquet::testing::CraftedColumn crafted(PhysicalType type, std::vector<std::string> path, std::vector<int16_t> rep,
                                        std::vector<int16_t> def, int16_t max_def, const std::string& values) {
  parquet::testing::CraftedColumn c;
  c.type = type;
  c.path = std::move(path);
  c.num_values = static_cast<int64_t>(def.size());
  parquet::testing::CraftedPage p;
  p.header.type = parquet::PageType::kDataPage;
  parquet::DataPageHeader h;
  h.num_values = static_cast<int32_t>(def.size());
  p.header.data_page_header = h;
  p.body = levels(rep, 1) + levels(def, max_def) + values;
  c.pages.push_back(p);
  return c;
}

// map<string, float> "m" (optional map, optional values) and int64 "id"; `rows` as
// (key, value or NaN for null) lists, std::nullopt for a null map.
using MapEntries = std::vector<std::pair<std::string, std::optional<float>>>;
using MapRow = std::optional<MapEntries>;
std::string map_file(const std::vector<MapRow>& rows, int64_t first_id) {
  using parquet::testing::schema_group;
  using parquet::testing::schema_leaf;
  using R = parquet::Repetition;
  std::vector<parquet::SchemaElement> schema = {
      schema_group("schema", 2, std::nullopt),
      schema_leaf("id", PhysicalType::kInt64, R::kRequired),
      schema_group("m", 1, R::kOptional, parquet::ConvertedType::kMap),
      schema_group("key_value", 2, R::kRepeated, parquet::ConvertedType::kMapKeyValue),
      schema_leaf("key", PhysicalType::kByteArray, R::kRequired, parquet::ConvertedType::kUtf8),
      schema_leaf("value", PhysicalType::kFloat, R::kOptional),
  };
  std::vector<int16_t> rep, key_def, value_def;
  std::string keys, values, ids;
  for (size_t r = 0; r < rows.size(); ++r) {
    const int64_t id = first_id + static_cast<int64_t>(r);
    ids.append(reinterpret_cast<const char*>(&id), 8);
    if (!rows[r]) {
      rep.push_back(0), key_def.push_back(0), value_def.push_back(0);
      continue;
    }
    if (rows[r]->empty()) {
      rep.push_back(0), key_def.push_back(1), value_def.push_back(1);
      continue;
    }
    for (size_t i = 0; i < rows[r]->size(); ++i) {
      const auto& [k, v] = (*rows[r])[i];
      rep.push_back(i == 0 ? 0 : 1);
      key_def.push_back(2);
      value_def.push_back(v ? 3 : 2);
      keys += with_length(k);
      if (v) values.append(reinterpret_cast<const char*>(&*v), 4);
    }
  }
  parquet::testing::CraftedColumn id;
  id.type = PhysicalType::kInt64;
  id.path = {"id"};
  id.num_values = static_cast<int64_t>(rows.size());
  parquet::testing::CraftedPage p;
  p.header.type = parquet::PageType::kDataPage;
  parquet::DataPageHeader h;
  h.num_values = static_cast<int32_t>(rows.size());
  p.header.data_page_header = h;
  p.body = ids;
  id.pages.push_back(p);
  return parquet::testing::craft_file(
      schema,
      {id, crafted(PhysicalType::kByteArray, {"m", "key_value", "key"}, rep, key_def, 2, keys),
       crafted(PhysicalType::kFloat, {"m", "key_value", "value"}, rep, value_def, 3, values)},
      static_cast<int64_t>(rows.size()));
}

std::vector<std::string> strings_of(const ColumnData& c) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < c.num_values(); ++i) out.emplace_back(c.bytes(i));
  return out;
}

TEST(ParquetBatchReader, MapsSpanFiles) {
  TempDir dir;
  const std::vector<std::string> paths = {
      dir.write("a.parquet", map_file({MapRow{{{"a", 1.5f}, {"b", std::nullopt}}}, std::nullopt, MapRow{MapEntries{}},
                                       MapRow{{{"c", 3.0f}}}},
                                      0)),
      dir.write("b.parquet", map_file({MapRow{{{"d", 4.0f}}}, MapRow{{{"e", 5.0f}, {"f", 6.0f}}}, std::nullopt,
                                       MapRow{{{"g", 7.0f}}}},
                                      4))};
  auto files = ParquetFiles::open(paths);
  files->check_columns({"m", "id"});
  ParquetBatchReader reader(files, {"m", "id"}, {RowRange{0, 8}}, 3, false);
  auto b1 = reader.next();
  ASSERT_TRUE(b1);
  const TypedColumn& m1 = b1->records.typed_columns[0];
  ASSERT_TRUE(m1.is_map());
  EXPECT_EQ(m1.list_depth(), 1);
  EXPECT_EQ(m1.values.lists[0].offsets, (std::vector<int64_t>{0, 2, 2, 2}));
  EXPECT_EQ(m1.values.lists[0].validity, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(strings_of(m1.values), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m1.map_values->lists[0].offsets, (std::vector<int64_t>{0, 2, 2, 2}));
  EXPECT_EQ(m1.map_values->validity, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(m1.map_values->data<float>()[0], 1.5f);
  auto b2 = reader.next();  // a row 3, b rows 0 and 1
  ASSERT_TRUE(b2);
  EXPECT_EQ(b2->records.files, (std::vector<std::string>{paths[0], paths[1]}));
  EXPECT_EQ(b2->file_ids, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(b2->records.describe_row(1), paths[1] + " row 0");
  const TypedColumn& m2 = b2->records.typed_columns[0];
  EXPECT_EQ(m2.values.lists[0].offsets, (std::vector<int64_t>{0, 1, 2, 4}));
  EXPECT_EQ(m2.values.lists[0].validity, (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(strings_of(m2.values), (std::vector<std::string>{"c", "d", "e", "f"}));
  ASSERT_EQ(m2.map_values->num_values(), 4);
  const float* v = m2.map_values->data<float>();
  EXPECT_EQ(std::vector<float>(v, v + 4), (std::vector<float>{3.0f, 4.0f, 5.0f, 6.0f}));
  EXPECT_EQ(m2.map_values->validity, (std::vector<uint8_t>{1, 1, 1, 1}));
  const int64_t* ids = b2->records.typed_columns[1].values.data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(ids, ids + 3), (std::vector<int64_t>{3, 4, 5}));
  auto b3 = reader.next();
  ASSERT_TRUE(b3);
  EXPECT_EQ(b3->records.typed_columns[0].values.lists[0].offsets, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(b3->records.typed_columns[0].values.lists[0].validity, (std::vector<uint8_t>{0, 1}));
  EXPECT_FALSE(reader.next());
}

// A file with one row group of 0 rows (footer only matters) and the given schema.
std::string schema_file(std::vector<parquet::SchemaElement> schema) {
  std::vector<parquet::testing::CraftedColumn> cols;
  std::vector<std::string> path;
  std::vector<int> left;  // children left per open group
  for (size_t i = 1; i < schema.size(); ++i) {
    path.push_back(schema[i].name);
    if (schema[i].num_children > 0) {
      left.push_back(schema[i].num_children);
      continue;
    }
    parquet::testing::CraftedColumn c;
    c.type = *schema[i].type;
    c.path = path;
    cols.push_back(c);
    path.pop_back();
    while (!left.empty() && --left.back() == 0) {
      left.pop_back();
      path.pop_back();
    }
  }
  return parquet::testing::craft_file(schema, cols, 0);
}

TEST(ParquetFiles, RejectsUnreadableTypesAndNamesMissingColumns) {
  using parquet::testing::schema_group;
  using parquet::testing::schema_leaf;
  using R = parquet::Repetition;
  using CT = parquet::ConvertedType;
  auto dec = schema_leaf("dec", PhysicalType::kInt64, R::kOptional, CT::kDecimal);
  dec.logical_type.kind = parquet::LogicalType::Kind::kDecimal;
  dec.logical_type.precision = 10;
  dec.logical_type.scale = 2;
  auto fixed = schema_leaf("fixed", PhysicalType::kFixedLenByteArray, R::kOptional);
  fixed.type_length = 16;
  TempDir dir;
  const std::string path = dir.write(
      "types.parquet",
      schema_file({schema_group("schema", 11, std::nullopt),
                   schema_leaf("ok", PhysicalType::kInt64, R::kOptional),
                   schema_leaf("flag", PhysicalType::kBoolean, R::kOptional),
                   schema_leaf("r", PhysicalType::kInt32, R::kRepeated),
                   schema_leaf("ts", PhysicalType::kInt96, R::kOptional),
                   fixed,
                   dec,
                   schema_group("st", 2, R::kOptional),
                   schema_leaf("a", PhysicalType::kInt32, R::kRequired),
                   schema_leaf("b", PhysicalType::kByteArray, R::kOptional, CT::kUtf8),
                   schema_group("ls", 1, R::kOptional, CT::kList),
                   schema_group("list", 1, R::kRepeated),
                   schema_group("element", 1, R::kOptional),
                   schema_leaf("a", PhysicalType::kInt32, R::kOptional),
                   schema_group("one", 1, R::kOptional),
                   schema_leaf("x", PhysicalType::kDouble, R::kOptional),
                   schema_group("lb", 1, R::kOptional, CT::kList),
                   schema_group("list", 1, R::kRepeated),
                   schema_leaf("element", PhysicalType::kBoolean, R::kOptional),
                   schema_group("mb", 1, R::kOptional, CT::kMap),
                   schema_group("key_value", 2, R::kRepeated),
                   schema_leaf("key", PhysicalType::kDouble, R::kRequired),
                   schema_leaf("value", PhysicalType::kInt32, R::kOptional)}));
  auto files = ParquetFiles::open({path});
  files->check_columns({"ok", "flag", "r"});
  const std::string tail =
      "; ParquetDataset reads int32/int64/float/double/string scalars, lists, lists of lists and maps of those";
  const std::vector<std::pair<std::string, std::string>> rejected = {
      {"ts", "int96 (legacy timestamp)"},
      {"fixed", "fixed_size_binary(16)"},
      {"dec", "decimal(10,2)"},
      {"st", "struct<a: int32, b: string>"},
      {"ls", "list<struct<a: int32>>"},
      {"one", "struct<x: double>"},
      {"lb", "list<bool>"},
      {"mb", "map<double,int32>"}};
  for (const auto& [column, type] : rejected) {
    EXPECT_EQ(error_of<DataError>([&] { files->check_columns({"ok", column}); }),
              "column " + column + " of " + path + " has type " + type + tail);
  }
  const std::string missing = error_of<DataError>([&] { files->check_columns({"nope"}); });
  EXPECT_NE(missing.find(path + ": column 'nope'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("(columns: ok, flag, r, ts, fixed, dec, st, ls, one, lb, mb)"), std::string::npos)
      << missing;
  // The reader checks the columns of each file it opens.
  IdFiles d;
  auto id_files = ParquetFiles::open(d.paths);
  ParquetBatchReader reader(id_files, {"id", "label"}, {RowRange{0, 10}}, 4, false);
  const std::string msg = error_of<DataError>([&] { reader.next(); });
  EXPECT_NE(msg.find(d.paths[1] + ": column 'label'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(columns: id)"), std::string::npos) << msg;
}

TEST(ParquetFiles, DifferentTypesAcrossFilesAreNamed) {
  TempDir dir;
  const std::string a = write_ids(dir, "a.parquet", 0, 3, 2);
  const std::string path = dir.path() + "/b.parquet";
  {
    parquet::FileWriter w(path, {WriterField{"id", PhysicalType::kInt32, false}});
    ColumnBuilder id(w.schema().column(0));
    id.append(int32_t{7});
    parquet::Table t;
    t.num_rows = 1;
    t.columns.push_back(id.finish());
    w.write(std::move(t));
    w.close();
  }
  auto files = ParquetFiles::open({a, path});
  EXPECT_EQ(error_of<DataError>([&] { files->check_columns({"id"}); }),
            "column id has type int64 in " + a + " but int32 in " + path +
                "; all input files must give a column the same type");
}

TEST(ParquetFiles, TruncatedFilesAreDataErrorsNamingTheFile) {
  IdFiles d;
  const std::string bytes = parquet::testing::read_file(d.paths[4]);
  TempDir dir;
  const std::string cut = dir.write("cut.parquet", bytes.substr(0, bytes.size() - 10));
  std::string msg = error_of<DataError>([&] { ParquetFiles::open({d.paths[2], cut}); });
  EXPECT_NE(msg.find(cut), std::string::npos) << msg;
  // A file truncated after the footers were read: the reader names it.
  auto files = ParquetFiles::open(d.paths);
  parquet::testing::write_file(d.paths[4], bytes.substr(0, bytes.size() / 2));
  ParquetBatchReader reader(files, {"id"}, {RowRange{0, 143}}, 50, false);
  msg = error_of<DataError>([&] {
    while (reader.next()) {
    }
  });
  EXPECT_NE(msg.find(d.paths[4]), std::string::npos) << msg;
}

}  // namespace parquet_batch_reader_test
}  // namespace tzrec::data
