#include "embedding/fused_embedding_bags.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::embedding {
namespace fused_embedding_bags_test {

using Kind = FusedOptimizerKind;

// Group used by most tests: t0 fed by f0 (sum, weighted) and f1 (mean) - the two features share
// ids; t1 (dim 70: vector tails and more than one sqrt block) fed by f2 (sum) and f4 (mean,
// weighted); t2 frozen, fed by f3 (mean).
struct TableDef {
  std::string name;
  int64_t rows, dim;
  bool trainable;
};
const std::vector<TableDef> kTables = {{"t0", 40, 8, true}, {"t1", 30, 70, true}, {"t2", 10, 4, false}};
const std::vector<FusedFeatureSpec> kFeatures = {
    {"f0", "t0", "sum"}, {"f1", "t0", "mean"}, {"f2", "t1", "sum"}, {"f3", "t2", "mean"},
    {"f4", "t1", "mean"}};
const std::vector<bool> kWeighted = {true, false, false, false, true};
constexpr int64_t kBatch = 7;

std::vector<torch::Tensor> make_weights(torch::ScalarType dtype) {
  torch::manual_seed(7);
  std::vector<torch::Tensor> out;
  for (const TableDef& t : kTables) {
    out.push_back((torch::rand({t.rows, t.dim}) - 0.5).to(dtype));
  }
  return out;
}

// Random batch: lengths 0..4 (bag 2 always empty), ids from a few rows of each table so that ids
// repeat within bags, across bags and across the features of a table; some rows stay untouched.
std::vector<FusedFeatureInput> make_batch(int64_t step) {
  torch::manual_seed(1000 + step);
  std::vector<FusedFeatureInput> out;
  for (size_t f = 0; f < kFeatures.size(); ++f) {
    torch::Tensor lengths = torch::randint(0, 5, {kBatch}, torch::kInt64);
    lengths[2] = 0;
    const int64_t n = lengths.sum().item<int64_t>();
    const int64_t table = kFeatures[f].table_name == "t0" ? 0 : (kFeatures[f].table_name == "t1" ? 1 : 2);
    FusedFeatureInput in;
    in.ids = torch::randint(0, kTables[table].rows / 3, {n}, torch::kInt64);
    if (f == 1 && n > 0) in.ids[0] = 0;  // shared with f0 below
    if (f == 0 && n > 0) in.ids[n - 1] = 0;
    if (f % 2 == 0) {
      in.lengths = lengths;
    } else {
      in.offsets = offsets_from_lengths(lengths);
    }
    if (kWeighted[f]) in.weights = torch::rand({n}) + 0.5;
    out.push_back(in);
  }
  return out;
}

// ---- plain libtorch reference ------------------------------------------------------------------

// Reference: torch::embedding_bag forward, autograd for the pooled-output gradient, then the
// documented update formulas on coalesced row gradients [U, D], written with plain tensor ops.
struct Reference {
  FusedOptimizerOptions o;
  bool fp16 = false;
  std::vector<torch::Tensor> w, m1, m2;  // float32
  std::vector<int64_t> step;

  Reference(const FusedOptimizerOptions& options, const std::vector<torch::Tensor>& weights, bool half)
      : o(options), fp16(half) {
    const OptimizerStateLayout layout = state_layout(o.kind);
    const double init = (o.kind == Kind::kAdagrad || o.kind == Kind::kRowwiseAdagrad)
                            ? o.initial_accumulator_value : 0.0;
    for (size_t t = 0; t < weights.size(); ++t) {
      w.push_back(weights[t].to(torch::kFloat32).clone());
      const int64_t rows = weights[t].size(0), dim = weights[t].size(1);
      auto make = [&](StateWidth width, double v) {
        if (width == StateWidth::kNone) return torch::Tensor();
        return width == StateWidth::kRow ? torch::full({rows}, v) : torch::full({rows, dim}, v);
      };
      m1.push_back(make(layout.momentum1, init));
      m2.push_back(make(layout.momentum2, 0.0));
      step.push_back(0);
    }
  }

