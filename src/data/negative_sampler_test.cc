// The four negative samplers: counts (expand / truncation), the weighted distribution
// (chi-square against the weights, fixed seeds, threshold the 0.999 quantile), exclusion rules
// (v1: the batch's items; v2: the users' positive edges; the retry fallback), hard negatives from
// the user's edge list, attributes, determinism per (seed, rank, worker, batch), threads, config
// conversion and errors.
#include "data/negative_sampler.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include "base/error.h"
#include "data/testing_util.h"
#include "tzrec/protos/data.pb.h"

namespace tzrec::data {
namespace negative_sampler_test {

using testing::error_of;
using testing::TempDir;

// Items 0..29 with weight (i % 5) + 1, except item 7 with weight 0; attrs "a<i>:b<i>".
// Users 0..9. Positive edges: user u -> u, u + 10. Hard edges of even users: 25 (w 1), 26 (w 3),
// 27 (w 2), 99 (w 0.5; not an item).
struct World {
  TempDir dir;
  std::string items, users, pos, hard;
  World() {
    std::string t = "id:int64\tweight:float\tattrs:string\n";
    for (int i = 0; i < 30; ++i) t += fmt::format("{}\t{}\ta{}:b{}\n", i, i == 7 ? 0 : i % 5 + 1, i, i);
    items = dir.write("items.txt", t);
    t = "id:int64\tweight:float\n";
    for (int u = 0; u < 10; ++u) t += fmt::format("{}\t1\n", u);
    users = dir.write("users.txt", t);
    t = "userid:int64\titemid:int64\tweight:float\n";
    for (int u = 0; u < 10; ++u) t += fmt::format("{}\t{}\t1\n{}\t{}\t1\n", u, u, u, u + 10);
    pos = dir.write("pos.txt", t);
    t = "userid:int64\titemid:int64\tweight:float\n";
    for (int u = 0; u < 10; u += 2) t += fmt::format("{0}\t25\t1\n{0}\t26\t3\n{0}\t27\t2\n{0}\t99\t0.5\n", u);
    hard = dir.write("hard.txt", t);
  }
  NegativeSamplerConfig config(SamplerKind kind, uint32_t num_sample) const {
    NegativeSamplerConfig c;
    c.kind = kind;
    c.config_path = std::string("data_config.") + sampler_kind_name(kind);
    c.item_input_path = items;
    c.user_input_path = users;
    c.pos_edge_input_path = pos;
    c.hard_neg_edge_input_path = hard;
    c.num_sample = num_sample;
    c.num_hard_sample = 2;
    c.attr_fields = {"item_id", "cate"};
    c.item_id_field = "item_id";
    c.user_id_field = "user_id";
    c.load_threads = 2;
    return c;
  }
};

double weight_of(int64_t item) { return item == 7 ? 0.0 : static_cast<double>(item % 5 + 1); }

SampleContext ctx(int64_t batch, uint64_t seed = 1, int32_t rank = 0, int32_t worker = 0) {
  SampleContext c;
  c.seed = seed;
  c.rank = rank;
  c.worker = worker;
  c.batch_index = batch;
  return c;
}

double chi_square(const std::map<int64_t, int64_t>& counts, const std::map<int64_t, double>& probs, int64_t draws) {
  double chi2 = 0.0;
  for (const auto& [k, p] : probs) {
    const auto it = counts.find(k);
    const double got = it == counts.end() ? 0.0 : static_cast<double>(it->second);
    const double expected = p * static_cast<double>(draws);
    chi2 += (got - expected) * (got - expected) / expected;
  }
  return chi2;
}

TEST(NegativeSampler, CountsFollowExpandAndTruncation) {
  World w;
  const auto s = NegativeSampler::create(w.config(SamplerKind::kNegativeSampler, 10), true);
  SampledNegatives out;
  const std::vector<int64_t> three{1, 2, 3};
  s->sample(three, {}, ctx(0), &out);
  EXPECT_EQ(out.size(), 10);  // expand = ceil(10 / 3) = 4, rows 0..2 give 4 + 4 + 2
  EXPECT_EQ(out.num_simple, 10);
  EXPECT_TRUE(out.hard_neg_indices.empty());
  const std::vector<int64_t> many(25, 4);
  s->sample(many, {}, ctx(1), &out);
  EXPECT_EQ(out.size(), 10);  // expand 1, the first 10 rows
  s->sample(std::vector<int64_t>{}, {}, ctx(2), &out);
  EXPECT_EQ(out.size(), 0);  // an empty batch draws nothing
  ASSERT_EQ(out.attrs.size(), 2u);
  EXPECT_EQ(out.attrs[0].size(), 0);
  const auto zero = NegativeSampler::create(w.config(SamplerKind::kNegativeSampler, 0), true);
  zero->sample(three, {}, ctx(0), &out);
  EXPECT_EQ(out.size(), 0);
  EXPECT_EQ(zero->estimated_sample_num(8), 0);
}

TEST(NegativeSampler, EvalUsesNumEvalSampleWhenSet) {
  World w;
  auto c = w.config(SamplerKind::kNegativeSampler, 10);
  EXPECT_EQ(NegativeSampler::create(c, false)->num_sample(), 10u);  // unset: num_sample
  c.num_eval_sample = 4;
  EXPECT_EQ(NegativeSampler::create(c, true)->num_sample(), 10u);
  const auto eval = NegativeSampler::create(c, false);
  EXPECT_EQ(eval->num_sample(), 4u);
  SampledNegatives out;
  eval->sample(std::vector<int64_t>{1, 2}, {}, ctx(0), &out);
  EXPECT_EQ(out.size(), 4);
  c.num_eval_sample = 0;  // set to 0: no negatives in evaluation
  NegativeSampler::create(c, false)->sample(std::vector<int64_t>{1, 2}, {}, ctx(0), &out);
  EXPECT_EQ(out.size(), 0);
}

// negative_sampler: weighted by item weight, never the batch's items. Batch {0, 1, 2, 3},
// 64 negatives x 2000 batches; 25 items can be drawn (not 0..3, not the zero-weight 7):
// chi-square with 24 degrees of freedom below 51.18 (0.999 quantile).
TEST(NegativeSampler, WeightedWithoutTheBatchItems) {
  World w;
  const auto s = NegativeSampler::create(w.config(SamplerKind::kNegativeSampler, 64), true);
  const std::vector<int64_t> batch{0, 1, 2, 3};
  std::map<int64_t, int64_t> counts;
  SampledNegatives out;
  int64_t draws = 0;
  for (int64_t b = 0; b < 2000; ++b) {
    s->sample(batch, {}, ctx(b, 5), &out);
    ASSERT_EQ(out.size(), 64);
    for (int64_t i = 0; i < out.size(); ++i) {
      const int64_t id = out.ids[static_cast<size_t>(i)];
      ++counts[id];
      // The attributes are the drawn item's.
      ASSERT_EQ(out.attrs[0].cell(i), "a" + std::to_string(id));
      ASSERT_EQ(out.attrs[1].cell(i), "b" + std::to_string(id));
    }
    draws += out.size();
  }
  for (int64_t id : {0, 1, 2, 3, 7}) EXPECT_EQ(counts.count(id), 0u) << id;
  std::map<int64_t, double> probs;
  double sum = 0;
  for (int64_t i = 4; i < 30; ++i) sum += weight_of(i);
  for (int64_t i = 4; i < 30; ++i) {
    if (weight_of(i) > 0) probs[i] = weight_of(i) / sum;
  }
  EXPECT_EQ(probs.size(), 25u);
  EXPECT_LT(chi_square(counts, probs, draws), 51.18);
}

TEST(NegativeSampler, ExclusionIsDroppedWhenTheBatchHoldsEveryItem) {
  World w;
  const auto s = NegativeSampler::create(w.config(SamplerKind::kNegativeSampler, 20), true);
  std::vector<int64_t> all;
  for (int64_t i = 0; i < 30; ++i) all.push_back(i);
  SampledNegatives out;
  s->sample(all, {}, ctx(0), &out);  // graphlearn's retry limit: after 3 rounds, any item
  EXPECT_EQ(out.size(), 20);
  for (int64_t id : out.ids) EXPECT_NE(id, 7);  // zero weight still never drawn
}

// negative_sampler_v2: uniform over the positive edges' items, never the user's positives.
// Batch (user 0, item 0), 50 negatives x 2000 batches: 18 items can be drawn (0..19 without 0
// and 10; 20..29 have no positive edge): chi-square with 17 degrees of freedom below 40.79.
TEST(NegativeSamplerV2, UniformOverEdgeItemsWithoutTheUsersPositives) {
  World w;
  const auto s = NegativeSampler::create(w.config(SamplerKind::kNegativeSamplerV2, 50), true);
  std::map<int64_t, int64_t> counts;
  SampledNegatives out;
  int64_t draws = 0;
  for (int64_t b = 0; b < 2000; ++b) {
    s->sample(std::vector<int64_t>{0}, std::vector<int64_t>{0}, ctx(b, 9), &out);
    ASSERT_EQ(out.size(), 50);
    for (int64_t id : out.ids) ++counts[id];
    draws += out.size();
  }
  std::map<int64_t, double> probs;
  for (int64_t i = 0; i < 20; ++i) {
    if (i != 0 && i != 10) probs[i] = 1.0 / 18;
  }
  for (const auto& [id, n] : counts) EXPECT_EQ(probs.count(id), 1u) << id;
  EXPECT_LT(chi_square(counts, probs, draws), 40.79);
}

// Row i's negatives exclude the positives of users 0..i (graphlearn's set grows over the rows).
TEST(NegativeSamplerV2, EachRowExcludesItsUsersPositives) {
  World w;
  const auto s = NegativeSampler::create(w.config(SamplerKind::kNegativeSamplerV2, 40), true);
  const std::vector<int64_t> users{3, 1, 4, 1};
  const std::vector<int64_t> items{3, 11, 14, 1};
  SampledNegatives out;
  for (int64_t b = 0; b < 300; ++b) {
    s->sample(items, users, ctx(b), &out);
    ASSERT_EQ(out.size(), 40);  // expand 10 per row
    std::set<int64_t> excluded;
    for (size_t row = 0; row < users.size(); ++row) {
      excluded.insert({users[row], users[row] + 10, items[row]});
      for (size_t j = row * 10; j < row * 10 + 10; ++j) {
        ASSERT_EQ(excluded.count(out.ids[j]), 0u) << "row " << row << " batch " << b;
        ASSERT_LT(out.ids[j], 20);
      }
    }
  }
  EXPECT_NE(error_of<DataError>([&] {
              s->sample(items, std::vector<int64_t>{1}, ctx(0), &out);
            }).find("data_config.negative_sampler_v2: 1 user ids for 4 item ids"),
            std::string::npos);
}

// A user with far more positive edges than the mean: the row's exclusion set outgrows the room
// sized from the mean degree (room for 32 keys, 101 inserted) and still excludes every one.
TEST(NegativeSamplerV2, ExclusionOfAUserWithManyMoreEdgesThanTheMean) {
  TempDir dir;
  std::string t = "id:int64\tweight:float\tattrs:string\n";
  for (int i = 0; i < 300; ++i) t += fmt::format("{}\t1\ta{}:b{}\n", i, i, i);
  const std::string items = dir.write("items.txt", t);
  t = "id:int64\tweight:float\n";
  for (int u = 0; u < 20; ++u) t += fmt::format("{}\t1\n", u);
  const std::string users = dir.write("users.txt", t);
  // User 0 -> items 0..99; users 1..19 -> 10 items each, 100 + 10 (u - 1) ... (mean degree 14).
  t = "userid:int64\titemid:int64\tweight:float\n";
  for (int i = 0; i < 100; ++i) t += fmt::format("0\t{}\t1\n", i);
  for (int u = 1; u < 20; ++u) {
    for (int k = 0; k < 10; ++k) t += fmt::format("{}\t{}\t1\n", u, 100 + 10 * (u - 1) + k);
  }
  const std::string pos = dir.write("pos.txt", t);
  World w;
  NegativeSamplerConfig c = w.config(SamplerKind::kNegativeSamplerV2, 10);
  c.item_input_path = items;
  c.user_input_path = users;
  c.pos_edge_input_path = pos;
  const auto s = NegativeSampler::create(c, true);
  SampledNegatives out;
  const std::vector<int64_t> user{0};
  const std::vector<int64_t> item{150};
  for (int64_t b = 0; b < 200; ++b) {
    s->sample(item, user, ctx(b), &out);
    ASSERT_EQ(out.size(), 10);
    for (int64_t id : out.ids) {
      ASSERT_GE(id, 100) << "batch " << b;  // not one of user 0's positives
      ASSERT_NE(id, 150) << "batch " << b;  // nor the row's item
    }
  }
}

// hard_negative_sampler: the simple negatives, then per user its hard edges by weight.
TEST(HardNegativeSampler, HardNegativesFromTheUsersEdges) {
  World w;
  const auto s = NegativeSampler::create(w.config(SamplerKind::kHardNegativeSampler, 6), true);
  EXPECT_EQ(s->estimated_sample_num(3), 6 + 2 * 3);
  SampledNegatives out;
  const std::vector<int64_t> users{0, 1, 2};
  s->sample(std::vector<int64_t>{5, 6, 8}, users, ctx(0), &out);
  ASSERT_EQ(out.num_simple, 6);
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t id = out.ids[static_cast<size_t>(i)];
    EXPECT_TRUE(id != 5 && id != 6 && id != 8 && id != 7) << id;
  }
  ASSERT_EQ(out.num_hard(), 4);  // users 0 and 2: the 2 heaviest of 25 (1), 26 (3), 27 (2), 99 (0.5)
  EXPECT_EQ(std::vector<int64_t>(out.ids.begin() + 6, out.ids.end()), (std::vector<int64_t>{26, 27, 26, 27}));
  EXPECT_EQ(out.hard_neg_indices, (std::vector<std::array<int64_t, 2>>{{0, 0}, {0, 1}, {2, 0}, {2, 1}}));
  EXPECT_EQ(out.attrs[0].cell(6), "a26");
  EXPECT_EQ(out.attrs[1].cell(7), "b27");
  EXPECT_EQ(out.num_missing, 0);
  // num_hard_sample 0: every hard edge; 99 is not an item, so its attributes are empty.
  auto c = w.config(SamplerKind::kHardNegativeSampler, 6);
  c.num_hard_sample = 0;
  NegativeSampler::create(c, true)->sample(std::vector<int64_t>{5}, std::vector<int64_t>{4}, ctx(0), &out);
  ASSERT_EQ(out.num_hard(), 4);
  EXPECT_EQ(std::vector<int64_t>(out.ids.begin() + 6, out.ids.end()), (std::vector<int64_t>{26, 27, 25, 99}));
  EXPECT_EQ(out.attrs[0].cell(9), "");
  EXPECT_EQ(out.attrs[1].cell(9), "");
  EXPECT_EQ(out.num_missing, 1);
  EXPECT_EQ(out.hard_neg_indices.back(), (std::array<int64_t, 2>{0, 3}));
}

TEST(HardNegativeSamplerV2, SimpleFromEdgesAndHardFromEdges) {
  World w;
  const auto s = NegativeSampler::create(w.config(SamplerKind::kHardNegativeSamplerV2, 8), true);
  SampledNegatives out;
  for (int64_t b = 0; b < 50; ++b) {
    s->sample(std::vector<int64_t>{2, 13}, std::vector<int64_t>{2, 3}, ctx(b), &out);
    ASSERT_EQ(out.num_simple, 8);
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t id = out.ids[static_cast<size_t>(i)];
      ASSERT_TRUE(id != 2 && id != 12 && id < 20) << id;
    }
    ASSERT_EQ(out.num_hard(), 2);  // user 2: 26, 27; user 3: none
    EXPECT_EQ(out.ids[8], 26);
    EXPECT_EQ(out.hard_neg_indices, (std::vector<std::array<int64_t, 2>>{{0, 0}, {0, 1}}));
  }
}

