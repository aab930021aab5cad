#include "embedding/sparse_optimizer.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "embedding/embedding_bag_collection.h"

namespace tzrec::embedding {
namespace {

using Kind = SparseOptimizerOptions::Kind;
using sparse::JaggedTensor;
using sparse::KeyedJaggedTensor;

const std::vector<TableConfig> kTables = {
    {"t1", 12, 3, "", true}, {"t2", 6, 2, "", true}, {"t3", 5, 2, "", false}};
const std::vector<BagConfig> kBags = {{"f1", "t1", "sum"}, {"f2", "t1", "mean"}, {"f3", "t2", "sum"},
                                      {"f4", "t3", "sum"}};

// Random batch with many duplicate ids; f3 is empty when `skip_t2` (t2 then gets no rows).
KeyedJaggedTensor make_batch(int64_t step, bool skip_t2) {
  torch::manual_seed(100 + step);
  std::vector<JaggedTensor> jts;
  const std::vector<int64_t> rows = {12, 12, 6, 5};
  for (size_t f = 0; f < 4; ++f) {
    torch::Tensor lengths = torch::randint(0, 4, {4}, torch::kInt64);
    if (f == 2 && skip_t2) lengths.zero_();
    int64_t n = lengths.sum().item<int64_t>();
    // Ids from the lower half of the table: duplicates within and across rows, untouched rows.
    torch::Tensor ids = torch::randint(0, rows[f] / 2 + 1, {n}, torch::kInt64);
    jts.push_back({ids, lengths, {}});
  }
  return KeyedJaggedTensor::from_jagged({"f1", "f2", "f3", "f4"}, jts);
}

// Dense-autograd reference of the EBC forward (plain index_select + sum/mean per row).
torch::Tensor reference_forward(const std::vector<torch::Tensor>& tables, const KeyedJaggedTensor& kjt) {
  std::vector<torch::Tensor> outs;
  const std::vector<int> table_of = {0, 0, 1, 2};
  for (size_t f = 0; f < 4; ++f) {
    JaggedTensor jt = kjt[kBags[f].feature_name];
    const torch::Tensor& table = tables[table_of[f]];
    std::vector<torch::Tensor> rows;
    int64_t start = 0;
    for (int64_t b = 0; b < jt.lengths.size(0); ++b) {
      int64_t len = jt.lengths[b].item<int64_t>();
      torch::Tensor acc = torch::zeros({table.size(1)});
      if (len > 0) {
        acc = table.index_select(0, jt.values.slice(0, start, start + len)).sum(0);
        if (kBags[f].pooling == "mean") acc = acc / static_cast<double>(len);
      }
      rows.push_back(acc);
      start += len;
    }
    outs.push_back(torch::stack(rows));
  }
  return torch::cat(outs, 1);
}

// Reference optimizer: the documented formulas on dense tensors, applied to touched rows only.
struct ReferenceOptimizer {
  SparseOptimizerOptions o;
  std::vector<torch::Tensor> m1, m2;
  int64_t step = 0;