  torch::Tensor forward(const std::vector<FusedFeatureInput>& inputs,
                        const std::vector<torch::Tensor>& leaves) {
    std::vector<torch::Tensor> outs;
    for (size_t f = 0; f < kFeatures.size(); ++f) {
      const int64_t t = kFeatures[f].table_name == "t0" ? 0 : (kFeatures[f].table_name == "t1" ? 1 : 2);
      torch::Tensor offsets =
          inputs[f].offsets.defined() ? inputs[f].offsets : offsets_from_lengths(inputs[f].lengths);
      torch::Tensor psw = inputs[f].weights.defined() ? inputs[f].weights : torch::Tensor();
      torch::Tensor out = std::get<0>(torch::embedding_bag(leaves[t], inputs[f].ids, offsets, false, 0,
                                                           false, psw, true));
      if (kFeatures[f].pooling == "mean") {
        torch::Tensor len = (offsets.slice(0, 1) - offsets.slice(0, 0, -1)).clamp_min(1);
        out = out / len.to(torch::kFloat32).unsqueeze(1);
      }
      outs.push_back(out);
    }
    return torch::cat(outs, 1);
  }

  // One training step; returns the pooled output (before the update).
  torch::Tensor train_step(const std::vector<FusedFeatureInput>& inputs, const torch::Tensor& grad_out,
                           double lr) {
    std::vector<torch::Tensor> leaves;
    for (const torch::Tensor& t : w) leaves.push_back(t.clone().requires_grad_(true));
    torch::Tensor pooled = forward(inputs, leaves);
    if (o.gradient_clipping) {
      const double m = o.max_gradient;
      pooled.register_hook([m](torch::Tensor g) { return g.clamp(-m, m); });
    }
    pooled.backward(grad_out);
    torch::NoGradGuard no_grad;
    for (size_t t = 0; t < w.size(); ++t) {
      if (!kTables[t].trainable) continue;
      ++step[t];
      std::vector<torch::Tensor> ids;
      for (size_t f = 0; f < kFeatures.size(); ++f) {
        if (kFeatures[f].table_name == kTables[t].name) ids.push_back(inputs[f].ids);
      }
      torch::Tensor rows = std::get<0>(torch::_unique(torch::cat(ids), true));
      if (rows.numel() == 0) continue;
      torch::Tensor g = leaves[t].grad().index_select(0, rows);
      torch::Tensor new_w = update(t, rows, w[t].index_select(0, rows), g, lr);
      if (fp16) new_w = new_w.to(torch::kHalf).to(torch::kFloat32);
      w[t].index_copy_(0, rows, new_w);
    }
    return pooled.detach();
  }

