#include "embedding/embedding_bag_collection.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/embedding_group.h"
#include "embedding/testing_tensors.h"

namespace tzrec::embedding {
namespace embedding_bag_collection_test {

using testing::i64;

using sparse::JaggedTensor;
using sparse::KeyedJaggedTensor;
using Bags = std::vector<BagConfig>;

torch::Tensor f32(std::vector<float> v) { return torch::tensor(v, torch::kFloat32); }

// Plain per-row reference: out[b] = sum_j w_j * table[id_j] (optionally / L_b), zeros when empty.
torch::Tensor reference_pool(const torch::Tensor& table, const JaggedTensor& jt, bool weighted,
                             bool mean) {
  const int64_t batch = jt.lengths.size(0);
  std::vector<torch::Tensor> rows;
  int64_t start = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = jt.lengths[b].item<int64_t>();
    torch::Tensor acc = torch::zeros({table.size(1)});
    if (len > 0) {
      torch::Tensor ids = jt.values.slice(0, start, start + len);
      torch::Tensor e = table.index_select(0, ids);  // [len, dim]
      if (weighted) e = e * jt.weights.slice(0, start, start + len).unsqueeze(1);
      acc = e.sum(0);
      if (mean) acc = acc / static_cast<double>(len);
    }
    rows.push_back(acc);
    start += len;
  }
  return torch::stack(rows);
}

class EbcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(7);
    // B = 4. f_a has a duplicated id in row 0 and an empty row 2; f_b shares table t1; f_c is
    // weighted on t2; f_x is not looked up.
    a_ = {i64({1, 1, 3, 9, 0}), i64({3, 1, 0, 1}), f32({0.5, 2, -1, 3, 1.5})};
    b_ = {i64({2, 2, 2, 4, 5}), i64({0, 3, 1, 1}), f32({1, 1, 1, 1, 1})};
    c_ = {i64({6, 0, 6, 1}), i64({2, 1, 1, 0}), f32({0.25, -2, 4, 0.5})};
    JaggedTensor x{i64({100}), i64({1, 0, 0, 0}), f32({1})};
    kjt_ = KeyedJaggedTensor::from_jagged({"f_x", "f_a", "f_b", "f_c"}, {x, a_, b_, c_});
    tables_ = {{"t1", 10, 4, "", true}, {"t2", 7, 3, "", true}};
  }

  std::vector<BagConfig> bags() const {
    BagConfig a{"f_a", "t1", "sum", "", /*weighted=*/false};
    BagConfig b{"f_b", "t1", "mean", "", false};
    BagConfig c{"f_c", "t2", "sum", "", true};
    BagConfig cm{"f_c", "t2", "mean", "f_c_mean", true};
    return {a, b, c, cm};
  }

  JaggedTensor a_, b_, c_;
  KeyedJaggedTensor kjt_;
  std::vector<TableConfig> tables_;
};