TEST(NegativeSampler, DeterministicPerSeedRankWorkerAndBatch) {
  World w;
  for (SamplerKind kind : {SamplerKind::kNegativeSampler, SamplerKind::kNegativeSamplerV2}) {
    const auto s = NegativeSampler::create(w.config(kind, 32), true);
    const std::vector<int64_t> items{1, 2}, users{1, 2};
    auto ids = [&](const SampleContext& c) {
      SampledNegatives out;
      s->sample(items, users, c, &out);
      return out.ids;
    };
    EXPECT_EQ(ids(ctx(7, 1, 2, 3)), ids(ctx(7, 1, 2, 3)));
    EXPECT_NE(ids(ctx(7, 1, 2, 3)), ids(ctx(8, 1, 2, 3)));  // batch
    EXPECT_NE(ids(ctx(7, 1, 2, 3)), ids(ctx(7, 2, 2, 3)));  // seed
    EXPECT_NE(ids(ctx(7, 1, 2, 3)), ids(ctx(7, 1, 0, 3)));  // rank
    EXPECT_NE(ids(ctx(7, 1, 2, 3)), ids(ctx(7, 1, 2, 0)));  // worker
    // Evaluation draws from another stream than training.
    auto c = w.config(kind, 32);
    const auto eval = NegativeSampler::create(c, false);
    SampledNegatives e;
    eval->sample(items, users, ctx(7, 1, 2, 3), &e);
    EXPECT_NE(e.ids, ids(ctx(7, 1, 2, 3)));
    // A new sampler over the same tables gives the same negatives (a resumed run).
    SampledNegatives again;
    NegativeSampler::create(c, true)->sample(items, users, ctx(7, 1, 2, 3), &again);
    EXPECT_EQ(again.ids, ids(ctx(7, 1, 2, 3)));
  }
}