  torch::Tensor update(size_t t, const torch::Tensor& rows, const torch::Tensor& w0,
                       const torch::Tensor& g, double lr) {
    const double b1 = o.beta1, b2 = o.beta2, eps = o.eps, wd = o.weight_decay;
    const double bc1 = 1 - std::pow(b1, step[t]), bc2 = 1 - std::pow(b2, step[t]);
    auto get = [&](torch::Tensor& s) { return s.index_select(0, rows); };
    auto put = [&](torch::Tensor& s, const torch::Tensor& v) { s.index_copy_(0, rows, v); };
    switch (o.kind) {
      case Kind::kSgd:
        return w0 - lr * g;
      case Kind::kAdagrad: {
        torch::Tensor m = get(m1[t]) + g * g;
        put(m1[t], m);
        return w0 - lr * g / (m.sqrt() + eps);
      }
      case Kind::kRowwiseAdagrad: {
        torch::Tensor gg = o.weight_decay_mode == WeightDecayMode::kL2 ? g + wd * w0 : g;
        torch::Tensor m = get(m1[t]) + (gg * gg).mean(1);
        put(m1[t], m);
        torch::Tensor mult = (lr / (m.sqrt() + eps)).unsqueeze(1);
        torch::Tensor corr = torch::ones_like(mult);
        if (o.weight_decay_mode == WeightDecayMode::kL2) corr = 1 - mult * wd;
        if (o.weight_decay_mode == WeightDecayMode::kDecouple) corr = corr * (1 - lr * wd);
        return corr * w0 - mult * g;
      }
      case Kind::kAdam:
      case Kind::kLamb: {
        torch::Tensor m = get(m1[t]) * b1 + g * (1 - b1);
        torch::Tensor v = get(m2[t]) * b2 + g * g * (1 - b2);
        put(m1[t], m);
        put(m2[t], v);
        torch::Tensor r = (m / bc1) / ((v / bc2).sqrt() + eps) + wd * w0;
        if (o.kind == Kind::kAdam) return w0 - lr * r;
        torch::Tensor ratio = w0.norm(2, {1}, true) / r.norm(2, {1}, true);
        return w0 - lr * ratio * r;
      }
      case Kind::kPartialRowwiseAdam:
      case Kind::kPartialRowwiseLamb: {
        torch::Tensor m = get(m1[t]) * b1 + g * (1 - b1);
        torch::Tensor v = get(m2[t]) * b2 + (g * g).mean(1) * (1 - b2);
        put(m1[t], m);
        put(m2[t], v);
        torch::Tensor r = (m / bc1) / ((v / bc2).sqrt() + eps).unsqueeze(1) + wd * w0;
        if (o.kind == Kind::kPartialRowwiseAdam) return w0 - lr * r;
        torch::Tensor ratio = w0.norm(2, {1}, true) / r.norm(2, {1}, true);
        return w0 - lr * ratio * r;
      }
      case Kind::kAdadelta: {  // torch.optim.Adadelta's step
        torch::Tensor gg = g + wd * w0;
        torch::Tensor sq = get(m1[t]) * o.beta1 + gg * gg * (1 - o.beta1);
        torch::Tensor delta = (get(m2[t]) + eps).sqrt() / (sq + eps).sqrt() * gg;
        put(m1[t], sq);
        put(m2[t], get(m2[t]) * o.beta1 + delta * delta * (1 - o.beta1));
        return w0 - lr * delta;
      }
      case Kind::kRmsprop: {  // torch.optim.RMSprop's step (momentum 0, not centered)
        torch::Tensor gg = g + wd * w0;
        torch::Tensor sq = get(m1[t]) * o.beta1 + gg * gg * (1 - o.beta1);
        put(m1[t], sq);
        return w0 - lr * gg / (sq.sqrt() + eps);
      }
      case Kind::kLarsSgd: {
        torch::Tensor wn = w0.norm(2, {1}, true), gn = g.norm(2, {1}, true);
        torch::Tensor a = lr * o.eta * wn / (gn + wd * wn);
        torch::Tensor m = get(m1[t]) * o.momentum + a * (g + wd * w0);
        put(m1[t], m);
        return w0 - m;
      }
    }
    return w0;
  }
};

std::vector<FusedTableSpec> make_specs(const std::vector<torch::Tensor>& weights) {
  std::vector<FusedTableSpec> specs;
  for (size_t t = 0; t < kTables.size(); ++t) {
    specs.push_back({kTables[t].name, weights[t], kTables[t].trainable});
  }
  return specs;
}

bool close(const torch::Tensor& a, const torch::Tensor& b, double tol) {
  return a.sizes() == b.sizes() && torch::allclose(a.to(torch::kFloat32), b.to(torch::kFloat32), tol, tol);
}

// Trains the fused op and the reference side by side for 4 steps with a changing lr; checks the
// pooled outputs at every step, then weights, state and step counters.
void check_against_reference(const FusedOptimizerOptions& options, bool fp16, double tol) {
  std::vector<torch::Tensor> weights = make_weights(fp16 ? torch::kHalf : torch::kFloat32);
  Reference ref(options, weights, fp16);
  FusedEmbeddingBags op(make_specs(weights), kFeatures, options);
  const torch::Tensor frozen_before = weights[2].clone();
  const OptimizerStateLayout layout = state_layout(options.kind);
  for (int64_t s = 0; s < 4; ++s) {
    const double lr = options.lr * (1.0 - 0.2 * s);
    std::vector<FusedFeatureInput> batch = make_batch(s);
    torch::manual_seed(50 + s);
    torch::Tensor grad_out = torch::randn({kBatch, op.total_dim()});
    torch::Tensor expected = ref.train_step(batch, grad_out, lr);
    op.set_lr(lr);
    torch::Tensor pooled = op.forward(batch);
    ASSERT_TRUE(pooled.requires_grad());
    ASSERT_TRUE(close(pooled, expected, tol)) << "pooled output differs at step " << s << "\n"
                                              << (pooled - expected).abs().max();
    pooled.backward(grad_out);
  }
  std::map<std::string, torch::Tensor> state = op.state_dict();
  for (size_t t = 0; t < kTables.size(); ++t) {
    const std::string& n = kTables[t].name;
    EXPECT_FALSE(weights[t].grad().defined()) << n;
    EXPECT_TRUE(close(weights[t], ref.w[t], tol))
        << n << " weights differ by " << (weights[t].to(torch::kFloat32) - ref.w[t]).abs().max();
    if (!kTables[t].trainable) {
      EXPECT_TRUE(torch::equal(weights[t], frozen_before));
      EXPECT_EQ(state.count(n + ".momentum1") + state.count(n + ".step"), 0u);
      continue;
    }
    EXPECT_FALSE(torch::equal(weights[t], make_weights(weights[t].scalar_type())[t])) << n << " unchanged";
    if (layout.momentum1 != StateWidth::kNone) {
      ASSERT_EQ(state.count(n + ".momentum1"), 1u);
      EXPECT_TRUE(close(state[n + ".momentum1"], ref.m1[t], tol)) << n << ".momentum1";
    }
    if (layout.momentum2 != StateWidth::kNone) {
      ASSERT_EQ(state.count(n + ".momentum2"), 1u);
      EXPECT_TRUE(close(state[n + ".momentum2"], ref.m2[t], tol)) << n << ".momentum2";
    }
    EXPECT_EQ(state.count(n + ".step"), layout.has_step ? 1u : 0u);
    if (layout.has_step) EXPECT_EQ(state[n + ".step"].item<int64_t>(), 4);
  }
}

FusedOptimizerOptions options_for(Kind kind) {
  FusedOptimizerOptions o;
  o.kind = kind;
  o.lr = 0.05;
  if (kind == Kind::kAdagrad || kind == Kind::kRowwiseAdagrad) o.initial_accumulator_value = 0.1;
  if (kind != Kind::kSgd && kind != Kind::kAdagrad) o.weight_decay = 0.01;
  if (kind == Kind::kRowwiseAdagrad) o.weight_decay_mode = WeightDecayMode::kL2;
  if (kind == Kind::kLarsSgd) o.eta = 0.5;  // large enough to move the weights visibly
  return o;
}

class FusedOptimizerTest : public ::testing::TestWithParam<Kind> {};

TEST_P(FusedOptimizerTest, MatchesReference) { check_against_reference(options_for(GetParam()), false, 1e-5); }

TEST_P(FusedOptimizerTest, MatchesReferenceWithGradientClipping) {
  FusedOptimizerOptions o = options_for(GetParam());
  o.gradient_clipping = true;
  o.max_gradient = 0.3;
  check_against_reference(o, false, 1e-5);
}

TEST_P(FusedOptimizerTest, MatchesReferenceWithFp16Storage) {
  check_against_reference(options_for(GetParam()), true, 2e-3);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, FusedOptimizerTest,
                         ::testing::Values(Kind::kSgd, Kind::kAdagrad, Kind::kRowwiseAdagrad, Kind::kAdam,
                                           Kind::kLamb, Kind::kPartialRowwiseAdam,
                                           Kind::kPartialRowwiseLamb, Kind::kLarsSgd, Kind::kAdadelta,
                                           Kind::kRmsprop),
                         [](const auto& info) { return optimizer_name(info.param); });

TEST(FusedEmbeddingBagsTest, RowwiseAdagradWeightDecayModes) {
  for (WeightDecayMode mode : {WeightDecayMode::kNone, WeightDecayMode::kDecouple}) {
    FusedOptimizerOptions o = options_for(Kind::kRowwiseAdagrad);
    o.weight_decay_mode = mode;
    o.weight_decay = 0.1;
    check_against_reference(o, false, 1e-5);
  }
}

TEST(FusedEmbeddingBagsTest, PooledOutputLayoutByHand) {
  // t: rows e_r = [r, 10 r]; f_sum weighted, f_mean over the same table.
  torch::Tensor w = torch::tensor({0.f, 0.f, 1.f, 10.f, 2.f, 20.f, 3.f, 30.f}).view({4, 2});
  FusedEmbeddingBags op({{"t", w, false}}, {{"a", "t", "sum"}, {"b", "t", "mean"}}, {});
  FusedFeatureInput a{torch::tensor({1, 3, 3}, torch::kInt64), torch::tensor({0, 3, 3}, torch::kInt64),
                      {}, torch::tensor({1.f, 0.5f, 2.f})};
  FusedFeatureInput b{torch::tensor({2, 1}, torch::kInt64), {}, torch::tensor({0, 2}, torch::kInt64), {}};
  torch::Tensor out = op.forward({a, b});
  torch::Tensor expected = torch::tensor({1 + 7.5f, 10 + 75.f, 0.f, 0.f,   // row 0: b empty -> 0
                                          0.f, 0.f, 1.5f, 15.f})          // row 1: a empty
                               .view({2, 4});
  EXPECT_TRUE(torch::equal(out, expected)) << out;
  EXPECT_FALSE(out.requires_grad());  // frozen only: no backward
  EXPECT_EQ(op.feature_dims(), (std::vector<int64_t>{2, 2}));
}

TEST(FusedEmbeddingBagsTest, ResultsDoNotDependOnThreadCount) {
  const int threads = at::get_num_threads();
  std::vector<torch::Tensor> results;
  for (int n : {1, 3}) {
    at::set_num_threads(n);
    std::vector<torch::Tensor> weights = make_weights(torch::kFloat32);
    FusedEmbeddingBags op(make_specs(weights), kFeatures, options_for(Kind::kAdam));
    for (int64_t s = 0; s < 2; ++s) {
      torch::Tensor out = op.forward(make_batch(s));
      out.backward(torch::ones_like(out));
    }
    results.push_back(weights[1]);
  }
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(results[0], results[1]));
}

