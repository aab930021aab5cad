#include "data/reserved_columns.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::data {
namespace reserved_columns_test {

using testing::error_of;
using testing::TempDir;
using Names = std::vector<std::string>;

protos::DataConfig csv_config(bool with_header) {
  protos::DataConfig dc;
  dc.set_dataset_type(protos::CsvDataset);
  dc.set_with_header(with_header);
  return dc;
}

TEST(ReservedColumns, CsvNamesSpecialValuesAndOrder) {
  TempDir dir;
  const Names files = {dir.write("a.csv", "id,lbl,user\n1,0,u\n"), dir.write("empty.csv", ""),
                       dir.write("b.csv", "user,id,lbl\nv,2,1\n")};
  const auto dc = csv_config(true);
  const Names effective = {"id", "lbl"};
  EXPECT_EQ(resolve_reserved_columns(dc, files, {}, effective), Names{});
  EXPECT_EQ(resolve_reserved_columns(dc, files, {"user"}, effective), Names{"user"});
  // File order of the first file with a header.
  EXPECT_EQ(resolve_reserved_columns(dc, files, {"ALL_COLUMNS"}, effective),
            (Names{"id", "lbl", "user"}));
  EXPECT_EQ(resolve_reserved_columns(dc, files, {"ALL_EFFECTIVE_COLUMNS", "user"}, {"id"}),
            (Names{"id", "user"}));
  EXPECT_EQ(resolve_reserved_columns(dc, files, {"user", "id", "user", "ALL_EFFECTIVE_COLUMNS"},
                                     effective),
            (Names{"user", "id", "lbl"}));
  EXPECT_EQ(input_file_columns(dc, files[2]), (Names{"user", "id", "lbl"}));
}

TEST(ReservedColumns, MissingColumnNamesFileAndColumns) {
  TempDir dir;
  const Names files = {dir.write("a.csv", "id,user\n1,u\n"), dir.write("b.csv", "id,lbl\n2,1\n")};
  auto msg = error_of<DataError>(
      [&] { resolve_reserved_columns(csv_config(true), files, {"user"}, {"id"}); });
  EXPECT_NE(msg.find(files[1] + ": reserved column 'user' is not in the input (columns: id, lbl)"),
            std::string::npos)
      << msg;
  // ALL_COLUMNS is the first file's columns: the second lacks one of them.
  msg = error_of<DataError>(
      [&] { resolve_reserved_columns(csv_config(true), files, {"ALL_COLUMNS"}, {"id"}); });
  EXPECT_NE(msg.find("'user'"), std::string::npos) << msg;

  auto dc = csv_config(false);
  dc.add_input_fields()->set_input_name("id");
  dc.add_input_fields()->set_input_name("lbl");
  EXPECT_EQ(resolve_reserved_columns(dc, files, {"ALL_COLUMNS"}, {"id"}), (Names{"id", "lbl"}));
  msg = error_of<DataError>([&] { resolve_reserved_columns(dc, files, {"nope"}, {"id"}); });
  EXPECT_NE(msg.find("reserved column 'nope' is not in data_config.input_fields (columns: id, "
                     "lbl)"),
            std::string::npos)
      << msg;
}

TEST(ReservedColumns, ParquetFieldsOfTheFirstFile) {
  TempDir dir;
  const std::string a = dir.file("a.parquet");
  {
    parquet::FileWriter w(a, {parquet::WriterField{"user", parquet::PhysicalType::kByteArray},
                              parquet::WriterField{"id", parquet::PhysicalType::kInt64}});
    w.close();
  }
  const std::string b = testing::write_id_parquet(dir.file("b.parquet"), 0, 3);
  protos::DataConfig dc;
  dc.set_dataset_type(protos::ParquetDataset);
  EXPECT_EQ(resolve_reserved_columns(dc, {a, b}, {"id"}, {}), Names{"id"});
  EXPECT_EQ(resolve_reserved_columns(dc, {a}, {"ALL_COLUMNS"}, {}), (Names{"user", "id"}));
  const auto msg = error_of<DataError>([&] {
    resolve_reserved_columns(dc, {a, b}, {"ALL_COLUMNS"}, {});
  });
  EXPECT_NE(msg.find(b + ": reserved column 'user' is not in the input (columns: id)"),
            std::string::npos)
      << msg;
}

TEST(ReservedColumns, SelectColumnsKeepsRowsAndOrder) {
  RecordBatch b;
  b.files = {"f.csv"};
  b.origins = {{0, 2}, {0, 3}};
  for (const char* name : {"a", "b", "c"}) {
    StringColumn c;
    c.name = name;
    c.append(std::string(name) + "0");
    c.append(std::string(name) + "1");
    b.columns.push_back(std::move(c));
  }
  const RecordBatch s = select_columns(b, {"c", "a"});
  ASSERT_EQ(s.columns.size(), 2u);
  EXPECT_EQ(s.columns[0].name, "c");
  EXPECT_EQ(s.columns[0].cell(1), "c1");
  EXPECT_EQ(s.columns[1].cell(0), "a0");
  EXPECT_EQ(s.num_rows(), 2);
  EXPECT_EQ(s.describe_row(1), "f.csv line 3");
  const auto msg = error_of<DataError>([&] { select_columns(b, {"zz"}); });
  EXPECT_NE(msg.find("'zz'"), std::string::npos) << msg;
}

}  // namespace reserved_columns_test
}  // namespace tzrec::data
