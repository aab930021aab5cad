// find_path_conflict (data/path_conflict.h): the cases of TorchEasyRec's
// path_util.check_path_conflict for local paths, on files made here.
#include "data/path_conflict.h"

#include <gtest/gtest.h>

#include "data/testing_util.h"

namespace tzrec::data {
namespace path_conflict_test {

TEST(PathConflict, InputsAndOutputsSharingADirectory) {
  testing::TempDir dir;
  dir.write("pred/part-0.parquet", "x");
  const std::string pred = dir.file("pred");
  // Files matched by a glob stand for their directory: writing into it conflicts.
  const std::optional<std::string> c = find_path_conflict({pred + "/*.parquet", pred});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, "path conflict: '" + pred + "/*.parquet' and '" + pred + "' resolve to the same local directory '" +
                    pred + "'.");
  // Two outputs that are one directory, written differently.
  EXPECT_TRUE(find_path_conflict({pred + "/*.parquet", dir.file("a"), dir.file("b/../a")}).has_value());
  // Separate directories, and a comma list with one matching file.
  EXPECT_FALSE(find_path_conflict({pred + "/part-0.parquet", dir.file("summary"), dir.file("layers")}).has_value());
  EXPECT_TRUE(find_path_conflict({dir.file("x.csv,") + pred + "/part-0.parquet", pred}).has_value());
  EXPECT_FALSE(find_path_conflict({pred}).has_value());
}

}  // namespace path_conflict_test
}  // namespace tzrec::data