TEST(FusedEmbeddingBagsTest, StateDictRoundTrip) {
  FusedOptimizerOptions o = options_for(Kind::kPartialRowwiseAdam);
  std::vector<torch::Tensor> wa = make_weights(torch::kFloat32);
  FusedEmbeddingBags a(make_specs(wa), kFeatures, o);
  for (int64_t s = 0; s < 2; ++s) {
    torch::Tensor out = a.forward(make_batch(s));
    out.backward(torch::ones_like(out));
  }
  std::map<std::string, torch::Tensor> saved;
  for (const auto& [k, v] : a.state_dict()) saved[k] = v.clone();
  EXPECT_EQ(saved.size(), 6u);  // t0, t1: momentum1, momentum2, step; none for frozen t2
  EXPECT_EQ(saved.at("t1.momentum2").sizes(), (std::vector<int64_t>{30}));
  EXPECT_EQ(saved.at("t1.momentum1").sizes(), (std::vector<int64_t>{30, 70}));

  std::vector<torch::Tensor> wb;
  for (const torch::Tensor& w : wa) wb.push_back(w.detach().clone());
  FusedEmbeddingBags b(make_specs(wb), kFeatures, o);
  b.load_state_dict(saved);
  for (FusedEmbeddingBags* op : {&a, &b}) {
    torch::Tensor out = op->forward(make_batch(5));
    out.backward(torch::ones_like(out));
  }
  for (size_t t = 0; t < wa.size(); ++t) EXPECT_TRUE(torch::equal(wa[t], wb[t])) << t;

  auto expect_error = [&](std::map<std::string, torch::Tensor> state, const std::string& key) {
    try {
      b.load_state_dict(state);
      ADD_FAILURE() << "no error for " << key;
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos) << e.what();
    }
  };
  auto missing = saved;
  missing.erase("t0.momentum1");
  expect_error(missing, "t0.momentum1");
  auto extra = saved;
  extra["t2.momentum1"] = torch::zeros({10, 4});
  expect_error(extra, "t2.momentum1");
  auto wrong = saved;
  wrong["t1.momentum2"] = torch::zeros({30, 70});
  expect_error(wrong, "t1.momentum2");
}