TEST(NegativeSampler, OneSamplerServesManyThreads) {
  World w;
  const auto s = NegativeSampler::create(w.config(SamplerKind::kHardNegativeSamplerV2, 64), true);
  const std::vector<int64_t> items{1, 2, 3, 4}, users{0, 1, 2, 3};
  std::vector<std::vector<int64_t>> serial(40);
  for (int b = 0; b < 40; ++b) {
    SampledNegatives out;
    s->sample(items, users, ctx(b), &out);
    serial[b] = out.ids;
  }
  std::vector<std::vector<int64_t>> parallel(40);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      SampledNegatives out;
      for (int b = t; b < 40; b += 4) {
        s->sample(items, users, ctx(b), &out);
        parallel[b] = out.ids;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(serial, parallel);
}

TEST(NegativeSampler, KeysOfBatchIds) {
  World w;
  auto c = w.config(SamplerKind::kNegativeSampler, 4);
  const auto s = NegativeSampler::create(c, true);
  EXPECT_EQ(s->key_of(std::string_view("42")), 42);
  EXPECT_EQ(s->key_of(std::string_view("")), 0);  // null ids are 0, as TorchEasyRec's fill_null(0)
  EXPECT_FALSE(s->key_of(std::string_view("4x")).has_value());
  EXPECT_EQ(s->key_of(int64_t{42}), 42);
}

TEST(NegativeSampler, HashedStringIds) {
  TempDir dir;
  NegativeSamplerConfig c;
  c.item_input_path =
      dir.write("items.txt", "id:string\tweight:float\tattrs:string\nitem_a\t1\titem_a\nitem_b\t1\titem_b\n");
  c.num_sample = 8;
  c.attr_fields = {"item_id"};
  c.item_id_field = "item_id";
  c.hash_ids = true;
  const auto s = NegativeSampler::create(c, true);
  const int64_t a = *s->key_of(std::string_view("item_a"));
  EXPECT_EQ(a, static_cast<int64_t>(graphlearn_hash64("item_a")));
  SampledNegatives out;
  s->sample(std::vector<int64_t>{a}, {}, ctx(0), &out);
  ASSERT_EQ(out.size(), 8);
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(out.attrs[0].cell(i), "item_b");
}

// ---- config and errors -------------------------------------------------------------------------

TEST(NegativeSamplerConfig, FromDataConfig) {
  protos::DataConfig dc;
  EXPECT_FALSE(negative_sampler_config(dc).has_value());
  auto* m = dc.mutable_negative_sampler();
  m->set_input_path("items.txt");
  m->set_num_sample(1024);
  m->add_attr_fields("adgroup_id");
  m->add_attr_fields("cate_id");
  m->set_item_id_field("adgroup_id");
  m->set_attr_delimiter("\x02");
  auto c = negative_sampler_config(dc);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, SamplerKind::kNegativeSampler);
  EXPECT_EQ(c->config_path, "data_config.negative_sampler");
  EXPECT_EQ(c->item_input_path, "items.txt");
  EXPECT_EQ(c->num_sample, 1024u);
  EXPECT_FALSE(c->num_eval_sample.has_value());
  EXPECT_EQ(c->attr_fields, (std::vector<std::string>{"adgroup_id", "cate_id"}));
  EXPECT_EQ(c->attr_delimiter, "\x02");
  EXPECT_EQ(c->field_delimiter, "\t");
  EXPECT_EQ(c->item_id_delim, ";");
  auto* h = dc.mutable_hard_negative_sampler_v2();
  h->set_user_input_path("u");
  h->set_item_input_path("i");
  h->set_pos_edge_input_path("p");
  h->set_hard_neg_edge_input_path("h");
  h->set_num_sample(8);
  h->set_num_hard_sample(3);
  h->set_num_eval_sample(0);
  h->set_item_id_field("item");
  h->set_user_id_field("user");
  h->set_field_delimiter(",");
  c = negative_sampler_config(dc);
  EXPECT_EQ(c->kind, SamplerKind::kHardNegativeSamplerV2);
  EXPECT_EQ(c->config_path, "data_config.hard_negative_sampler_v2");
  EXPECT_EQ(c->pos_edge_input_path, "p");
  EXPECT_EQ(c->hard_neg_edge_input_path, "h");
  EXPECT_EQ(c->num_hard_sample, 3u);
  EXPECT_EQ(c->num_eval_sample, std::optional<uint32_t>(0));
  EXPECT_EQ(c->user_id_field, "user");
  EXPECT_EQ(c->field_delimiter, ",");
  EXPECT_EQ(c->attr_delimiter, ":");
  dc.mutable_tdm_sampler();  // tdm/tdm_sampler.h reads it
  EXPECT_FALSE(negative_sampler_config(dc).has_value());
}