  void update(std::vector<torch::Tensor>& w, const std::vector<torch::Tensor>& g,
              const std::vector<torch::Tensor>& touched) {
    ++step;
    for (size_t t = 0; t < 2; ++t) {  // t3 is frozen
      if (m1.size() < 2) {
        m1.push_back(torch::full_like(w[t], o.kind == Kind::kAdagrad ? o.initial_accumulator_value : 0.0));
        m2.push_back(torch::zeros_like(w[t]));
      }
      torch::Tensor mask = touched[t].unsqueeze(1).to(torch::kFloat32);  // [rows, 1]
      torch::Tensor gt = g[t];
      torch::Tensor new_w;
      if (o.kind == Kind::kSgd) {
        new_w = w[t] - o.lr * gt;
      } else if (o.kind == Kind::kAdagrad) {
        torch::Tensor G = m1[t] + gt * gt;
        m1[t] = torch::where(mask > 0, G, m1[t]);
        new_w = w[t] - o.lr * gt / (G.sqrt() + o.eps);
      } else {
        torch::Tensor m = o.beta1 * m1[t] + (1 - o.beta1) * gt;
        torch::Tensor v = o.beta2 * m2[t] + (1 - o.beta2) * gt * gt;
        m1[t] = torch::where(mask > 0, m, m1[t]);
        m2[t] = torch::where(mask > 0, v, m2[t]);
        torch::Tensor mh = m / (1 - std::pow(o.beta1, step));
        torch::Tensor vh = v / (1 - std::pow(o.beta2, step));
        new_w = w[t] - o.lr * (mh / (vh.sqrt() + o.eps) + o.weight_decay * w[t]);
      }
      w[t] = torch::where(mask > 0, new_w, w[t]);
    }
  }
};

std::vector<torch::Tensor> touched_rows(const KeyedJaggedTensor& kjt) {
  std::vector<torch::Tensor> touched = {torch::zeros({12}, torch::kBool), torch::zeros({6}, torch::kBool)};
  for (const char* f : {"f1", "f2"}) touched[0].index_fill_(0, kjt[f].values, true);
  touched[1].index_fill_(0, kjt["f3"].values, true);
  return touched;
}

void run_against_reference(SparseOptimizerOptions options) {
  torch::manual_seed(1);
  EmbeddingBagCollection ebc(kTables, kBags);
  std::vector<torch::Tensor> ref_w;
  for (auto& t : ebc->tables()) ref_w.push_back(t.weight.detach().clone());
  torch::Tensor frozen_before = ref_w[2].clone();
  SparseOptimizer opt(options, ebc->tables());
  ReferenceOptimizer ref{options};
  for (int64_t step = 0; step < 5; ++step) {
    if (step == 3) {  // learning-rate changes apply from the next step on
      opt.set_lr(options.lr * 0.5);
      ref.o.lr = options.lr * 0.5;
    }
    KeyedJaggedTensor kjt = make_batch(step, /*skip_t2=*/step == 2);
    torch::Tensor r = torch::randn({4, 3 + 3 + 2 + 2});
    opt.zero_grad();
    (ebc->forward(kjt).values() * r).sum().backward();
    opt.step();

    std::vector<torch::Tensor> leaves;
    for (auto& w : ref_w) leaves.push_back(w.clone().requires_grad_(true));
    (reference_forward(leaves, kjt) * r).sum().backward();
    std::vector<torch::Tensor> grads;
    for (int t = 0; t < 2; ++t) {  // a table no id reached has no gradient: zeros
      grads.push_back(leaves[t].grad().defined() ? leaves[t].grad() : torch::zeros_like(leaves[t]));
    }
    ref.update(ref_w, grads, touched_rows(kjt));

    auto tables = ebc->tables();
    for (size_t t = 0; t < 3; ++t) {
      EXPECT_TRUE(torch::allclose(tables[t].weight.detach(), ref_w[t], 1e-5, 1e-6))
          << "step " << step << " table " << tables[t].name << "\n"
          << (tables[t].weight.detach() - ref_w[t]).abs().max();
    }
  }
  EXPECT_TRUE(torch::equal(ebc->tables()[2].weight.detach(), frozen_before)) << "frozen table changed";
  EXPECT_FALSE(torch::equal(ebc->tables()[0].weight.detach(), frozen_before.new_zeros({12, 3})));
  if (options.kind != Kind::kSgd) {
    auto state = opt.state_dict();
    EXPECT_TRUE(torch::allclose(state.at("t1.momentum1"), ref.m1[0], 1e-5, 1e-7));
    EXPECT_TRUE(torch::allclose(state.at("t2.momentum1"), ref.m1[1], 1e-5, 1e-7));
    EXPECT_EQ(state.count("t3.momentum1"), 0u);
  }
}

TEST(SparseOptimizer, SgdMatchesReference) {
  SparseOptimizerOptions o;
  o.kind = Kind::kSgd;
  o.lr = 0.1;
  run_against_reference(o);
}

TEST(SparseOptimizer, AdagradMatchesReference) {
  SparseOptimizerOptions o;
  o.kind = Kind::kAdagrad;
  o.lr = 0.05;
  o.initial_accumulator_value = 0.1;
  run_against_reference(o);
}

TEST(SparseOptimizer, AdamMatchesReference) {
  SparseOptimizerOptions o;
  o.kind = Kind::kAdam;
  o.lr = 0.01;
  o.beta1 = 0.8;
  o.beta2 = 0.95;
  o.weight_decay = 0.1;
  run_against_reference(o);
}

TEST(SparseOptimizer, HandComputedAdagradAndAdamSteps) {
  // One table [2, 1], id 0 twice in one batch: coalesced g = 2 * upstream gradient.
  EmbeddingBagCollection ebc(std::vector<TableConfig>{{"t", 2, 1, "nn.init.constant_,val=1.0", true}},
                             std::vector<BagConfig>{BagConfig{"f", "t"}});
  auto kjt = KeyedJaggedTensor::from_jagged({"f"}, {{torch::tensor({0, 0}, torch::kInt64),
                                                     torch::tensor({2}, torch::kInt64), {}}});
  SparseOptimizerOptions o;
  o.kind = Kind::kAdagrad;
  o.lr = 0.5;
  SparseOptimizer adagrad(o, ebc->tables());
  (ebc->forward(kjt).values() * 3.0).sum().backward();  // g = 2 * 3 = 6
  adagrad.step();
  // G = 36; w = 1 - 0.5 * 6 / (6 + 1e-8)
  EXPECT_NEAR(ebc->tables()[0].weight[0][0].item<double>(), 1.0 - 0.5 * 6 / (6 + 1e-8), 1e-7);
  EXPECT_EQ(ebc->tables()[0].weight[1][0].item<double>(), 1.0);

  o.kind = Kind::kAdam;
  o.lr = 0.1;
  o.weight_decay = 0.5;
  SparseOptimizer adam(o, ebc->tables());
  double w0 = ebc->tables()[0].weight[0][0].item<double>();
  adam.zero_grad();
  (ebc->forward(kjt).values() * 3.0).sum().backward();
  adam.step();
  // t = 1: m_hat = g, v_hat = g^2 → w -= lr * (g / (|g| + eps) + wd * w)
  double expect = w0 - 0.1 * (6.0 / (6.0 + 1e-8) + 0.5 * w0);
  EXPECT_NEAR(ebc->tables()[0].weight[0][0].item<double>(), expect, 1e-6);
  EXPECT_EQ(adam.state_dict().at("t.step").item<int64_t>(), 1);
}

TEST(SparseOptimizer, StateDictRoundTrip) {
  SparseOptimizerOptions o;
  o.kind = Kind::kAdam;
  o.lr = 0.02;
  torch::manual_seed(5);
  EmbeddingBagCollection ebc1(kTables, kBags);
  SparseOptimizer opt1(o, ebc1->tables());
  for (int64_t step = 0; step < 2; ++step) {
    opt1.zero_grad();
    ebc1->forward(make_batch(step, false)).values().pow(2).sum().backward();
    opt1.step();
  }
  std::map<std::string, torch::Tensor> saved;
  for (const auto& [k, v] : opt1.state_dict()) saved[k] = v.clone();
  EXPECT_EQ(saved.size(), 6u);  // t1, t2 × {momentum1, momentum2, step}
  EXPECT_EQ(saved.at("t1.step").item<int64_t>(), 2);

  EmbeddingBagCollection ebc2(kTables, kBags);
  {
    torch::NoGradGuard ng;
    for (size_t t = 0; t < 3; ++t) ebc2->tables()[t].weight.copy_(ebc1->tables()[t].weight);
  }
  SparseOptimizer opt2(o, ebc2->tables());
  opt2.load_state_dict(saved);
  for (const auto& [k, v] : opt2.state_dict()) EXPECT_TRUE(torch::equal(v, saved.at(k))) << k;

  KeyedJaggedTensor kjt = make_batch(7, false);
  opt1.zero_grad();
  for (auto* pair : {&ebc1, &ebc2}) (*pair)->forward(kjt).values().pow(2).sum().backward();
  opt1.step();
  opt2.step();
  for (size_t t = 0; t < 3; ++t) {
    EXPECT_TRUE(torch::equal(ebc1->tables()[t].weight, ebc2->tables()[t].weight));
  }
}

TEST(SparseOptimizer, LoadStateDictErrorsNameTheKey) {
  SparseOptimizerOptions o;
  o.kind = Kind::kAdagrad;
  EmbeddingBagCollection ebc(kTables, kBags);
  SparseOptimizer opt(o, ebc->tables());
  auto expect_error = [&](const std::map<std::string, torch::Tensor>& state, const std::string& key) {
    try {
      opt.load_state_dict(state);
      FAIL() << "expected CheckpointError for " << key;
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos) << e.what();
    }
  };
  std::map<std::string, torch::Tensor> good = {{"t1.momentum1", torch::zeros({12, 3})},
                                               {"t2.momentum1", torch::zeros({6, 2})}};
  opt.load_state_dict(good);
  auto missing = good;
  missing.erase("t2.momentum1");
  expect_error(missing, "t2.momentum1");
  auto bad_shape = good;
  bad_shape["t1.momentum1"] = torch::zeros({11, 3});
  expect_error(bad_shape, "t1.momentum1");
  auto extra = good;
  extra["t3.momentum1"] = torch::zeros({5, 2});
  expect_error(extra, "t3.momentum1");
}

}  // namespace
}  // namespace tzrec::embedding
