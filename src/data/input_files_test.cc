#include "data/input_files.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "data/read_position.h"
#include "data/testing_util.h"

namespace tzrec::data {
namespace input_files_test {

using testing::TempDir;
using Strings = std::vector<std::string>;

template <typename F>
std::string data_error_of(F&& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "<no DataError>";
}

TEST(InputFiles, GlobsAndCommaListsKeepOrder) {
  TempDir dir;
  const std::string d = dir.path();
  dir.write("p2.csv", "");
  dir.write("p1.csv", "");
  dir.write("p10.csv", "");
  dir.write("other.txt", "");
  dir.write("sub/p3.csv", "");
  // glob(3) sorts its matches; the comma list keeps the given order; directories are skipped.
  EXPECT_EQ(expand_input_path(d + "/p*.csv"),
            (Strings{d + "/p1.csv", d + "/p10.csv", d + "/p2.csv"}));
  EXPECT_EQ(expand_input_path(d + "/other.txt, " + d + "/p?.csv," + d + "/*/p3.csv"),
            (Strings{d + "/other.txt", d + "/p1.csv", d + "/p2.csv", d + "/sub/p3.csv"}));
  EXPECT_EQ(expand_input_path(d + "/p1.csv,," + d + "/p1.csv"),
            (Strings{d + "/p1.csv", d + "/p1.csv"}));
}

TEST(InputFiles, MissingFileAndUnmatchedGlobNameThePattern) {
  TempDir dir;
  const std::string d = dir.path();
  dir.write("a.csv", "");
  std::string msg = data_error_of([&] { expand_input_path(d + "/a.csv," + d + "/nope.csv"); });
  EXPECT_NE(msg.find("input file '" + d + "/nope.csv' does not exist"), std::string::npos) << msg;
  msg = data_error_of([&] { expand_input_path(d + "/*.parquet"); });
  EXPECT_NE(msg.find("input pattern '" + d + "/*.parquet' matches no files"), std::string::npos)
      << msg;
  msg = data_error_of([&] { expand_input_path(" , "); });
  EXPECT_NE(msg.find("input path is empty"), std::string::npos) << msg;
  msg = data_error_of([&] { expand_input_path(d); });
  EXPECT_NE(msg.find("is a directory"), std::string::npos) << msg;
}

TEST(InputFiles, EffectiveNumWorkers) {
  EXPECT_EQ(effective_num_workers(0, 5), 1);
  EXPECT_EQ(effective_num_workers(8, 5), 5);
  EXPECT_EQ(effective_num_workers(3, 5), 3);
  EXPECT_EQ(effective_num_workers(8, 5, 2), 2);  // num_files // world_size
  EXPECT_THROW(effective_num_workers(1, 1, 2), DataError);
}

TEST(InputFiles, RoundRobinLikeTorchEasyRec) {
  // files[g::total], g = rank * num_workers + worker
  EXPECT_EQ(assign_files_round_robin(7, 3),
            (std::vector<std::vector<int32_t>>{{0, 3, 6}, {1, 4}, {2, 5}}));
  EXPECT_EQ(assign_files_round_robin(9, 2, 1, 2),
            (std::vector<std::vector<int32_t>>{{2, 6}, {3, 7}}));
}

TEST(ReadPosition, JsonRoundTripAndValidation) {
  ReadPosition p = ReadPosition::start({"a.csv", "b.csv", "c.csv"}, 2);
  p.advance(0, {{0, 5}, {2, 3}});
  p.advance(1, {{1, 4}});
  p.next_worker = 1;
  EXPECT_EQ(p.total_rows(), 12);
  EXPECT_EQ(p.worker_rows, (std::vector<int64_t>{8, 4}));
  const nlohmann::json j = p.to_json();
  EXPECT_EQ(j.dump(),
            R"({"files":[{"path":"a.csv","rows":5},{"path":"b.csv","rows":4},)"
            R"({"path":"c.csv","rows":3}],"next_worker":1,"num_workers":2,"worker_rows":[8,4]})");
  EXPECT_EQ(ReadPosition::from_json(nlohmann::json::parse(j.dump())), p);

  auto bad = j;
  bad["next_worker"] = 2;
  EXPECT_THROW(ReadPosition::from_json(bad), CheckpointError);
  bad = j;
  bad.erase("files");
  EXPECT_THROW(ReadPosition::from_json(bad), CheckpointError);
  bad = j;
  bad["files"][1]["rows"] = -1;
  EXPECT_THROW(ReadPosition::from_json(bad), CheckpointError);
  EXPECT_THROW(ReadPosition::from_json(nlohmann::json::array()), CheckpointError);
}

TEST(ReadPosition, PlanSkipsConsumedRowsAndChecksFiles) {
  ReadPosition p = ReadPosition::start({"a", "b", "c"}, 2);
  p.advance(0, {{0, 5}, {2, 3}});
  auto plan = p.plan({"a", "b", "c"}, 3);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0][0].skip_rows, 5);
  EXPECT_EQ(plan[2][0].file_id, 2);
  EXPECT_EQ(plan[2][0].skip_rows, 3);
  std::string msg = data_error_of([&] { p.plan({"a", "b"}, 2); });
  EXPECT_NE(msg.find("written for 3 input files"), std::string::npos) << msg;
  msg = data_error_of([&] { p.plan({"a", "x", "c"}, 2); });
  EXPECT_NE(msg.find("input file 1 is 'x' but the position was written for 'b'"), std::string::npos)
      << msg;
}

}  // namespace input_files_test
}  // namespace tzrec::data