TEST(NegativeSamplerErrors, Config) {
  World w;
  auto c = w.config(SamplerKind::kNegativeSamplerV2, 4);
  c.item_id_field = "";
  EXPECT_EQ(error_of<ConfigError>([&] { NegativeSampler::create(c, true); }),
            "data_config.negative_sampler_v2.item_id_field: is empty; name the input column holding the batch's "
            "item ids");
  c = w.config(SamplerKind::kNegativeSamplerV2, 4);
  c.user_id_field = "";
  EXPECT_NE(error_of<ConfigError>([&] { NegativeSampler::create(c, true); }).find("user_id_field: is empty"),
            std::string::npos);
  c = w.config(SamplerKind::kHardNegativeSampler, 4);
  c.hard_neg_edge_input_path = "";
  EXPECT_NE(error_of<ConfigError>([&] {
              NegativeSampler::create(c, true);
            }).find("data_config.hard_negative_sampler.hard_neg_edge_input_path: is empty"),
            std::string::npos);
  c = w.config(SamplerKind::kNegativeSampler, 4);
  c.item_input_path = "";
  EXPECT_NE(error_of<ConfigError>([&] {
              NegativeSampler::create(c, true);
            }).find("data_config.negative_sampler.input_path: is empty"),
            std::string::npos);
  c = w.config(SamplerKind::kNegativeSampler, 4);
  c.attr_fields = {"a", "a"};
  EXPECT_NE(error_of<ConfigError>([&] { NegativeSampler::create(c, true); }).find("attr_fields: lists 'a' twice"),
            std::string::npos);
  c = w.config(SamplerKind::kNegativeSampler, 4);
  c.attr_fields = {"item_id", "cate", "brand"};  // the table holds 2 attributes per item
  EXPECT_NE(error_of<DataError>([&] { NegativeSampler::create(c, true); })
                .find("items.txt (data_config.negative_sampler.input_path) line 2: field 3 'attrs' (attrs): 'a0:b0' "
                      "holds 2 attributes separated by attr_delimiter, but attr_fields lists 3"),
            std::string::npos);
}

