// The saved layouts of dynamic tables (dynamic_checkpoint_layout.h): rows in use per rank with
// the layout tensors, and the full layout read from the shapes. Expected offsets are the sums the
// header defines, worked out by hand.
#include "embedding/dynamic_checkpoint_layout.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace dynamic_checkpoint_layout_test {

std::map<std::string, torch::Tensor> state(int64_t rows) {
  return {{"row_keys", torch::zeros({rows}, torch::kInt64)},
          {"row_scores", torch::zeros({rows}, torch::kInt64)},
          {"row_live", torch::zeros({rows}, torch::kUInt8)}};
}

TEST(DynamicSavedLayout, RowsInUseOfEachRank) {
  auto saved = state(3 + 0 + 5);
  saved["rows_in_use"] = torch::tensor({3, 0, 5}, torch::kInt64);
  saved["capacity"] = torch::tensor({8}, torch::kInt64);
  const DynamicSavedLayout layout = read_dynamic_saved_layout(saved, (3 + 2) + (0 + 2) + (5 + 2), "t");
  EXPECT_EQ(layout.world, 3);
  EXPECT_EQ(layout.capacity, 8);
  EXPECT_EQ(layout.rows_in_use, (std::vector<int64_t>{3, 0, 5}));
  EXPECT_EQ(layout.state_offsets, (std::vector<int64_t>{0, 3, 3}));
  EXPECT_EQ(layout.weight_offsets, (std::vector<int64_t>{0, 5, 7}));
  EXPECT_EQ(layout.state_rows, 8);
  EXPECT_EQ(layout.weight_rows, 14);
}

TEST(DynamicSavedLayout, FullLayoutFromTheShapes) {
  // 2 ranks of capacity 8: state 16 rows, weight 2 × 10.
  const DynamicSavedLayout layout = read_dynamic_saved_layout(state(16), 20, "t");
  EXPECT_EQ(layout.world, 2);
  EXPECT_EQ(layout.capacity, 8);
  EXPECT_EQ(layout.rows_in_use, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(layout.state_offsets, (std::vector<int64_t>{0, 8}));
  EXPECT_EQ(layout.weight_offsets, (std::vector<int64_t>{0, 10}));
  EXPECT_EQ(layout.state_rows, 16);
  EXPECT_EQ(layout.weight_rows, 20);
}

TEST(DynamicSavedLayout, InconsistentLayoutsNameTheTable) {
  auto saved = state(6);
  saved["rows_in_use"] = torch::tensor({3, 3}, torch::kInt64);
  saved["capacity"] = torch::tensor({8}, torch::kInt64);
  EXPECT_NO_THROW(read_dynamic_saved_layout(saved, 10, "table 't'"));
  try {
    read_dynamic_saved_layout(saved, 11, "table 't'");  // one weight row too many
    FAIL() << "no error";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(std::string(e.what()),
              "table 't': rows_in_use adds up to 6 state and 10 weight rows, the checkpoint has 6 and 11");
  }
  saved["rows_in_use"] = torch::tensor({9, -3}, torch::kInt64);  // past the capacity
  EXPECT_THROW(read_dynamic_saved_layout(saved, 10, "t"), CheckpointError);
  saved.erase("rows_in_use");
  saved.erase("capacity");
  EXPECT_THROW(read_dynamic_saved_layout(saved, 7, "t"), CheckpointError);  // 6 state rows, odd extra
}

TEST(DynamicSavedLayout, BlockOfTheRowsInUseAndTheReservedRows) {
  const torch::Tensor rows = torch::arange(10, torch::kFloat32).view({10, 1});  // capacity 8
  EXPECT_TRUE(rows_in_use_block(rows, 3, 8).flatten().equal(torch::tensor({0.f, 1.f, 2.f, 8.f, 9.f})));
  EXPECT_TRUE(rows_in_use_block(rows, 0, 8).flatten().equal(torch::tensor({8.f, 9.f})));
  EXPECT_TRUE(rows_in_use_block(rows, 8, 8).equal(rows));
}

}  // namespace dynamic_checkpoint_layout_test
}  // namespace tzrec::embedding