// Expected values: the documented initial state (momentum1 = initial_accumulator_value 0.1 for the
// adagrads, momentum2 = 0) on the reset rows; the other rows keep what the updates left.
TEST(FusedEmbeddingBagsTest, ResetStateRowsPutsThoseRowsBackToTheInitialState) {
  for (const Kind kind : {Kind::kRowwiseAdagrad, Kind::kPartialRowwiseAdam}) {
    std::vector<torch::Tensor> w = make_weights(torch::kFloat32);
    FusedEmbeddingBags op(make_specs(w), kFeatures, options_for(kind));
    for (int64_t s = 0; s < 2; ++s) {
      torch::Tensor out = op.forward(make_batch(s));
      out.backward(torch::ones_like(out));
    }
    std::map<std::string, torch::Tensor> before;
    for (const auto& [k, v] : op.state_dict()) before[k] = v.clone();
    const torch::Tensor rows = torch::tensor({1, 3}, torch::kInt64);
    op.reset_state_rows("t1", rows);
    op.reset_state_rows("t2", rows);  // frozen: no state, nothing to do
    const auto after = op.state_dict();
    const double m1 = kind == Kind::kRowwiseAdagrad ? 0.1 : 0.0;
    for (const auto& [k, v] : after) {
      if (k.rfind("t1.momentum", 0) != 0) {
        EXPECT_TRUE(torch::equal(v, before.at(k))) << k;
        continue;
      }
      const double initial = k == "t1.momentum1" ? m1 : 0.0;
      EXPECT_TRUE(torch::all(v.index_select(0, rows) == initial).item<bool>()) << k;
      const torch::Tensor kept = torch::ones({v.size(0)}, torch::kBool).index_fill_(0, rows, false);
      EXPECT_TRUE(torch::equal(v.index({kept}), before.at(k).index({kept}))) << k;
      EXPECT_FALSE(torch::equal(v, before.at(k))) << k << ": the updates had changed the reset rows";
    }
    EXPECT_THROW(op.reset_state_rows("no_such_table", rows), c10::Error);
  }
}