TEST_F(EbcTest, ForwardMatchesPerRowReference) {
  EmbeddingBagCollection ebc(tables_, bags());
  auto kt = ebc->forward(kjt_);
  ASSERT_EQ(kt.keys(), (std::vector<std::string>{"f_a", "f_b", "f_c", "f_c_mean"}));
  EXPECT_EQ(kt.length_per_key(), (std::vector<int64_t>{4, 4, 3, 3}));
  auto t1 = ebc->tables()[0].weight.detach();
  auto t2 = ebc->tables()[1].weight.detach();
  EXPECT_TRUE(torch::allclose(kt["f_a"], reference_pool(t1, a_, false, false), 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(kt["f_b"], reference_pool(t1, b_, false, true), 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(kt["f_c"], reference_pool(t2, c_, true, false), 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(kt["f_c_mean"], reference_pool(t2, c_, true, true), 1e-6, 1e-6));
  // Empty bag → zeros (f_a row 2, f_c row 3).
  EXPECT_EQ(kt["f_a"][2].abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(kt["f_c"][3].abs().sum().item<float>(), 0.0f);
  // Hand check of the duplicated id: row 0 of f_a = 2 * t1[1] + t1[3] (weights ignored for f_a).
  EXPECT_TRUE(torch::allclose(kt["f_a"][0], 2 * t1[1] + t1[3]));
}

TEST_F(EbcTest, UnweightedKjtUsesNoWeights) {
  KeyedJaggedTensor kjt = KeyedJaggedTensor::from_jagged(
      {"f_a", "f_b", "f_c"}, {{a_.values, a_.lengths, {}}, {b_.values, b_.lengths, {}},
                              {c_.values, c_.lengths, {}}});
  EmbeddingBagCollection ebc(tables_, bags());
  auto kt = ebc->forward(kjt);
  auto t2 = ebc->tables()[1].weight.detach();
  EXPECT_TRUE(torch::allclose(kt["f_c"], reference_pool(t2, c_, false, false), 1e-6, 1e-6));
}

TEST_F(EbcTest, SparseGradientsMatchDenseAutograd) {
  EmbeddingBagCollection ebc(tables_, bags());
  auto kt = ebc->forward(kjt_);
  torch::Tensor r = torch::randn(kt.values().sizes());
  (kt.values() * r).sum().backward();

  // Reference on dense copies of the tables.
  auto t1 = ebc->tables()[0].weight.detach().clone().requires_grad_(true);
  auto t2 = ebc->tables()[1].weight.detach().clone().requires_grad_(true);
  auto ref = torch::cat({reference_pool(t1, a_, false, false), reference_pool(t1, b_, false, true),
                         reference_pool(t2, c_, true, false), reference_pool(t2, c_, true, true)},
                        1);
  (ref * r).sum().backward();

  for (int i = 0; i < 2; ++i) {
    torch::Tensor g = ebc->tables()[i].weight.grad();
    ASSERT_TRUE(g.defined());
    EXPECT_TRUE(g.is_sparse()) << "table gradients must be sparse";
    torch::Tensor expect = i == 0 ? t1.grad() : t2.grad();
    EXPECT_TRUE(torch::allclose(g.to_dense(), expect, 1e-5, 1e-6)) << "table " << i;
  }
  // Sparse gradient has one row per looked-up id, never a dense [rows, dim] block.
  EXPECT_LE(ebc->tables()[0].weight.grad()._nnz(), 5 + 5);
}

// Fused mode: the same pooled output, and backward applies the optimizer (SGD here, with FBGEMM's
// clipping of the pooled gradient) to the rows instead of producing gradients.
TEST_F(EbcTest, FusedModeUpdatesRowsInBackward) {
  EmbeddingBagCollection plain(tables_, bags());
  EmbeddingBagCollection fused(tables_, bags());
  {
    torch::NoGradGuard no_grad;
    for (int i = 0; i < 2; ++i) fused->tables()[i].weight.copy_(plain->tables()[i].weight);
  }
  FusedOptimizerOptions options;
  options.kind = FusedOptimizerKind::kSgd;
  options.lr = 0.5;
  options.gradient_clipping = true;
  options.max_gradient = 0.3;
  fused->enable_fused_optimizer(options);
  ASSERT_NE(fused->fused(), nullptr);
  EXPECT_EQ(plain->fused(), nullptr);

  auto kp = plain->forward(kjt_);
  auto kf = fused->forward(kjt_);
  EXPECT_EQ(kf.keys(), kp.keys());
  EXPECT_TRUE(torch::allclose(kf.values(), kp.values(), 1e-6, 1e-6));
  torch::manual_seed(3);
  torch::Tensor r = torch::randn(kp.values().sizes());
  ASSERT_GT(r.abs().max().item<double>(), 0.3);  // clipping is effective, so the test can fail
  // Reference: plain gradients of the clipped pooled gradient, then w -= lr * g.
  kp.values().backward(r.clamp(-0.3, 0.3));
  kf.values().backward(r);
  for (int i = 0; i < 2; ++i) {
    const torch::Tensor w = fused->tables()[i].weight;
    EXPECT_FALSE(w.grad().defined()) << "fused tables get no gradient";
    torch::Tensor expect =
        plain->tables()[i].weight.detach() - 0.5 * plain->tables()[i].weight.grad().to_dense();
    EXPECT_TRUE(torch::allclose(w.detach(), expect, 1e-5, 1e-6)) << "table " << i;
  }
}

// data_type FP16: float16 storage; the plain forward pools the float16 rows in float32, the fused
// one too, and the fused SGD update is the float32 update rounded to float16.
TEST_F(EbcTest, Fp16TablesPoolInFloat32AndUpdateInPlace) {
  for (auto& t : tables_) t.dtype = torch::kFloat16;
  EmbeddingBagCollection plain16(tables_, bags());
  EmbeddingBagCollection fused16(tables_, bags());
  auto as32 = tables_;
  for (auto& t : as32) t.dtype = torch::kFloat32;
  EmbeddingBagCollection plain32(as32, bags());
  {
    torch::NoGradGuard no_grad;
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(plain16->tables()[i].weight.scalar_type(), torch::kFloat16);
      fused16->tables()[i].weight.copy_(plain16->tables()[i].weight);
      plain32->tables()[i].weight.copy_(plain16->tables()[i].weight);  // the same (float16) values
    }
  }
  // Default init within the torchrec bound, drawn in float32 and rounded.
  EXPECT_LE(plain16->tables()[0].weight.abs().max().item<double>(), std::sqrt(1.0 / 10) + 1e-3);
  FusedOptimizerOptions options;
  options.kind = FusedOptimizerKind::kSgd;
  options.lr = 0.5;
  fused16->enable_fused_optimizer(options);

  auto k16 = plain16->forward(kjt_);
  auto k32 = plain32->forward(kjt_);
  auto kf = fused16->forward(kjt_);
  EXPECT_EQ(k16.values().scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::allclose(k16.values(), k32.values(), 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(kf.values(), k32.values(), 1e-6, 1e-6));
  torch::manual_seed(3);
  torch::Tensor r = torch::randn(k32.values().sizes());
  k32.values().backward(r);
  kf.values().backward(r);
  for (int i = 0; i < 2; ++i) {
    const torch::Tensor w = fused16->tables()[i].weight.detach();
    EXPECT_EQ(w.scalar_type(), torch::kFloat16);
    torch::Tensor expect = (plain32->tables()[i].weight.detach() - 0.5 * plain32->tables()[i].weight.grad().to_dense())
                               .to(torch::kFloat16);
    EXPECT_TRUE(torch::allclose(w.to(torch::kFloat32), expect.to(torch::kFloat32), 1e-3, 1e-4)) << "table " << i;
    EXPECT_FALSE(torch::equal(w, plain16->tables()[i].weight.detach())) << "table " << i << " was updated";
  }
}

// Features sharing a table must agree on its data_type.
TEST_F(EbcTest, SharedTableWithDifferentDataTypesIsAConfigError) {
  FeatureSpec a{"a", true, 10, 4, "shared"};
  FeatureSpec b{"b", true, 10, 4, "shared"};
  b.dtype = torch::kFloat16;
  FeatureGroupConfig g{"deep", GroupType::kDeep, {"a", "b"}};
  try {
    EmbeddingGroup group(std::vector<FeatureSpec>{a, b}, std::vector<FeatureGroupConfig>{g}, 4);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("data_type FP32 vs FP16"), std::string::npos) << e.what();
  }
}

TEST_F(EbcTest, StateDictNamesAndFrozenTables) {
  tables_[1].trainable = false;
  EmbeddingBagCollection ebc(tables_, bags());
  auto params = ebc->named_parameters();
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"embedding_bags.t1.weight", "embedding_bags.t2.weight"}));
  EXPECT_EQ(params["embedding_bags.t1.weight"].sizes(), (std::vector<int64_t>{10, 4}));
  // A shared table is one parameter: tables() hands out the registered tensor itself.
  EXPECT_TRUE(ebc->tables()[0].weight.is_same(params["embedding_bags.t1.weight"]));
  EXPECT_FALSE(ebc->tables()[1].trainable);
  auto kt = ebc->forward(kjt_);
  kt.values().sum().backward();
  EXPECT_FALSE(ebc->tables()[1].weight.grad().defined());
  EXPECT_TRUE(ebc->tables()[0].weight.grad().defined());
}