TEST(NegativeSamplerErrors, Tables) {
  World w;
  auto c = w.config(SamplerKind::kNegativeSampler, 4);
  c.item_input_path = w.dir.write("zero.txt", "id:int64\tweight:float\tattrs:string\n1\t0\ta:b\n2\t0\tc:d\n");
  EXPECT_NE(error_of<DataError>([&] {
              NegativeSampler::create(c, true);
            }).find("zero.txt (data_config.negative_sampler.input_path): all 2 item weights are 0"),
            std::string::npos);
  c.item_input_path = w.dir.write("empty.txt", "id:int64\tweight:float\tattrs:string\n");
  EXPECT_NE(error_of<DataError>([&] { NegativeSampler::create(c, true); }).find("the item table has no rows"),
            std::string::npos);
  // v2 draws from the positive edges: item weights may all be 0, but the edges must exist.
  c = w.config(SamplerKind::kNegativeSamplerV2, 4);
  c.item_input_path = w.dir.write("zero2.txt", "id:int64\tweight:float\tattrs:string\n1\t0\ta:b\n");
  EXPECT_NO_THROW(NegativeSampler::create(c, true));
  c.pos_edge_input_path = w.dir.write("noedges.txt", "userid:int64\titemid:int64\tweight:float\n");
  EXPECT_NE(error_of<DataError>([&] { NegativeSampler::create(c, true); })
                .find("noedges.txt (data_config.negative_sampler_v2.pos_edge_input_path): the positive edge table "
                      "has no edges"),
            std::string::npos);
  c = w.config(SamplerKind::kNegativeSamplerV2, 4);
  c.user_input_path = w.dir.write("badusers.txt", "id:int64\tweight:float\n1\t-3\n");
  EXPECT_NE(error_of<DataError>([&] {
              NegativeSampler::create(c, true);
            }).find("badusers.txt (data_config.negative_sampler_v2.user_input_path) line 2: field 2 'weight'"),
            std::string::npos);
}

