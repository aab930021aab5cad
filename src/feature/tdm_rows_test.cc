// TDM expansion of batches (feature/tdm_rows.h; TorchEasyRec's expand_tdm_sample): on a
// hand-built 3-level tree (root 100; 10 over leaves 1, 2; 11 over leaves 3, 4) with
// layer_num_sample [0, 1, 1], each of B rows gets 1 positive (its level-1 ancestor) and 2
// negatives (one per level), so the batch becomes B + B + 2B rows: input rows, positives, negatives.
#include "feature/tdm_rows.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::feature {
namespace tdm_rows_test {

// A sampler over the node and edge tables `nodes`, `edges` (attrs tree_level, item_id, cat).
std::shared_ptr<const tdm::TdmSampler> sampler(const data::testing::TempDir& dir, const std::string& nodes,
                                               const std::string& edges, bool hash_ids) {
  tdm::TdmSamplerConfig c;
  c.item_input_path = dir.write("node_table.txt", nodes);
  c.edge_input_path = dir.write("edge_table.txt", edges);
  c.attr_fields = {"tree_level", "item_id", "cat"};
  c.item_id_field = "item_id";
  c.attr_delimiter = ",";
  c.layer_num_sample = {0, 1, 1};
  c.load_threads = 1;
  c.hash_ids = hash_ids;
  return tdm::TdmSampler::create(c);
}

std::shared_ptr<const tdm::TdmSampler> sampler(const data::testing::TempDir& dir) {
  return sampler(dir,
                 "id:int64\tweight:float\tfeature:string\n-1\t1.0\t-1,100,r\n100\t1.0\t0,100,r\n"
                 "10\t1.0\t1,10,c10\n11\t1.0\t1,11,c11\n1\t1.0\t2,1,a\n2\t1.0\t2,2,b\n"
                 "3\t1.0\t2,3,c\n4\t1.0\t2,4,d\n",
                 "src_id:int64\tdst_id:int64\tweight:float\n1\t10\t1.0\n2\t10\t1.0\n3\t11\t1.0\n"
                 "4\t11\t1.0\n",
                 false);
}

data::StringColumn text(const std::string& name, const std::vector<std::string>& cells) {
  data::StringColumn c;
  c.name = name;
  for (const auto& s : cells) c.append(s);
  return c;
}

std::vector<std::string> cells(const data::StringColumn& c) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < c.size(); ++i) out.emplace_back(c.cell(i));
  return out;
}

TEST(TdmRows, TextBatchLayout) {
  data::testing::TempDir dir;
  TdmRows rows(sampler(dir), {"clk"}, "\x1d", 0, 0, true);
  data::RecordBatch b;
  b.files = {"in.csv"};
  b.origins = {{0, 2}, {0, 3}};
  b.columns = {text("user", {"u1", "u2"}), text("item_id", {"1", "3"}), text("cat", {"a", "c"}),
               text("clk", {"1", "1"})};
  const data::RecordBatch out = rows.expand(b);
  ASSERT_EQ(out.num_rows(), 8);
  EXPECT_EQ(cells(out.columns[0]), (std::vector<std::string>{"u1", "u2", "u1", "u2", "u1", "u1", "u2", "u2"}));
  const std::vector<std::string> items = cells(out.columns[1]);
  EXPECT_EQ(std::vector<std::string>(items.begin(), items.begin() + 4), (std::vector<std::string>{"1", "3", "10", "11"}));
  // Row 0's level-1 negative: drawn from its level (10, 11) without the positive 10, so 11 —
  // unless all kRetryTimes = 5 single draws hit 10 (probability 1/32 per stream), when graphlearn's
  // fallback draws from every node. Counted over 32 seeds: 11 in most of them.
  int other_level_1_node = 0;
  for (uint64_t seed = 0; seed < 32; ++seed) {
    const data::RecordBatch o = TdmRows(sampler(dir), {"clk"}, "\x1d", 0, seed, true).expand(b);
    other_level_1_node += cells(o.columns[1])[4] == "11";
  }
  EXPECT_GE(other_level_1_node, 26);
  EXPECT_EQ(cells(out.columns[3]), (std::vector<std::string>{"1", "1", "1", "1", "0", "0", "0", "0"}));
  const std::vector<std::string> cats = cells(out.columns[2]);
  EXPECT_EQ(cats[2], "c10");
  EXPECT_EQ(cats[3], "c11");
  EXPECT_EQ(out.describe_row(6), "in.csv line 3");  // row 1's first negative names row 1
}

TEST(TdmRows, LeafAndUnknownItems) {
  data::testing::TempDir dir;
  TdmRows rows(sampler(dir), {"clk"}, "\x1d", 0, 0, true);
  data::RecordBatch b;
  b.files = {"in.parquet"};
  b.origin_unit = "row";
  b.origins = {{0, 0}};
  b.columns = {text("item_id", {"4"}), text("clk", {"1"})};
  const data::RecordBatch out = rows.expand(b);
  ASSERT_EQ(out.num_rows(), 4);
  EXPECT_EQ(cells(out.columns[0])[1], "11");
  EXPECT_THROW(
      {
        data::RecordBatch bad = b;
        bad.columns[0] = text("item_id", {"77"});
        rows.expand(bad);
      },
      DataError);
}

// USE_HASH_NODE_ID=1: string ids in the tables and the batch, matched by graphlearn's hash of
// their text; the samples carry the nodes' ids as text; an unknown id is named by its text.
TEST(TdmRows, HashedStringIds) {
  data::testing::TempDir dir;
  TdmRows rows(sampler(dir,
                       "id:string\tweight:float\tfeature:string\n-1\t1.0\t-1,nonleaf#0,r\n"
                       "nonleaf#0\t1.0\t0,nonleaf#0,r\nnonleaf#1\t1.0\t1,nonleaf#1,c1\n"
                       "nonleaf#2\t1.0\t1,nonleaf#2,c2\nx\t1.0\t2,x,a\ny\t1.0\t2,y,b\n"
                       "z\t1.0\t2,z,c\nw\t1.0\t2,w,d\n",
                       "src_id:string\tdst_id:string\tweight:float\nx\tnonleaf#1\t1.0\n"
                       "y\tnonleaf#1\t1.0\nz\tnonleaf#2\t1.0\nw\tnonleaf#2\t1.0\n",
                       true),
               {"clk"}, "\x1d", 0, 0, true);
  data::RecordBatch b;
  b.files = {"in.csv"};
  b.origins = {{0, 2}, {0, 3}};
  b.columns = {text("item_id", {"y", "w"}), text("clk", {"1", "1"})};
  const data::RecordBatch out = rows.expand(b);
  ASSERT_EQ(out.num_rows(), 8);
  const std::vector<std::string> items = cells(out.columns[0]);
  EXPECT_EQ(std::vector<std::string>(items.begin(), items.begin() + 4),
            (std::vector<std::string>{"y", "w", "nonleaf#1", "nonleaf#2"}));
  b.columns[0] = text("item_id", {"y", "q"});
  try {
    rows.expand(b);
    ADD_FAILURE() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("in.csv line 3 column item_id (id 'q'): item id <hashed id "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace tdm_rows_test
}  // namespace tzrec::feature