TEST_F(EbcTest, DefaultInitIsTorchrecUniform) {
  EmbeddingBagCollection ebc(std::vector<TableConfig>{{"big", 400, 64, "", true}}, Bags{});
  auto w = ebc->tables()[0].weight.detach();
  const double bound = std::sqrt(1.0 / 400);
  EXPECT_LE(w.abs().max().item<double>(), bound);
  EXPECT_GT(w.abs().max().item<double>(), 0.95 * bound);
  EXPECT_NEAR(w.mean().item<double>(), 0.0, 0.01 * bound * 10);
}

TEST_F(EbcTest, OutOfRangeIdsRaiseDataErrorNamingFeatureAndTable) {
  EmbeddingBagCollection ebc(tables_, bags());
  for (int64_t bad : {10, -1}) {
    JaggedTensor a{i64({1, bad}), i64({2, 0, 0, 0}), {}};
    auto kjt = KeyedJaggedTensor::from_jagged({"f_a", "f_b", "f_c"}, {a, b_, c_});
    try {
      ebc->forward(kjt);
      FAIL() << "expected DataError for id " << bad;
    } catch (const DataError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("'f_a'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("'t1'"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::to_string(bad)), std::string::npos) << msg;
    }
  }
  // Missing feature.
  auto kjt = KeyedJaggedTensor::from_jagged({"f_a", "f_c"}, {a_, c_});
  EXPECT_THROW(ebc->forward(kjt), DataError);
}

TEST_F(EbcTest, ConfigErrors) {
  EXPECT_THROW(EmbeddingBagCollection(tables_, Bags{BagConfig{"f_a", "nope"}}), ConfigError);
  EXPECT_THROW(EmbeddingBagCollection(tables_, Bags{BagConfig{"f_a", "t1", "max"}}), ConfigError);
  EXPECT_THROW(EmbeddingBagCollection(tables_, Bags{BagConfig{"f_a", "t1"}, BagConfig{"f_a", "t2"}}),
               ConfigError);
  std::vector<TableConfig> dup = {tables_[0], tables_[0]};
  EXPECT_THROW(EmbeddingBagCollection(dup, Bags{}), ConfigError);
  std::vector<TableConfig> zero = {{"z", 0, 4, "", true}};
  EXPECT_THROW(EmbeddingBagCollection(zero, Bags{}), ConfigError);
  std::vector<TableConfig> bad_init = {{"bi", 4, 4, "nn.init.foo_", true}};
  try {
    EmbeddingBagCollection ebc(bad_init, Bags{});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'bi'"), std::string::npos);
  }
}

}  // namespace embedding_bag_collection_test
}  // namespace tzrec::embedding

