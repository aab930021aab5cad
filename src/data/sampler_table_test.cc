// Sampler tables: the typed header, rows, hashed ids, duplicates, edge grouping and order,
// directories, every bad-input error (file, line / row, field, fix), text vs Parquet.
#include "data/sampler_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/error.h"
#include "data/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::data {
namespace sampler_table_test {

using testing::error_of;
using testing::TempDir;

SamplerTableOptions item_options(size_t num_attrs, bool hash = false) {
  SamplerTableOptions o;
  o.num_attrs = num_attrs;
  o.hash_ids = hash;
  o.num_threads = 2;
  o.config_field = "data_config.negative_sampler.input_path";
  return o;
}

std::shared_ptr<const NodeTable> items(const std::string& path, size_t num_attrs, bool hash = false) {
  return NodeTable::load(path, NodeTable::Kind::kItem, item_options(num_attrs, hash));
}

std::string item_error(const TempDir& dir, const std::string& text, size_t num_attrs = 2, bool hash = false) {
  const std::string path = dir.write("items.txt", text);
  return error_of<DataError>([&] { items(path, num_attrs, hash); });
}

TEST(GraphlearnHash64, MatchesReferenceValues) {
  // MurmurHash64A with seed 0xDECAFCAFFE (graphlearn common/base/hash.cc), computed independently.
  EXPECT_EQ(graphlearn_hash64(""), 0x81769421199f9e3bULL);
  EXPECT_EQ(graphlearn_hash64("a"), 0x29962dc026eac9fcULL);
  EXPECT_EQ(graphlearn_hash64("12345"), 0x281ae80a0d2fd690ULL);
  EXPECT_EQ(graphlearn_hash64("item_0001"), 0x6bff3e0bad652ba9ULL);
  EXPECT_EQ(graphlearn_hash64("abcdefgh"), 0x2f994778e453fc52ULL);
  EXPECT_EQ(graphlearn_hash64("hello world, graphlearn!"), 0x143aabc265d951fbULL);
  EXPECT_EQ(sampler_key_of_int(12345, true), static_cast<int64_t>(0x281ae80a0d2fd690ULL));
  EXPECT_EQ(sampler_key_of_int(12345, false), 12345);
}

TEST(NodeTable, ItemsWithAttrs) {
  TempDir dir;
  const auto t = items(dir.write("items.txt",
                                 "id:int64\tweight:float\tattrs:string\n"
                                 "10\t1\ta:x\n"
                                 "11\t0.5\tb:\n"
                                 "12\t2.5e0\t:z\x1dw\n"),
                       2);
  ASSERT_EQ(t->size(), 3);
  EXPECT_EQ(t->key(0), 10);
  EXPECT_EQ(t->key(2), 12);
  EXPECT_FLOAT_EQ(t->weights()[1], 0.5f);
  EXPECT_FLOAT_EQ(t->weights()[2], 2.5f);
  EXPECT_EQ(t->attrs(0), "a:x");
  EXPECT_EQ(t->attrs(1), "b:");
  EXPECT_EQ(t->attrs(2), ":z\x1dw");
  EXPECT_EQ(t->num_attrs(), 2u);
  EXPECT_EQ(t->find(11), 1);
  EXPECT_EQ(t->find(13), -1);
  EXPECT_EQ(t->duplicate_rows(), 0);
}

TEST(NodeTable, HeaderTypesNamesAndLineEndings) {
  TempDir dir;
  // Names are free; int/int32/long/int64 and float/double are accepted; spaces around the type;
  // CRLF line ends and blank lines.
  for (const char* header : {"id:int64\tweight:float\tattrs:string", "item:long\tw:double\tf:string",
                             "a:int\tb: float \tc:string", "a:int32\tb:double\tc:string"}) {
    const auto t = items(dir.write("items.txt", std::string(header) + "\r\n1\t1\tx\r\n\r\n2\t3\ty\r\n\n"), 1);
    ASSERT_EQ(t->size(), 2) << header;
    EXPECT_EQ(t->attrs(1), "y");
    EXPECT_FLOAT_EQ(t->weights()[1], 3.0f);
  }
}

TEST(NodeTable, AttrsFieldWithoutAttrFieldsIsIgnored) {
  TempDir dir;
  const auto t = items(dir.write("items.txt", "id:int64\tweight:float\tattrs:string\n1\t1\ta:b:c\n"), 0);
  EXPECT_EQ(t->size(), 1);
  EXPECT_FALSE(t->has_attrs());
  EXPECT_EQ(t->attrs(0), "");
}

TEST(NodeTable, UsersAndCustomDelimiters) {
  TempDir dir;
  SamplerTableOptions o = item_options(0);
  o.field_delimiter = ",";
  const auto u =
      NodeTable::load(dir.write("users.txt", "id:int64,weight:float\n7,1\n8,2\n"), NodeTable::Kind::kUser, o);
  EXPECT_EQ(u->size(), 2);
  EXPECT_EQ(u->key(1), 8);
  o.num_attrs = 3;
  o.attr_delimiter = "\x02";
  const auto t = NodeTable::load(dir.write("items.txt", "id:int64,weight:float,attrs:string\n5,1,a\x02:b\x02\n"),
                                 NodeTable::Kind::kItem, o);
  EXPECT_EQ(t->attrs(0), "a\x02:b\x02");
}

TEST(NodeTable, DuplicateIdsKeepTheFirstRow) {
  TempDir dir;
  const auto t = items(dir.write("items.txt",
                                 "id:int64\tweight:float\tattrs:string\n"
                                 "1\t1\tfirst\n2\t1\ttwo\n1\t9\tsecond\n3\t1\tthree\n2\t5\tagain\n"),
                       1);
  ASSERT_EQ(t->size(), 3);
  EXPECT_EQ(t->duplicate_rows(), 2);
  EXPECT_EQ(t->attrs(t->find(1)), "first");
  EXPECT_FLOAT_EQ(t->weights()[static_cast<size_t>(t->find(1))], 1.0f);
  EXPECT_EQ(t->attrs(t->find(2)), "two");
  EXPECT_EQ(t->attrs(t->find(3)), "three");
}

TEST(NodeTable, HashedStringAndIntegerIds) {
  TempDir dir;
  const auto s =
      items(dir.write("items.txt", "id:string\tweight:float\tattrs:string\nitem_0001\t1\tx\n12345\t1\ty\n"), 1, true);
  EXPECT_EQ(s->key(0), static_cast<int64_t>(graphlearn_hash64("item_0001")));
  // Integer-typed ids hash their decimal digits, so they meet the batch's integer ids.
  const auto i = items(dir.write("items2.txt", "id:int64\tweight:float\tattrs:string\n+12345\t1\ty\n"), 1, true);
  EXPECT_EQ(i->key(0), sampler_key_of_int(12345, true));
  EXPECT_EQ(s->key(1), i->key(0));
}

TEST(NodeTable, DirectoryAndCommaList) {
  TempDir dir;
  dir.write("tbl/part-1", "id:int64\tweight:float\n3\t1\n");
  dir.write("tbl/part-0", "id:int64\tweight:float\n1\t1\n2\t1\n");
  dir.write("tbl/.hidden", "garbage");
  const auto t = NodeTable::load(dir.file("tbl"), NodeTable::Kind::kUser, item_options(0));
  ASSERT_EQ(t->size(), 3);
  EXPECT_EQ(t->key(0), 1);
  EXPECT_EQ(t->key(2), 3);
  EXPECT_EQ(t->files().size(), 2u);
  const auto c =
      NodeTable::load(dir.file("tbl/part-1") + "," + dir.file("tbl/part-0"), NodeTable::Kind::kUser, item_options(0));
  EXPECT_EQ(c->key(0), 3);
}

TEST(NodeTable, ManyRowsOnSeveralThreads) {
  TempDir dir;
  std::string text = "id:int64\tweight:float\tattrs:string\n";
  const int n = 120000;  // ~2.4 MB: parsed in several pieces
  for (int i = 0; i < n; ++i)
    text += std::to_string(i * 3) + "\t" + std::to_string(i % 7) + "\tv" + std::to_string(i) + ":w\n";
  SamplerTableOptions o = item_options(2);
  o.num_threads = 4;
  const auto t = NodeTable::load(dir.write("items.txt", text), NodeTable::Kind::kItem, o);
  ASSERT_EQ(t->size(), n);
  for (int i : {0, 1, 59999, 60000, n - 1}) {
    EXPECT_EQ(t->key(i), i * 3);
    EXPECT_EQ(t->attrs(i), "v" + std::to_string(i) + ":w");
    EXPECT_EQ(t->find(i * 3), i);
  }
  // Batched lookups agree with find() (present and absent keys).
  std::vector<int64_t> queries, found(3000);
  for (int i = 0; i < 3000; ++i) queries.push_back(i * 7 % 400000);
  t->find_batch(queries.data(), queries.size(), found.data());
  for (size_t i = 0; i < queries.size(); ++i) ASSERT_EQ(found[i], t->find(queries[i])) << queries[i];
  // An error deep in the file names its line (header = line 1).
  text.replace(text.find("\n270000\t"), 8, "\n270000\tx");
  const std::string msg =
      error_of<DataError>([&] { NodeTable::load(dir.write("bad.txt", text), NodeTable::Kind::kItem, o); });
  EXPECT_NE(msg.find("bad.txt (data_config.negative_sampler.input_path) line 90002: field 2 'weight'"),
            std::string::npos)
      << msg;
}

// ---- bad input: one error naming the file, line and field, saying how to fix -------------------

TEST(NodeTableErrors, Header) {
  TempDir dir;
  std::string m = item_error(dir, "");
  EXPECT_NE(m.find("items.txt (data_config.negative_sampler.input_path) line 1: the item table has no header"),
            std::string::npos)
      << m;
  m = item_error(dir, "id:int64\tweight:float\tattrs:strin\n1\t1\ta:b\n");
  EXPECT_NE(m.find("line 1: header field 3 'attrs:strin' has unknown type 'strin'; use one of int, int32, long, "
                   "int64, float, double, string"),
            std::string::npos)
      << m;
  m = item_error(dir, "id\tweight:float\tattrs:string\n");
  EXPECT_NE(m.find("line 1: header field 1 'id' is not 'name:type'"), std::string::npos) << m;
  m = item_error(dir, "id:int64\tweight:float\n1\t1\n");
  EXPECT_NE(m.find("the item table has no attrs field ('id', 'weight'), but attr_fields lists 2 attributes"),
            std::string::npos)
      << m;
  m = item_error(dir, "id:int64\tweight:float\tattrs:string\tx:int\n");
  EXPECT_NE(m.find("the item table has 4 fields"), std::string::npos) << m;
  m = item_error(dir, "id:float\tweight:float\tattrs:string\n");
  EXPECT_NE(m.find("field 1 'id' (id of the item table) has type float; ids must be int64"), std::string::npos) << m;
  m = item_error(dir, "id:string\tweight:float\tattrs:string\n");
  EXPECT_NE(m.find("holds string ids; set USE_HASH_NODE_ID=1"), std::string::npos) << m;
  m = item_error(dir, "id:int64\tweight:int\tattrs:string\n");
  EXPECT_NE(m.find("field 2 'weight' (weight of the item table) has type int64; declare it float"), std::string::npos)
      << m;
  m = item_error(dir, "id:int64\tweight:float\tattrs:int\n");
  EXPECT_NE(m.find("field 3 'attrs' (attrs of the item table) has type int64; declare it string"), std::string::npos)
      << m;
}

TEST(NodeTableErrors, Rows) {
  TempDir dir;
  const std::string h = "id:int64\tweight:float\tattrs:string\n";
  std::string m = item_error(dir, h + "1\t1\ta:b\n2\t1\ta:b:c\n");
  EXPECT_NE(m.find("items.txt (data_config.negative_sampler.input_path) line 3: field 3 'attrs' (attrs): 'a:b:c' "
                   "holds 3 attributes separated by attr_delimiter, but attr_fields lists 2"),
            std::string::npos)
      << m;
  m = item_error(dir, h + "1\t1\t\n");
  EXPECT_NE(m.find("line 2: field 3 'attrs' (attrs): '' holds 0 attributes"), std::string::npos) << m;
  m = item_error(dir, h + "1\t1\n");
  EXPECT_NE(m.find("line 2: 2 fields where the header has 3"), std::string::npos) << m;
  m = item_error(dir, h + "x1\t1\ta:b\n");
  EXPECT_NE(m.find("line 2: field 1 'id' (id): 'x1' is not an integer id; write a decimal int64"), std::string::npos)
      << m;
  m = item_error(dir, h + "\t1\ta:b\n");
  EXPECT_NE(m.find("line 2: field 1 'id' (id): '' is not an integer id"), std::string::npos) << m;
  m = item_error(dir, h + "1\t-1\ta:b\n");
  EXPECT_NE(m.find("line 2: field 2 'weight' (weight): -1 is negative; weights must be finite and >= 0"),
            std::string::npos)
      << m;
  m = item_error(dir, h + "1\tnan\ta:b\n");
  EXPECT_NE(m.find("line 2: field 2 'weight' (weight): nan is not a number"), std::string::npos) << m;
  m = item_error(dir, h + "1\tinf\ta:b\n");
  EXPECT_NE(m.find("is infinite"), std::string::npos) << m;
  m = item_error(dir, h + "1\t1e99\ta:b\n");
  EXPECT_NE(m.find("is infinite"), std::string::npos) << m;
  m = item_error(dir, h + "1\tabc\ta:b\n");
  EXPECT_NE(m.find("line 2: field 2 'weight' (weight): 'abc' is not a number; write a finite weight >= 0"),
            std::string::npos)
      << m;
}

TEST(NodeTableErrors, PathsAndFiles) {
  TempDir dir;
  EXPECT_NE(error_of<DataError>([&] { items(dir.file("missing.txt"), 0); }).find("missing.txt"), std::string::npos);
  EXPECT_NE(error_of<ConfigError>([&] { items("", 0); }).find("data_config.negative_sampler.input_path"),
            std::string::npos);
  EXPECT_NE(error_of<NotSupportedError>([&] { items("odps://p/tables/t", 0); }).find("odps://"), std::string::npos);
  std::filesystem::create_directories(dir.file("empty"));
  EXPECT_NE(error_of<DataError>([&] { items(dir.file("empty"), 0); }).find("holds no files"), std::string::npos);
}

// ---- edges -------------------------------------------------------------------------------------

TEST(EdgeTable, GroupedBySourceInFileOrderOrByWeight) {
  TempDir dir;
  const std::string path = dir.write("edges.txt",
                                     "userid:int64\titemid:int64\tweight:float\n"
                                     "1\t100\t1\n2\t200\t5\n1\t101\t3\n1\t102\t3\n2\t100\t1\n1\t103\t0.5\n3\t300\t1\n");
  SamplerTableOptions o = item_options(0);
  const auto f = EdgeTable::load(path, EdgeTable::Order::kFileOrder, o);
  EXPECT_EQ(f->num_edges(), 7);
  EXPECT_EQ(f->num_sources(), 3);
  auto dsts = [](const EdgeTable& t, int64_t user) {
    std::vector<int64_t> out;
    const auto r = t.edges_of(user);
    for (int64_t e = r.begin; e < r.end; ++e) out.push_back(t.dst(e));
    return out;
  };
  EXPECT_EQ(dsts(*f, 1), (std::vector<int64_t>{100, 101, 102, 103}));
  EXPECT_EQ(dsts(*f, 2), (std::vector<int64_t>{200, 100}));
  EXPECT_EQ(dsts(*f, 9), (std::vector<int64_t>{}));
  EXPECT_EQ(f->distinct_dst(), (std::vector<int64_t>{100, 200, 101, 102, 103, 300}));
  const std::vector<int64_t> users{3, 9, 1, 2, 1};
  std::vector<EdgeTable::Range> ranges(users.size());
  std::vector<int64_t> scratch;
  f->ranges_of(users.data(), users.size(), ranges.data(), &scratch);
  for (size_t i = 0; i < users.size(); ++i) {
    EXPECT_EQ(ranges[i].begin, f->edges_of(users[i]).begin);
    EXPECT_EQ(ranges[i].end, f->edges_of(users[i]).end);
  }
  EXPECT_EQ(ranges[1].size(), 0);
  const auto w = EdgeTable::load(path, EdgeTable::Order::kWeightDescending, o);
  EXPECT_EQ(dsts(*w, 1), (std::vector<int64_t>{101, 102, 100, 103}));  // 3, 3 (file order), 1, 0.5
  EXPECT_EQ(dsts(*w, 2), (std::vector<int64_t>{200, 100}));
}

TEST(EdgeTable, Errors) {
  TempDir dir;
  SamplerTableOptions o = item_options(0);
  o.config_field = "data_config.negative_sampler_v2.pos_edge_input_path";
  auto err = [&](const std::string& text) {
    const std::string p = dir.write("edges.txt", text);
    return error_of<DataError>([&] { EdgeTable::load(p, EdgeTable::Order::kFileOrder, o); });
  };
  std::string m = err("userid:int64\titemid:int64\n1\t2\n");
  EXPECT_NE(m.find("edges.txt (data_config.negative_sampler_v2.pos_edge_input_path) line 1: the edge table has 2 "
                   "fields ('userid', 'itemid'); it needs 3: userid:int64\\titemid:int64\\tweight:float"),
            std::string::npos)
      << m;
  m = err("userid:int64\titemid:int64\tweight:float\n1\t2\t1\n1\tz\t1\n");
  EXPECT_NE(m.find("line 3: field 2 'itemid' (dst id): 'z' is not an integer id"), std::string::npos) << m;
  m = err("userid:int64\titemid:int64\tweight:float\n1\t2\t-0.5\n");
  EXPECT_NE(m.find("line 2: field 3 'weight' (weight): -0.5 is negative"), std::string::npos) << m;
}

// ---- Parquet -----------------------------------------------------------------------------------

struct ParquetItem {
  int64_t id;
  double weight;
  const char* attrs;  // nullptr: null
};

std::string write_items_parquet(const std::string& path, const std::vector<ParquetItem>& rows,
                                parquet::PhysicalType weight_type = parquet::PhysicalType::kFloat) {
  parquet::WriterOptions wo;
  wo.row_group_rows = 2;
  parquet::FileWriter w(path,
                        {parquet::WriterField{"item_id", parquet::PhysicalType::kInt64, false},
                         parquet::WriterField{"w", weight_type, false},
                         parquet::WriterField{"attrs", parquet::PhysicalType::kByteArray, true}},
                        wo);
  parquet::ColumnBuilder id(w.schema().column(0)), weight(w.schema().column(1)), attrs(w.schema().column(2));
  for (const auto& r : rows) {
    id.append(r.id);
    if (weight_type == parquet::PhysicalType::kFloat) {
      weight.append(static_cast<float>(r.weight));
    } else {
      weight.append(r.weight);
    }
    if (r.attrs == nullptr) {
      attrs.append_null();
    } else {
      attrs.append_string(r.attrs);
    }
  }
  parquet::Table t;
  t.num_rows = static_cast<int64_t>(rows.size());
  t.columns.push_back(id.finish());
  t.columns.push_back(weight.finish());
  t.columns.push_back(attrs.finish());
  w.write(std::move(t));
  w.close();
  return path;
}

TEST(NodeTable, TextAndParquetTablesAreEqual) {
  TempDir dir;
  const std::vector<ParquetItem> rows{{5, 1.0, "a:b"},
                                      {7, 0.25, "c:"},
                                      {5, 3.0, "dup:x"},
                                      {9, 2.0,
                                       "e\x1d"
                                       "f:g"},
                                      {11, 0.0, ":"}};
  std::string text = "id:int64\tweight:float\tattrs:string\n";
  for (const auto& r : rows) text += std::to_string(r.id) + "\t" + std::to_string(r.weight) + "\t" + r.attrs + "\n";
  const auto a = items(dir.write("items.txt", text), 2);
  for (auto type : {parquet::PhysicalType::kFloat, parquet::PhysicalType::kDouble}) {
    const auto b = items(write_items_parquet(dir.file("items.parquet"), rows, type), 2);
    ASSERT_EQ(a->size(), b->size());
    EXPECT_EQ(a->weights(), b->weights());
    for (int64_t i = 0; i < a->size(); ++i) {
      EXPECT_EQ(a->key(i), b->key(i));
      EXPECT_EQ(a->attrs(i), b->attrs(i));
    }
    EXPECT_EQ(a->duplicate_rows(), b->duplicate_rows());
  }
  // Edge tables too.
  const std::string etext = "u:int64\ti:int64\tw:float\n1\t5\t1\n2\t7\t2\n1\t9\t3\n";
  parquet::FileWriter w(dir.file("edges.parquet"), {parquet::WriterField{"u", parquet::PhysicalType::kInt32, false},
                                                    parquet::WriterField{"i", parquet::PhysicalType::kInt64, false},
                                                    parquet::WriterField{"w", parquet::PhysicalType::kFloat, false}});
  parquet::ColumnBuilder u(w.schema().column(0)), i(w.schema().column(1)), wt(w.schema().column(2));
  for (auto [uu, ii, ww] : std::vector<std::tuple<int32_t, int64_t, float>>{{1, 5, 1}, {2, 7, 2}, {1, 9, 3}}) {
    u.append(uu);
    i.append(ii);
    wt.append(ww);
  }
  parquet::Table t;
  t.num_rows = 3;
  t.columns.push_back(u.finish());
  t.columns.push_back(i.finish());
  t.columns.push_back(wt.finish());
  w.write(std::move(t));
  w.close();
  const auto et = EdgeTable::load(dir.write("edges.txt", etext), EdgeTable::Order::kWeightDescending, item_options(0));
  const auto ep = EdgeTable::load(dir.file("edges.parquet"), EdgeTable::Order::kWeightDescending, item_options(0));
  EXPECT_EQ(et->dst_keys(), ep->dst_keys());
  EXPECT_EQ(et->distinct_dst(), ep->distinct_dst());
  EXPECT_EQ(ep->dst(ep->edges_of(1).begin), 9);
}

TEST(NodeTableErrors, Parquet) {
  TempDir dir;
  std::string m = error_of<DataError>([&] {
    items(write_items_parquet(dir.file("a.parquet"), {{1, 1, "a:b"}, {2, 1, "a:b"}, {3, -2, "a:b"}}), 2);
  });
  EXPECT_NE(m.find("a.parquet (data_config.negative_sampler.input_path) row 2: column 2 'w' (weight) is -2; weights "
                   "must be finite and >= 0"),
            std::string::npos)
      << m;
  m = error_of<DataError>([&] {
    items(write_items_parquet(dir.file("b.parquet"), {{1, 1, "a:b"}, {2, 1, nullptr}}), 2);
  });
  EXPECT_NE(m.find("b.parquet (data_config.negative_sampler.input_path) row 1: column 3 'attrs' (attrs): '' holds 0 "
                   "attributes"),
            std::string::npos)
      << m;
  m = error_of<DataError>([&] { items(write_items_parquet(dir.file("c.parquet"), {{1, 1, "a"}}), 0); });
  EXPECT_EQ(m, "(no error)");  // attrs ignored without attr_fields
  parquet::FileWriter w(dir.file("d.parquet"), {parquet::WriterField{"id", parquet::PhysicalType::kInt64, true},
                                                parquet::WriterField{"w", parquet::PhysicalType::kFloat, false}});
  parquet::ColumnBuilder id(w.schema().column(0)), wt(w.schema().column(1));
  id.append(int64_t{1});
  id.append_null();
  wt.append(1.0f);
  wt.append(1.0f);
  parquet::Table t;
  t.num_rows = 2;
  t.columns.push_back(id.finish());
  t.columns.push_back(wt.finish());
  w.write(std::move(t));
  w.close();
  m = error_of<DataError>([&] { NodeTable::load(dir.file("d.parquet"), NodeTable::Kind::kUser, item_options(0)); });
  EXPECT_NE(m.find("d.parquet (data_config.negative_sampler.input_path) row 1: column 1 'id' (id) is null"),
            std::string::npos)
      << m;
}

}  // namespace sampler_table_test
}  // namespace tzrec::data
