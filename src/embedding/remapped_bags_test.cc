// RemappedBags::remap (embedding/remapped_bags.h): the in-place path (a batch holding exactly the
// bags' features, tables' bags consecutive) and the gathered path give the same batch. Expected
// values by hand: rows_of_tables maps id x of table t to 100 · t + x, so each remapped value shows
// its table and id.
#include "embedding/remapped_bags.h"

#include <gtest/gtest.h>

namespace tzrec::embedding {
namespace remapped_bags_test {

using Ids = std::vector<int64_t>;

Ids ids_of(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kInt64).contiguous();
  return Ids(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

BagConfig bag(const std::string& feature, const std::string& table, const std::string& output_key = "",
              bool weighted = true) {
  BagConfig b;
  b.feature_name = feature;
  b.table_name = table;
  b.output_key = output_key;
  b.weighted = weighted;
  return b;
}

// Batch of 2: feature f: [1], [2, 3]; g: [], [4]; h: [5], [6].
sparse::KeyedJaggedTensor batch(bool weights = false) {
  return sparse::KeyedJaggedTensor({"f", "g", "h"}, torch::tensor({1, 2, 3, 4, 5, 6}, torch::kInt64),
                                   torch::tensor({1, 2, 0, 1, 1, 1}, torch::kInt64),
                                   weights ? torch::tensor({.1f, .2f, .3f, .4f, .5f, .6f}) : torch::Tensor());
}

struct Calls {
  int count = 0;
  std::vector<Ids> ids;  // per table, as rows_of_tables saw them
};

RemappedBags::RowsOfTables rows_of(Calls* calls) {
  return [calls](const std::vector<torch::Tensor>& ids) {
    ++calls->count;
    calls->ids.clear();
    std::vector<torch::Tensor> rows(ids.size());
    for (size_t t = 0; t < ids.size(); ++t) {
      calls->ids.push_back(ids[t].defined() ? ids_of(ids[t]) : Ids{});
      if (ids[t].defined()) rows[t] = ids[t] + static_cast<int64_t>(100 * t);
    }
    return rows;
  };
}

TEST(RemappedBags, OneTableReadByEveryFeatureInPlace) {
  const RemappedBags bags({"t0"}, {bag("f", "t0"), bag("g", "t0"), bag("h", "t0")});
  const sparse::KeyedJaggedTensor in = batch();
  Calls calls;
  const sparse::KeyedJaggedTensor out = bags.remap(in, rows_of(&calls));
  EXPECT_EQ(calls.count, 1);
  EXPECT_EQ(calls.ids, (std::vector<Ids>{{1, 2, 3, 4, 5, 6}}));
  EXPECT_EQ(out.keys(), (std::vector<std::string>{"f", "g", "h"}));
  EXPECT_EQ(ids_of(out.values()), (Ids{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ids_of(out.lengths()), (Ids{1, 2, 0, 1, 1, 1}));
  EXPECT_EQ(out.offset_per_key(), (std::vector<int64_t>{0, 3, 4, 6}));
  // No copy of the lengths: the output shares the input's.
  EXPECT_EQ(out.lengths().data_ptr(), in.lengths().data_ptr());
}

TEST(RemappedBags, ConsecutiveTablesInPlaceMatchTheGatheredPath) {
  // Tables listed in another order than their bags: t1 reads f, g; t0 reads h.
  const RemappedBags bags({"t0", "t1"}, {bag("f", "t1"), bag("g", "t1"), bag("h", "t0")});
  Calls calls;
  for (bool weights : {false, true}) {
    const sparse::KeyedJaggedTensor out = bags.remap(batch(weights), rows_of(&calls));
    EXPECT_EQ(calls.ids, (std::vector<Ids>{{5, 6}, {1, 2, 3, 4}}));
    EXPECT_EQ(ids_of(out.values()), (Ids{101, 102, 103, 104, 5, 6}));
    EXPECT_EQ(ids_of(out.lengths()), (Ids{1, 2, 0, 1, 1, 1}));
    EXPECT_EQ(out.weights().defined(), weights);
    if (weights) EXPECT_TRUE(torch::allclose(out.weights(), torch::tensor({.1f, .2f, .3f, .4f, .5f, .6f})));
  }
}

TEST(RemappedBags, GatheredWhenTheBatchIsNotAligned) {
  Calls calls;
  {
    // Bags of t0 not consecutive (f, h), and g on t1 between them.
    const RemappedBags bags({"t0", "t1"}, {bag("f", "t0"), bag("g", "t1"), bag("h", "t0")});
    const sparse::KeyedJaggedTensor out = bags.remap(batch(), rows_of(&calls));
    EXPECT_EQ(calls.ids, (std::vector<Ids>{{1, 2, 3, 5, 6}, {4}}));
    EXPECT_EQ(ids_of(out.values()), (Ids{1, 2, 3, 104, 5, 6}));
  }
  {
    // A feature feeding two tables (its second bag under an output key), h left out.
    const RemappedBags bags({"t0", "t1"}, {bag("f", "t0"), bag("f", "t1", "f_wide"), bag("g", "t0")});
    const sparse::KeyedJaggedTensor out = bags.remap(batch(), rows_of(&calls));
    EXPECT_EQ(calls.ids, (std::vector<Ids>{{1, 2, 3, 4}, {1, 2, 3}}));
    EXPECT_EQ(out.keys(), (std::vector<std::string>{"f", "f_wide", "g"}));
    EXPECT_EQ(ids_of(out.values()), (Ids{1, 2, 3, 101, 102, 103, 4}));
    EXPECT_EQ(ids_of(out.lengths()), (Ids{1, 2, 1, 2, 0, 1}));
  }
  {
    // Weighted batch, one bag unweighted: its weights become ones, as from_jagged fills them.
    const RemappedBags bags({"t0"}, {bag("f", "t0"), bag("g", "t0", "", false), bag("h", "t0")});
    const sparse::KeyedJaggedTensor out = bags.remap(batch(true), rows_of(&calls));
    EXPECT_EQ(ids_of(out.values()), (Ids{1, 2, 3, 4, 5, 6}));
    EXPECT_TRUE(torch::allclose(out.weights(), torch::tensor({.1f, .2f, .3f, 1.f, .5f, .6f})));
  }
}

}  // namespace remapped_bags_test
}  // namespace tzrec::embedding
