#include "embedding/tbe_kernels.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>

#include <gtest/gtest.h>

#include "embedding/fused_embedding_bags.h"
#include "embedding/table_memory.h"

namespace tzrec::embedding {
namespace tbe_kernels_test {

TEST(TbeParallelForTest, CoversRangeOnceAndRethrows) {
  for (int64_t n : {0, 1, 63, 64, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(n);
    tbe::parallel_for(n, 7, [&](int64_t b, int64_t e) {
      EXPECT_LE(0, b);
      EXPECT_LE(e, n);
      for (int64_t i = b; i < e; ++i) ++hits[i];
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i << " of " << n;
  }
  EXPECT_THROW(tbe::parallel_for(1000, 1,
                                 [](int64_t b, int64_t e) {
                                   if (b <= 500 && 500 < e) throw std::runtime_error("x");
                                 }),
               std::runtime_error);
}

TEST(TbeKernelsTest, FindOutOfRangeId) {
  std::vector<int64_t> ids(200000, 3);
  EXPECT_EQ(tbe::find_out_of_range_id(ids.data(), ids.size(), 4), -1);
  ids[150000] = 4;
  ids[170000] = -2;
  EXPECT_EQ(tbe::find_out_of_range_id(ids.data(), ids.size(), 4), 150000);
  EXPECT_EQ(tbe::find_out_of_range_id(ids.data(), 0, 4), -1);
}

// Zipf-like ids in [0, rows): heavy repetition of small ids, a long tail.
torch::Tensor zipf_ids(int64_t n, int64_t rows) {
  torch::Tensor u = torch::rand({n}, torch::kFloat64);
  return (torch::exp(u * std::log(static_cast<double>(rows))) - 1).floor().to(torch::kInt64).clamp(0, rows - 1);
}

// Many rows and bags (several chunks per thread): forward vs torch::embedding_bag, and with sgd
// at lr 1 the weight change equals minus the aggregated row gradient, compared with autograd's.
TEST(TbeKernelsTest, LargeBatchMatchesEmbeddingBag) {
  torch::manual_seed(3);
  const int64_t B = 700, rows = 5000, D = 24;
  torch::Tensor weight = torch::randn({rows, D});
  std::vector<torch::Tensor> ids, offsets, psw;
  for (int f = 0; f < 3; ++f) {
    torch::Tensor lengths = torch::randint(0, 12, {B}, torch::kInt64);
    ids.push_back(zipf_ids(lengths.sum().item<int64_t>(), rows));
    offsets.push_back(offsets_from_lengths(lengths));
    psw.push_back(torch::rand({ids.back().numel()}));
  }
  tbe::TableBuffers table;
  table.weight = weight.data_ptr<float>();
  table.num_rows = rows;
  table.dim = D;
  FusedOptimizerOptions sgd;
  table.scalars = make_row_update_scalars(sgd, 1.0, 1);
  std::vector<tbe::FeatureBuffers> features;
  for (int f = 0; f < 3; ++f) {
    tbe::FeatureBuffers fb;
    fb.ids = ids[f].data_ptr<int64_t>();
    fb.offsets = offsets[f].data_ptr<int64_t>();
    fb.per_id_weights = f == 1 ? psw[f].data_ptr<float>() : nullptr;
    fb.mean = f == 2;
    fb.output_offset = f * D;
    features.push_back(fb);
  }
  torch::Tensor out = torch::empty({B, 3 * D});
  tbe::pooled_forward({table}, features, B, out.data_ptr<float>(), 3 * D);

  torch::Tensor leaf = weight.clone().requires_grad_(true);
  std::vector<torch::Tensor> ref;
  for (int f = 0; f < 3; ++f) {
    torch::Tensor o = std::get<0>(torch::embedding_bag(leaf, ids[f], offsets[f], false, 0, false,
                                                       f == 1 ? psw[f] : torch::Tensor(), true));
    if (f == 2) {
      torch::Tensor len = (offsets[f].slice(0, 1) - offsets[f].slice(0, 0, -1)).clamp_min(1);
      o = o / len.to(torch::kFloat32).unsqueeze(1);
    }
    ref.push_back(o);
  }
  torch::Tensor pooled = torch::cat(ref, 1);
  EXPECT_TRUE(torch::allclose(out, pooled, 1e-5, 1e-5));

  torch::Tensor grad_out = torch::randn({B, 3 * D});
  pooled.backward(grad_out);
  torch::Tensor before = weight.clone();
  tbe::backward_update({table}, features, B, grad_out.data_ptr<float>(), 3 * D,
                       state_layout(FusedOptimizerKind::kSgd));
  EXPECT_TRUE(torch::allclose(before - weight, leaf.grad(), 1e-4, 1e-5))
      << (before - weight - leaf.grad()).abs().max();
}

// One table shared by three features with several threads: the backward splits the table into
// shards of rows (hash of the row) and grows its row maps; the result must still equal autograd's
// gradient (sgd at lr 1) and be bitwise the same as with one thread.
TEST(TbeKernelsTest, ShardedBackwardMatchesAutogradAndOneThread) {
  torch::manual_seed(5);
  const int64_t B = 900, rows = 3000, D = 20;
  const torch::Tensor initial = torch::randn({rows, D});
  std::vector<torch::Tensor> ids, offsets, psw;
  for (int f = 0; f < 3; ++f) {
    torch::Tensor lengths = torch::randint(0, 15, {B}, torch::kInt64);
    ids.push_back(zipf_ids(lengths.sum().item<int64_t>(), rows));
    offsets.push_back(offsets_from_lengths(lengths));
    psw.push_back(torch::rand({ids.back().numel()}));
  }
  std::vector<tbe::FeatureBuffers> features;
  for (int f = 0; f < 3; ++f) {
    tbe::FeatureBuffers fb;
    fb.ids = ids[f].data_ptr<int64_t>();
    fb.offsets = offsets[f].data_ptr<int64_t>();
    fb.per_id_weights = f == 0 ? psw[f].data_ptr<float>() : nullptr;
    fb.mean = f == 1;
    fb.output_offset = f * D;
    features.push_back(fb);
  }
  const torch::Tensor grad_out = torch::randn({B, 3 * D});
  FusedOptimizerOptions sgd;
  auto run = [&](int threads) {
    const int before = at::get_num_threads();
    at::set_num_threads(threads);
    torch::Tensor weight = initial.clone();
    tbe::TableBuffers table;
    table.weight = weight.data_ptr<float>();
    table.num_rows = rows;
    table.dim = D;
    table.scalars = make_row_update_scalars(sgd, 1.0, 1);
    tbe::backward_update({table}, features, B, grad_out.data_ptr<float>(), 3 * D,
                         state_layout(FusedOptimizerKind::kSgd));
    at::set_num_threads(before);
    return weight;
  };
  const torch::Tensor one = run(1), four = run(4);
  EXPECT_TRUE(torch::equal(one, four)) << (one - four).abs().max();

  torch::Tensor leaf = initial.clone().requires_grad_(true);
  std::vector<torch::Tensor> ref;
  for (int f = 0; f < 3; ++f) {
    torch::Tensor o = std::get<0>(torch::embedding_bag(leaf, ids[f], offsets[f], false, 0, false,
                                                       f == 0 ? psw[f] : torch::Tensor(), true));
    if (f == 1) {
      torch::Tensor len = (offsets[f].slice(0, 1) - offsets[f].slice(0, 0, -1)).clamp_min(1);
      o = o / len.to(torch::kFloat32).unsqueeze(1);
    }
    ref.push_back(o);
  }
  torch::cat(ref, 1).backward(grad_out);
  // Hot rows sum ~1000 terms, in another order than autograd's: float rounding ~1e-5 of the sum.
  const torch::Tensor expected = initial - leaf.grad();
  EXPECT_TRUE(torch::allclose(four, expected, 1e-4, 1e-4)) << (four - expected).abs().max();
}

// Three tables at four threads: one read by three features with most of the ids (split into
// shards, its occurrences grouped by shard), one small table read by one feature (one task, read
// feature by feature) and a frozen one. Every trainable row must get autograd's gradient (sgd at lr
// 1), the frozen table must stay as it was, and the result must be bitwise the one-thread result
// (where no table is split).
TEST(TbeKernelsTest, ShardedAndWholeTablesMatchAutogradAndOneThread) {
  torch::manual_seed(9);
  const int64_t B = 1100;  // three runs of bags per feature, the last one short
  struct Feature {
    int64_t table, max_len;
    bool weighted, mean;
  };
  const std::vector<Feature> spec = {{0, 15, true, false}, {0, 9, false, true}, {0, 12, false, false},
                                     {1, 3, false, false}, {2, 4, false, false}};
  const std::vector<int64_t> rows = {4000, 300, 100}, dims = {8, 4, 4};
  std::vector<torch::Tensor> initial, ids, offsets, psw;
  for (size_t t = 0; t < rows.size(); ++t) initial.push_back(torch::randn({rows[t], dims[t]}));
  int64_t width = 0;
  std::vector<tbe::FeatureBuffers> features;
  for (const Feature& f : spec) {
    torch::Tensor lengths = torch::randint(0, f.max_len, {B}, torch::kInt64);
    ids.push_back(zipf_ids(lengths.sum().item<int64_t>(), rows[f.table]));
    offsets.push_back(offsets_from_lengths(lengths));
    psw.push_back(torch::rand({ids.back().numel()}));
  }
  for (size_t k = 0; k < spec.size(); ++k) {
    tbe::FeatureBuffers fb;
    fb.ids = ids[k].data_ptr<int64_t>();
    fb.offsets = offsets[k].data_ptr<int64_t>();
    fb.per_id_weights = spec[k].weighted ? psw[k].data_ptr<float>() : nullptr;
    fb.mean = spec[k].mean;
    fb.table = spec[k].table;
    fb.output_offset = width;
    width += dims[spec[k].table];
    features.push_back(fb);
  }
  const torch::Tensor grad_out = torch::randn({B, width});
  FusedOptimizerOptions sgd;
  auto run = [&](int threads) {
    const int before = at::get_num_threads();
    at::set_num_threads(threads);
    std::vector<torch::Tensor> weights;
    std::vector<tbe::TableBuffers> tables;
    for (size_t t = 0; t < rows.size(); ++t) {
      weights.push_back(initial[t].clone());
      tbe::TableBuffers table;
      table.weight = weights.back().data_ptr<float>();
      table.num_rows = rows[t];
      table.dim = dims[t];
      table.trainable = t != 2;
      table.scalars = make_row_update_scalars(sgd, 1.0, 1);
      tables.push_back(table);
    }
    tbe::backward_update(tables, features, B, grad_out.data_ptr<float>(), width,
                         state_layout(FusedOptimizerKind::kSgd));
    at::set_num_threads(before);
    return weights;
  };
  const std::vector<torch::Tensor> one = run(1), four = run(4);
  for (size_t t = 0; t < rows.size(); ++t) EXPECT_TRUE(torch::equal(one[t], four[t])) << "table " << t;
  EXPECT_TRUE(torch::equal(four[2], initial[2]));  // frozen

  std::vector<torch::Tensor> leaves, pooled;
  for (size_t t = 0; t < rows.size(); ++t) leaves.push_back(initial[t].clone().requires_grad_(true));
  for (size_t k = 0; k < spec.size(); ++k) {
    torch::Tensor o = std::get<0>(torch::embedding_bag(leaves[spec[k].table], ids[k], offsets[k], false, 0, false,
                                                       spec[k].weighted ? psw[k] : torch::Tensor(), true));
    if (spec[k].mean) {
      torch::Tensor len = (offsets[k].slice(0, 1) - offsets[k].slice(0, 0, -1)).clamp_min(1);
      o = o / len.to(torch::kFloat32).unsqueeze(1);
    }
    pooled.push_back(o);
  }
  torch::cat(pooled, 1).backward(grad_out);
  for (size_t t = 0; t < 2; ++t) {
    const torch::Tensor expected = initial[t] - leaves[t].grad();
    EXPECT_TRUE(torch::allclose(four[t], expected, 1e-4, 1e-4)) << "table " << t << ": "
                                                                << (four[t] - expected).abs().max();
  }
}

// ---- timing comparison (run by hand) --------------------------------------------------------------
// build/tzrec_embedding_test --gtest_also_run_disabled_tests --gtest_filter='*Benchmark*'
// Shape: 26 features, one table each (TZREC_TBE_BENCH_ROWS rows, default 1M; dim 64), ~10 ids per
// bag, Zipf-skewed ids, batch 4096, adagrad; TZREC_TBE_BENCH_STEPS timed steps (default 4). Needs
// about 16 * rows * 26 * 64 bytes of memory (weights and adagrad state of both paths). Plain: torch::embedding_bag(sparse=true) per feature,
// backward, then adagrad on the coalesced sparse gradients (coalesce + index ops), as
// nn.EmbeddingBag(sparse=True) + torch.optim.SparseAdam-style code would do. Fused: FusedEmbeddingBags forward + backward (update included).
TEST(TbeKernelsTest, DISABLED_BenchmarkVsPlainEmbeddingBag) {
  const char* env = std::getenv("TZREC_TBE_BENCH_ROWS");
  const int64_t rows = env ? std::atoll(env) : 1000000;
  const char* env_steps = std::getenv("TZREC_TBE_BENCH_STEPS");
  const int64_t F = 26, D = 64, B = 4096, steps = 1 + (env_steps ? std::atoll(env_steps) : 4);
  torch::manual_seed(0);
  std::vector<torch::Tensor> plain_w, fused_w;
  std::vector<FusedTableSpec> specs;
  std::vector<FusedFeatureSpec> feats;
  for (int64_t f = 0; f < F; ++f) {
    torch::Tensor w = torch::rand({rows, D}) * 0.02 - 0.01;
    fused_w.push_back(table_rows({rows, D}, torch::kFloat32, /*rows_on_demand=*/false).copy_(w));
    plain_w.push_back(w.requires_grad_(true));
    specs.push_back({"t" + std::to_string(f), fused_w.back(), true});
    feats.push_back({"f" + std::to_string(f), "t" + std::to_string(f), "sum"});
  }
  FusedOptimizerOptions fo;
  fo.kind = FusedOptimizerKind::kAdagrad;
  fo.lr = 0.01;
  FusedEmbeddingBags fused(specs, feats, fo);
  std::vector<torch::Tensor> plain_state;
  for (int64_t f = 0; f < F; ++f) plain_state.push_back(torch::zeros({rows, D}));
  // Adagrad on the coalesced sparse gradient of each table (FBGEMM's EXACT_ADAGRAD formula).
  auto plain_step = [&] {
    torch::NoGradGuard no_grad;
    for (int64_t f = 0; f < F; ++f) {
      torch::Tensor g = plain_w[f].grad().coalesce();
      torch::Tensor idx = g.indices()[0];
      torch::Tensor val = g.values();
      torch::Tensor acc = plain_state[f].index_select(0, idx) + val * val;
      plain_state[f].index_copy_(0, idx, acc);
      plain_w[f].index_add_(0, idx, -0.01 * val / (acc.sqrt() + 1e-8));
      plain_w[f].mutable_grad() = torch::Tensor();
    }
  };
  std::vector<std::vector<FusedFeatureInput>> batches;
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<FusedFeatureInput> batch;
    for (int64_t f = 0; f < F; ++f) {
      torch::Tensor lengths = torch::randint(5, 16, {B}, torch::kInt64);
      batch.push_back({zipf_ids(lengths.sum().item<int64_t>(), rows), offsets_from_lengths(lengths), {}, {}});
    }
    batches.push_back(batch);
  }
  using Clock = std::chrono::steady_clock;
  auto run_plain = [&](const std::vector<FusedFeatureInput>& batch) {
    std::vector<torch::Tensor> outs;
    for (int64_t f = 0; f < F; ++f) {
      outs.push_back(std::get<0>(torch::embedding_bag(plain_w[f], batch[f].ids, batch[f].offsets, false,
                                                      0, true, {}, true)));
    }
    torch::Tensor pooled = torch::cat(outs, 1);
    pooled.backward(torch::ones_like(pooled));
    plain_step();
  };
  double fused_forward_s = 0;
  auto run_fused = [&](const std::vector<FusedFeatureInput>& batch) {
    auto t0 = Clock::now();
    torch::Tensor pooled = fused.forward(batch);
    fused_forward_s += std::chrono::duration<double>(Clock::now() - t0).count();
    pooled.backward(torch::ones_like(pooled));
  };
  run_plain(batches[0]);
  run_fused(batches[0]);
  fused_forward_s = 0;
  double plain_s = 0, fused_s = 0;
  for (int64_t s = 1; s < steps; ++s) {
    auto t0 = Clock::now();
    run_plain(batches[s]);
    auto t1 = Clock::now();
    run_fused(batches[s]);
    auto t2 = Clock::now();
    plain_s += std::chrono::duration<double>(t1 - t0).count();
    fused_s += std::chrono::duration<double>(t2 - t1).count();
  }
  const double n = static_cast<double>(steps - 1);
  std::printf("threads %d, rows %lld: plain %.1f ms/step, fused %.1f ms/step (forward %.1f), "
              "speed-up %.2fx\n",
              at::get_num_threads(), static_cast<long long>(rows), 1e3 * plain_s / n,
              1e3 * fused_s / n, 1e3 * fused_forward_s / n, plain_s / fused_s);
  // Same data and updates: the two paths must agree (a sanity check of the comparison).
  EXPECT_TRUE(torch::allclose(fused_w[0], plain_w[0].detach(), 1e-4, 1e-5));
}


// Kernels only, shape (b) of bench/train_speed.sh: 26 features, one table each
// (TZREC_TBE_BENCH_ROWS rows, default 1M; dim 64), 1..19 ids per bag (Zipf 1.05 ranks scattered
// over the rows), batch 4096, adagrad; TZREC_TBE_BENCH_STEPS timed steps (default 5), TZREC_TBE_BENCH_THREADS threads (default 2).
// Prints the mean pooled_forward and backward_update times. Needs about 2 * 4 * 64 * 26 * rows bytes.
// build/tzrec_embedding_test --gtest_also_run_disabled_tests --gtest_filter='*BenchmarkKernels*'
TEST(TbeKernelsTest, DISABLED_BenchmarkKernelsMultiHot) {
  const char* env = std::getenv("TZREC_TBE_BENCH_ROWS");
  const int64_t rows = env ? std::atoll(env) : 1000000;
  const char* env_steps = std::getenv("TZREC_TBE_BENCH_STEPS");
  const int64_t steps = env_steps ? std::atoll(env_steps) : 5;
  const char* env_threads = std::getenv("TZREC_TBE_BENCH_THREADS");
  const int threads_before = at::get_num_threads();
  at::set_num_threads(env_threads ? std::atoi(env_threads) : 2);
  torch::manual_seed(0);
  const int64_t F = 26, D = 64, B = 4096;
  std::vector<torch::Tensor> weights, states;
  std::vector<tbe::TableBuffers> tables;
  FusedOptimizerOptions fo;
  fo.kind = FusedOptimizerKind::kAdagrad;
  for (int64_t f = 0; f < F; ++f) {
    weights.push_back(table_rows({rows, D}, torch::kFloat32, /*rows_on_demand=*/false).fill_(0.01));
    states.push_back(table_rows({rows, D}, torch::kFloat32, /*rows_on_demand=*/false).fill_(0.0));
    tbe::TableBuffers t;
    t.weight = weights.back().data_ptr();
    t.num_rows = rows;
    t.dim = D;
    t.momentum1 = states.back().data_ptr<float>();
    t.scalars = make_row_update_scalars(fo, 0.01, 1);
    tables.push_back(t);
  }
  std::vector<double> cdf(rows);
  double acc = 0;
  for (int64_t k = 0; k < rows; ++k) cdf[k] = acc += std::pow(static_cast<double>(k + 1), -1.05);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, acc);
  // Per step and feature: ids and offsets.
  std::vector<std::vector<std::vector<int64_t>>> ids(steps + 1), offsets(steps + 1);
  for (int64_t s = 0; s <= steps; ++s) {
    for (int64_t f = 0; f < F; ++f) {
      std::vector<int64_t> off{0}, v;
      const int64_t mult = 2 * f + 7919, add = 104729 * f;
      for (int64_t b = 0; b < B; ++b) {
        const int64_t len = 1 + static_cast<int64_t>(rng() % 19);
        for (int64_t i = 0; i < len; ++i) {
          const int64_t rank = std::min<int64_t>(
              std::lower_bound(cdf.begin(), cdf.end(), unit(rng)) - cdf.begin(), rows - 1);
          v.push_back((rank * mult + add) % rows);
        }
        off.push_back(static_cast<int64_t>(v.size()));
      }
      ids[s].push_back(std::move(v));
      offsets[s].push_back(std::move(off));
    }
  }
  torch::Tensor out = torch::empty({B, F * D});
  torch::Tensor grad = torch::randn({B, F * D}) * 0.01;
  using Clock = std::chrono::steady_clock;
  double fwd = 0, bwd = 0;
  for (int64_t s = 0; s <= steps; ++s) {
    std::vector<tbe::FeatureBuffers> features;
    for (int64_t f = 0; f < F; ++f) {
      tbe::FeatureBuffers fb;
      fb.ids = ids[s][f].data();
      fb.offsets = offsets[s][f].data();
      fb.table = f;
      fb.output_offset = f * D;
      features.push_back(fb);
    }
    auto t0 = Clock::now();
    tbe::pooled_forward(tables, features, B, out.data_ptr<float>(), F * D);
    auto t1 = Clock::now();
    tbe::backward_update(tables, features, B, grad.data_ptr<float>(), F * D,
                         state_layout(FusedOptimizerKind::kAdagrad));
    auto t2 = Clock::now();
    if (s == 0) continue;  // warm-up
    fwd += std::chrono::duration<double>(t1 - t0).count();
    bwd += std::chrono::duration<double>(t2 - t1).count();
  }
  std::printf("threads %d, rows %lld: forward %.1f ms, backward+update %.1f ms per step; "
              "checksum %.6f\n",
              at::get_num_threads(), static_cast<long long>(rows), 1e3 * fwd / steps,
              1e3 * bwd / steps, out.sum().item<double>() + weights[3].sum().item<double>());
  at::set_num_threads(threads_before);
}

}  // namespace tbe_kernels_test
}  // namespace tzrec::embedding