namespace tzrec::embedding {
namespace embedding_bag_collection_test {

// Stand-in for dist's sharded tables: records its inputs, returns a known output.
class RecordingLookup : public ShardedLookup {
 public:
  torch::Tensor forward(const std::vector<FusedFeatureInput>& inputs) override {
    seen = inputs;
    return torch::arange(4 * 14, torch::kFloat32).view({4, 14});
  }
  void reset_rows(size_t, const torch::Tensor&, const torch::Tensor&) override {}
  void track_touched_rows() override {}
  torch::Tensor take_touched_rows(size_t) override { return torch::empty({0}, torch::kInt64); }
  torch::Tensor read_rows(size_t, const torch::Tensor& rows) override { return torch::zeros({rows.numel(), 4}); }
  std::vector<FusedFeatureInput> seen;
};

TEST_F(EbcTest, DeferredTablesAllocateNothingAndRouteToTheShardedLookup) {
  EmbeddingBagCollection ebc{nullptr};
  {
    DeferTableAllocation defer;
    EXPECT_TRUE(DeferTableAllocation::active());
    ebc = EmbeddingBagCollection(tables_, bags());
  }
  EXPECT_FALSE(DeferTableAllocation::active());
  EXPECT_TRUE(ebc->tables_deferred());
  EXPECT_TRUE(ebc->tables().empty());
  EXPECT_TRUE(ebc->parameters().empty());
  EXPECT_THROW(ebc->forward(kjt_), c10::Error);  // nothing attached yet
  EXPECT_THROW(ebc->enable_fused_optimizer(FusedOptimizerOptions{}), c10::Error);

  auto lookup = std::make_shared<RecordingLookup>();
  ebc->attach_sharded(lookup);
  sparse::KeyedTensor out = ebc->forward(kjt_);
  EXPECT_EQ(out.keys(), (std::vector<std::string>{"f_a", "f_b", "f_c", "f_c_mean"}));
  EXPECT_EQ(out.length_per_key(), (std::vector<int64_t>{4, 4, 3, 3}));
  EXPECT_TRUE(torch::equal(out.values(), torch::arange(4 * 14, torch::kFloat32).view({4, 14})));
  // One input per bag, in bag order; weights only for weighted bags.
  ASSERT_EQ(lookup->seen.size(), 4u);
  EXPECT_TRUE(torch::equal(lookup->seen[0].ids, a_.values));
  EXPECT_FALSE(lookup->seen[0].weights.defined());
  EXPECT_TRUE(torch::equal(lookup->seen[1].lengths, b_.lengths));
  EXPECT_TRUE(torch::equal(lookup->seen[2].weights, c_.weights));
  EXPECT_TRUE(torch::equal(lookup->seen[3].ids, c_.values));
}

}  // namespace embedding_bag_collection_test
}  // namespace tzrec::embedding