// Attributes of every length (empty, short, longer than the 8- and 16-byte copy steps) are split
// exactly, with a one-character delimiter and with a delimiter set.
TEST(NegativeSampler, AttributesSplitExactly) {
  for (const std::string delim : {":", ":;"}) {
    TempDir dir;
    std::string text = "id:int64\tweight:float\tattrs:string\n";
    std::map<int64_t, std::vector<std::string>> expected;
    for (int i = 0; i < 40; ++i) {
      std::vector<std::string> cells;
      for (int a = 0; a < 5; ++a) cells.push_back(std::string(static_cast<size_t>((i * 7 + a * 3) % 23), 'a' + a));
      std::string attrs;
      for (int a = 0; a < 5; ++a)
        attrs += (a ? std::string(1, delim[static_cast<size_t>(a) % delim.size()]) : "") + cells[a];
      text += fmt::format("{}\t1\t{}\n", i, attrs);
      expected[i] = cells;
    }
    NegativeSamplerConfig c;
    c.item_input_path = dir.write("items.txt", text);
    c.num_sample = 500;
    c.attr_fields = {"f0", "f1", "f2", "f3", "f4"};
    c.attr_delimiter = delim;
    c.item_id_field = "f0";
    const auto s = NegativeSampler::create(c, true);
    SampledNegatives out;
    s->sample(std::vector<int64_t>{3}, {}, ctx(0), &out);
    ASSERT_EQ(out.size(), 500);
    for (int64_t j = 0; j < out.size(); ++j) {
      const auto& cells = expected[out.ids[static_cast<size_t>(j)]];
      for (size_t a = 0; a < 5; ++a) ASSERT_EQ(out.attrs[a].cell(j), cells[a]) << delim << " " << j << " " << a;
    }
    EXPECT_EQ(out.attrs[4].name, "f4");
    EXPECT_EQ(out.attrs[0].offsets.back(), static_cast<int64_t>(out.attrs[0].bytes.size()));
  }
}

// A table smaller than num_sample is fine: draws are with replacement.
TEST(NegativeSampler, FewerItemsThanNegatives) {
  TempDir dir;
  NegativeSamplerConfig c;
  c.item_input_path = dir.write("items.txt", "id:int64\tweight:float\n1\t1\n2\t1\n");
  c.num_sample = 100;
  c.item_id_field = "item_id";
  const auto s = NegativeSampler::create(c, true);
  SampledNegatives out;
  s->sample(std::vector<int64_t>{1}, {}, ctx(0), &out);
  ASSERT_EQ(out.size(), 100);
  EXPECT_TRUE(out.attrs.empty());
  for (int64_t id : out.ids) EXPECT_EQ(id, 2);
}

}  // namespace negative_sampler_test
}  // namespace tzrec::data
