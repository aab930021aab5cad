// data/row_key.h. The expected key is computed independently in Python (FNV-1a 64 of
// "dt=1/part-0.parquet", then splitmix64(splitmix64(h) ^ 7), 64-bit arithmetic).
#include "data/row_key.h"

#include <gtest/gtest.h>

namespace tzrec::data {
namespace row_key_test {

RecordBatch batch_of(std::vector<std::string> files, std::vector<RowOrigin> origins) {
  RecordBatch b;
  b.files = std::move(files);
  b.origins = std::move(origins);
  return b;
}

TEST(RowKey, FileKeyTextIsFolderAndName) {
  EXPECT_EQ(file_key_text("/data/t/dt=1/part-0.parquet"), "dt=1/part-0.parquet");
  EXPECT_EQ(file_key_text("dt=1/part-0.parquet"), "dt=1/part-0.parquet");
  EXPECT_EQ(file_key_text("part-0.parquet"), "part-0.parquet");
  EXPECT_EQ(file_key_text("/part-0.parquet"), "/part-0.parquet");
  EXPECT_EQ(file_key_text("topic t partition 3"), "topic t partition 3");
}

TEST(RowKey, HandComputedValue) {
  EXPECT_EQ(row_key(batch_of({"/tmp/x/dt=1/part-0.parquet"}, {{0, 7}}), 0), 0xd5f61dd413c1e24cULL);
}

TEST(RowKey, SameWhereverTheDataLiesDifferentPerFolderFileAndLine) {
  const RecordBatch b = batch_of({"/a/dt=1/part-0.parquet", "/b/c/dt=1/part-0.parquet", "/a/dt=2/part-0.parquet",
                                  "/a/dt=1/part-1.parquet"},
                                 {{0, 5}, {1, 5}, {2, 5}, {3, 5}, {0, 6}});
  EXPECT_EQ(row_key(b, 0), row_key(b, 1));
  EXPECT_NE(row_key(b, 0), row_key(b, 2));
  EXPECT_NE(row_key(b, 0), row_key(b, 3));
  EXPECT_NE(row_key(b, 0), row_key(b, 4));
}

}  // namespace row_key_test
}  // namespace tzrec::data