TEST(FusedEmbeddingBagsTest, StateNamesAreCheckpointNames) {
  std::vector<torch::Tensor> w = make_weights(torch::kFloat32);
  auto keys = [&](Kind kind) {
    std::vector<std::string> out;
    for (const auto& [k, v] : FusedEmbeddingBags(make_specs(w), kFeatures, options_for(kind)).state_dict()) {
      if (k.rfind("t0.", 0) == 0) out.push_back(k + (v.dim() == 0 ? "" : "[" + std::to_string(v.dim()) + "]"));
    }
    return out;
  };
  EXPECT_TRUE(keys(Kind::kSgd).empty());
  EXPECT_EQ(keys(Kind::kAdagrad), (std::vector<std::string>{"t0.momentum1[2]"}));
  EXPECT_EQ(keys(Kind::kAdam), (std::vector<std::string>{"t0.momentum1[2]", "t0.momentum2[2]", "t0.step"}));
  EXPECT_EQ(keys(Kind::kRowwiseAdagrad), (std::vector<std::string>{"t0.momentum1[1]"}));
  EXPECT_EQ(keys(Kind::kLarsSgd), (std::vector<std::string>{"t0.momentum1[2]"}));
}

TEST(FusedEmbeddingBagsTest, BadInputs) {
  std::vector<torch::Tensor> w = make_weights(torch::kFloat32);
  FusedEmbeddingBags op(make_specs(w), kFeatures, options_for(Kind::kSgd));
  auto expect_data_error = [&](std::vector<FusedFeatureInput> batch, std::vector<std::string> words) {
    try {
      op.forward(batch);
      ADD_FAILURE() << "no DataError";
    } catch (const DataError& e) {
      for (const std::string& word : words) {
        EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
      }
    }
  };
  std::vector<FusedFeatureInput> batch = make_batch(0);
  batch[2].ids = batch[2].ids.clone();
  batch[2].ids[0] = 30;  // t1 has 30 rows
  expect_data_error(batch, {"'f2'", "'t1'", "30"});
  batch = make_batch(0);
  batch[4].ids = batch[4].ids.clone();
  batch[4].ids[batch[4].ids.numel() - 1] = -1;
  expect_data_error(batch, {"'f4'", "'t1'", "-1"});
  batch = make_batch(0);
  batch[1].offsets = batch[1].offsets.clone();
  batch[1].offsets[3] = 1000;
  expect_data_error(batch, {"'f1'", "offsets"});
  batch = make_batch(0);
  batch[3].lengths = torch::zeros({kBatch + 1}, torch::kInt64);
  batch[3].offsets = torch::Tensor();
  batch[3].ids = torch::zeros({0}, torch::kInt64);
  expect_data_error(batch, {"'f3'", "rows"});

  batch = make_batch(0);
  batch[0].weights = batch[0].weights.clone().requires_grad_(true);
  EXPECT_THROW(op.forward(batch), NotSupportedError);

  EXPECT_THROW(FusedEmbeddingBags(make_specs(w), {{"f", "nope", "sum"}}, {}), ConfigError);
  EXPECT_THROW(FusedEmbeddingBags(make_specs(w), {{"f", "t0", "max"}}, {}), ConfigError);
}

TEST(FusedEmbeddingBagsTest, BackwardTwiceIsRejected) {
  std::vector<torch::Tensor> w = make_weights(torch::kFloat32);
  FusedEmbeddingBags op(make_specs(w), kFeatures, options_for(Kind::kSgd));
  torch::Tensor out = op.forward(make_batch(0));
  out.sum().backward({}, /*retain_graph=*/true);
  EXPECT_ANY_THROW(out.sum().backward());
}

}  // namespace fused_embedding_bags_test
}  // namespace tzrec::embedding
