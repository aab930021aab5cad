// Dynamic embedding tables (docs/tzrec-compatibility.md §5.13) next to a fixed-size table: the
// training step of a DynamicEmbeddingBagCollection (raw ids → rows by its DynamicTable, then the
// fused lookup and the fused rowwise_adagrad update in backward) against a plain
// EmbeddingBagCollection with one table of as many rows, on the same rows; the fill of the dynamic
// table; its memory against the budget; and steps with a share of never-seen ids at max
// capacity (evictions). Figures and their meaning: bench/README.md.
//
//   tzrec_dynamic_embedding_bench [--live_ids 50000000] [--batch 4096] [--features 26] [--dim 16]
//       [--rounds 5] [--steps 20] [--warmup 5] [--zipf 1.05] [--dists uniform,zipf]
//       [--new_share 0.1] [--fill_batch 1048576] [--bucket_capacity 128] [--threads 2] [--no_fixed]
//       [--capacity_factor 1] [--init_capacity 0] [--growth_pause 0] [--tower 512,256,128]
// Both arms live in one process (50M live ids: peak RSS ≈ 8.0 GiB; --no_fixed leaves (a) out).
//
// Setup: one table of dim D read by F features, bags of one id each, batch B, training mode,
// FusedOptimizerKind::kRowwiseAdagrad in both arms; a step = forward + backward of the sum of the
// pooled outputs (the fused update runs in backward). With --tower H1,H2,...: a step is a model's
// instead — the pooled outputs [B, F × D] through TorchEasyRec's MLP (ReLU, hidden units H) and a
// linear layer to one logit, binary cross-entropy against fixed random labels, backward (the fused
// update of the table), then Adam (lr 0.001, optim::DenseOptimizer) on the tower's parameters;
// each arm has its own tower, initialised from the same seed. 512,256,128 is the deep tower of
// DeepFM in examples/deepfm_criteo_synth.config (26 features of dim 16, as here).
//   (b) dynamic: a DynamicEmbeddingBagCollection, max_capacity = live_ids (STEP scores, buckets of
//       128, TorchEasyRec's default initializer), filled through training-mode remaps of
//       fill_batch never-seen ids each (F features × fill_batch / F rows) until every row is live
//       (evictions start before that: buckets fill unevenly). Then row p is owned by key K[p].
//       With --capacity_factor f > 1: max_capacity = f × live_ids, filled with live_ids ids (no
//       eviction), the index starting at --init_capacity rows and growing: the calls that doubled
//       it are timed (--growth_pause s: the fill waits s seconds after a call that started
//       preparing the next index in the background, as training steps with few new ids would).
//   (a) fixed: an EmbeddingBagCollection with one table of live_ids rows.
// The ids of a step: per position a rank r in [0, live_ids) — uniform, or Zipf-like (the bounded
// continuous Pareto inverse, P(r) ∝ (r + 1)^-s) — scattered over the rows by a fixed bijection
// p = (a·r + c) mod live_ids; (a) reads row p, (b) the raw id K[p], which the table maps to row p:
// both arms touch exactly the same rows, so the difference is the remap.
//   (c) churn: (b) with a share new_share of each batch's positions replaced by never-seen ids: at
//       max capacity each evicts the oldest id of its bucket and its row is drawn again (weights
//       and optimizer state reset). Its fixed counterpart (a') reads a random row at those places.
// Arms alternate in rounds (steps each, after warm-up steps), (a)/(b) per distribution first,
// then (a')/(c) (last, since it evicts ids of the earlier batches' tail). Step times are medians
// over all timed steps of an arm; the round ratios compare the rounds' medians (steadier when the
// machine's load changes between rounds). After the rounds, untimed for the ratio: the split of
// (b)'s step (remap() then the inner collection's forward + backward, which is what forward()
// does; then find() of the same ids alone, each right after an inner step, as the remap meets the
// index) and a control, (a)'s step right after a find() of its ids (the index traffic's
// cost to the lookup and update that follow).
// Memory: VmRSS growth of building and filling (b), then between checkpoints (after
// sync_state() and release_state_buffers(), as a checkpoint does), against
// 1.3 × live × (D + 1) × 4 B + 1 GiB; and during a checkpoint
// (rowwise adagrad: one float of state per row). Prints human-readable lines and one JSON line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include "base/malloc_tuning.h"
#include "base/stable_hash.h"
#include "embedding/dynamic_embedding_bag_collection.h"
#include "embedding/embedding_bag_collection.h"
#include "embedding/fused_row_optimizer.h"
#include "nn/mlp.h"
#include "optim/dense_optimizer.h"
#include "sparse/keyed_jagged_tensor.h"
#include "rank_sampler.h"

namespace {

using tzrec::embedding::BagConfig;
using tzrec::embedding::DynamicEmbeddingBagCollection;
using tzrec::embedding::DynamicEmbInitializer;
using tzrec::embedding::DynamicEmbTableConfig;
using tzrec::embedding::EmbeddingBagCollection;
using tzrec::embedding::FusedOptimizerKind;
using tzrec::embedding::FusedOptimizerOptions;
using tzrec::embedding::TableConfig;
using tzrec::sparse::KeyedJaggedTensor;
using tzrec::bench::RankSampler;
using tzrec::splitmix64;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// kB field of /proc/self/status ("VmRSS", "VmHWM") in GiB.
double status_gib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      std::istringstream s(line.substr(field.size() + 1));
      double kb = 0;
      s >> kb;
      return kb / (1024.0 * 1024.0);
    }
  }
  return 0;
}

// AnonHugePages of /proc/self/smaps_rollup in GiB: how much of the heap transparent huge pages back.
double huge_pages_gib() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("AnonHugePages:", 0) == 0) {
      std::istringstream s(line.substr(14));
      double kb = 0;
      s >> kb;
      return kb / (1024.0 * 1024.0);
    }
  }
  return 0;
}

// The j-th never-seen raw id: distinct for distinct j (splitmix64 is a bijection), any int64.
int64_t raw_key(uint64_t j) { return static_cast<int64_t>(splitmix64(j ^ 0x5eedULL)); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<double> ratios(const std::vector<double>& num, const std::vector<double>& den) {
  std::vector<double> out;
  for (size_t i = 0; i < num.size() && i < den.size(); ++i) out.push_back(den[i] > 0 ? num[i] / den[i] : 0.0);
  return out;
}

std::vector<std::string> feature_names(int64_t features) {
  std::vector<std::string> names;
  for (int64_t f = 0; f < features; ++f) names.push_back("f" + std::to_string(f));
  return names;
}

// F features of B rows with one id each: ids [F * B], key-major.
KeyedJaggedTensor make_kjt(const std::vector<std::string>& names, const std::vector<int64_t>& ids) {
  torch::Tensor values = torch::tensor(ids, torch::kInt64);
  torch::Tensor lengths = torch::ones({static_cast<int64_t>(ids.size())}, torch::kInt64);
  return KeyedJaggedTensor(names, values, lengths);
}

std::vector<BagConfig> bags(const std::vector<std::string>& names) {
  std::vector<BagConfig> out;
  for (const std::string& n : names) {
    BagConfig b;
    b.feature_name = n;
    b.table_name = "t";
    out.push_back(b);
  }
  return out;
}

FusedOptimizerOptions rowwise_adagrad() {
  FusedOptimizerOptions o;
  o.kind = FusedOptimizerKind::kRowwiseAdagrad;
  o.lr = 0.01;
  return o;
}

struct StepBatches {
  std::vector<KeyedJaggedTensor> fixed, dynamic;
  double distinct_share = 0;  // distinct rows / ids, mean over the batches
};

// The dense part of a model over the pooled embeddings (--tower; see the file comment).
class Tower {
 public:
  Tower(int64_t in_features, const std::vector<int64_t>& hidden_units, int64_t batch) {
    torch::manual_seed(7);  // the same initial weights in every arm
    tzrec::nn::MLPOptions o;
    o.hidden_units = hidden_units;
    mlp_ = tzrec::nn::MLP(in_features, o, "tower");
    out_ = torch::nn::Linear(hidden_units.back(), 1);
    labels_ = torch::randint(0, 2, {batch, 1}, torch::kFloat32);
    std::vector<std::pair<std::string, torch::Tensor>> params;
    for (const auto& p : mlp_->named_parameters()) params.emplace_back("mlp." + p.key(), p.value());
    for (const auto& p : out_->named_parameters()) params.emplace_back("out." + p.key(), p.value());
    tzrec::optim::DenseOptimizerOptions adam;
    adam.kind = tzrec::optim::DenseOptimizerOptions::Kind::kAdam;
    adam.lr = 0.001;
    optimizer_ = std::make_unique<tzrec::optim::DenseOptimizer>(adam, params);
  }
  // The loss of the pooled embeddings, its backward, then the optimizer step.
  void train_step(const torch::Tensor& pooled) {
    optimizer_->zero_grad();
    torch::Tensor logits = out_->forward(mlp_->forward(pooled));
    torch::binary_cross_entropy_with_logits(logits, labels_).backward();
    optimizer_->step();
  }

 private:
  tzrec::nn::MLP mlp_{nullptr};
  torch::nn::Linear out_{nullptr};
  torch::Tensor labels_;
  std::unique_ptr<tzrec::optim::DenseOptimizer> optimizer_;
};

// One training step of the collection m (with the tower on top when there is one), in ms.
template <class Module>
double timed_step(Module& m, const KeyedJaggedTensor& kjt, Tower* tower) {
  const auto t0 = Clock::now();
  tzrec::sparse::KeyedTensor out = m->forward(kjt);
  if (tower != nullptr) {
    tower->train_step(out.values());
  } else {
    out.values().sum().backward();
  }
  return seconds_since(t0) * 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("dynamic embedding table against a fixed-size table: step time, fill, memory");
  int64_t live_ids = 50000000, batch = 4096, features = 26, dim = 16, rounds = 5, steps = 20, warmup = 5;
  int64_t fill_batch = 1 << 20, bucket_capacity = 128;
  double growth_pause_s = 0;
  double zipf = 1.05, new_share = 0.1, capacity_factor = 1.0;
  int64_t init_capacity = 0;
  int threads = 2;
  std::string dists = "uniform,zipf";
  bool no_fixed = false;
  std::vector<int64_t> tower_units;
  app.add_option("--live_ids", live_ids, "live ids of the dynamic table = rows of the fixed one");
  app.add_option("--batch", batch);
  app.add_option("--features", features);
  app.add_option("--dim", dim);
  app.add_option("--rounds", rounds);
  app.add_option("--steps", steps, "timed steps per arm and round");
  app.add_option("--warmup", warmup, "untimed steps per arm before the rounds");
  app.add_option("--zipf", zipf, "exponent of the zipf distribution (!= 1)");
  app.add_option("--dists", dists, "comma list of uniform, zipf");
  app.add_option("--new_share", new_share, "share of never-seen ids per batch in the churn arm (0: skip it)");
  app.add_option("--fill_batch", fill_batch, "ids per training-mode remap while filling");
  app.add_option("--growth_pause", growth_pause_s,
                 "seconds the fill waits after a call that started preparing the next index (training steps with "
                 "few new ids would give the background thread that time)");
  app.add_option("--bucket_capacity", bucket_capacity);
  app.add_option("--threads", threads);
  app.add_flag("--no_fixed", no_fixed, "skip the fixed-table arm (memory)");
  app.add_option("--capacity_factor", capacity_factor,
                 "max_capacity = this x live_ids (>= 1; above 1 the table is filled to live_ids ids, not full)");
  app.add_option("--init_capacity", init_capacity, "init_capacity_per_rank (0: max_capacity, dynamicemb's default)");
  app.add_option("--tower", tower_units,
                 "hidden units of a dense tower trained on the pooled embeddings (a model's step; DeepFM's deep "
                 "tower: 512,256,128); none: a step is the collection's alone")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (capacity_factor < 1.0) {
    std::fprintf(stderr, "--capacity_factor must be at least 1\n");
    return 2;
  }
  tzrec::tune_malloc_for_training();
  torch::set_num_threads(threads);
  torch::manual_seed(1);
  const std::vector<std::string> names = feature_names(features);
  const int64_t ids_per_step = batch * features;
  std::string units;
  for (int64_t u : tower_units) units += (units.empty() ? "" : ",") + std::to_string(u);
  const std::string tower_text =
      units.empty() ? "none (a step is the collection's forward + backward)" : "MLP " + units + " + logit, BCE, Adam";
  std::printf("live ids %lld, batch %lld x %lld features, dim %lld, rowwise_adagrad, %d threads; dense tower: %s\n",
              static_cast<long long>(live_ids), static_cast<long long>(batch), static_cast<long long>(features),
              static_cast<long long>(dim), torch::get_num_threads(), tower_text.c_str());

  // ---- (b) the dynamic arm: build, fill, memory -------------------------------------------------
  const double rss0 = status_gib("VmRSS");
  auto t0 = Clock::now();
  DynamicEmbTableConfig dt;
  dt.table.name = "t";
  dt.table.embedding_dim = dim;
  dt.dynamic.table.max_capacity = static_cast<int64_t>(std::llround(capacity_factor * static_cast<double>(live_ids)));
  if (init_capacity > 0) dt.dynamic.table.init_capacity = init_capacity;
  dt.dynamic.table.bucket_capacity = bucket_capacity;
  dt.dynamic.table.score_strategy = tzrec::embedding::DynamicScoreStrategy::kStep;
  dt.dynamic.init.mode = DynamicEmbInitializer::Mode::kUniform;  // TorchEasyRec's default: ±1/√max_capacity
  dt.dynamic.init.upper = 1.0 / std::sqrt(static_cast<double>(dt.dynamic.table.max_capacity));
  dt.dynamic.init.lower = -dt.dynamic.init.upper;
  DynamicEmbeddingBagCollection dyn(std::vector<DynamicEmbTableConfig>{dt}, bags(names));
  dyn->embedding_module()->enable_fused_optimizer(rowwise_adagrad());
  dyn->train();
  tzrec::embedding::DynamicTable& table = dyn->dynamic_table("t");
  const int64_t capacity = table.max_capacity();
  const int64_t fill_target = capacity_factor > 1.0 ? live_ids : capacity;  // a full table, or live_ids ids
  const double build_s = seconds_since(t0);
  const double rss_built = status_gib("VmRSS");

  t0 = Clock::now();
  const int64_t fill_rows = std::max<int64_t>(1, fill_batch / features);
  uint64_t next_key = 0;
  int64_t fill_calls = 0, evicted = 0;
  double first_fill_s = 0;  // until live_ids ids were offered
  // Index growth: each call that doubled the index, its time against the median call's.
  std::vector<double> call_s;
  std::vector<std::pair<int64_t, double>> growth_calls;  // (capacity after, seconds)
  {
    std::vector<int64_t> ids(static_cast<size_t>(fill_rows * features));
    while (table.size() < fill_target && next_key < static_cast<uint64_t>(3 * capacity)) {
      for (int64_t& id : ids) id = raw_key(next_key++);
      const int64_t before = table.size(), capacity_before = table.capacity(), memory_before = table.memory_bytes();
      const auto c0 = Clock::now();
      dyn->remap(make_kjt(names, ids), /*training=*/true);
      call_s.push_back(seconds_since(c0));
      if (table.capacity() != capacity_before) growth_calls.emplace_back(table.capacity(), call_s.back());
      // The index did not double but its memory grew: the call started preparing the next one.
      if (growth_pause_s > 0 && table.capacity() == capacity_before &&
          table.memory_bytes() > memory_before + (int64_t{1} << 20)) {
        std::this_thread::sleep_for(std::chrono::duration<double>(growth_pause_s));
      }
      evicted += static_cast<int64_t>(ids.size()) - (table.size() - before);
      ++fill_calls;
      if (first_fill_s == 0 && next_key >= static_cast<uint64_t>(live_ids)) first_fill_s = seconds_since(t0);
    }
  }
  const double fill_s = seconds_since(t0);
  if (!growth_calls.empty()) {
    std::vector<double> sorted = call_s;
    std::sort(sorted.begin(), sorted.end());
    std::printf("index growth: %zu calls doubled the index (%lld with arrays prepared in the background; median "
                "fill call %.3f s); capacity after, call time:",
                growth_calls.size(), static_cast<long long>(table.prepared_growths()), sorted[sorted.size() / 2]);
    for (const auto& [cap, secs] : growth_calls) std::printf(" %lld %.3f s;", static_cast<long long>(cap), secs);
    std::printf("\n");
  }
  const double rss_filled = status_gib("VmRSS");
  dyn->sync_state();  // what every checkpoint does: the state buffers get the rows in use
  const double rss_synced = status_gib("VmRSS");
  dyn->release_state_buffers();  // and after it was written
  const double rss_released = status_gib("VmRSS");
  const int64_t live = table.size();
  std::printf("dynamic table: max_capacity %lld (rounded from %lld), built in %.1f s; filled with %llu new ids in %lld "
              "remaps of %lld in %.1f s (%.2f M ids/s; the first %lld ids in %.1f s): %lld live, %lld evicted or "
              "rejected on the way\n",
              static_cast<long long>(capacity), static_cast<long long>(dt.dynamic.table.max_capacity), build_s,
              static_cast<unsigned long long>(next_key), static_cast<long long>(fill_calls),
              static_cast<long long>(fill_rows * features), fill_s, static_cast<double>(next_key) / fill_s / 1e6,
              static_cast<long long>(live_ids), first_fill_s, static_cast<long long>(live),
              static_cast<long long>(evicted));
  const tzrec::embedding::DynamicIndexStats index = table.index_stats();
  std::printf("index: %.1f%% of the live keys in their home line (one cache line per probe), %.1f%% displaced into the "
              "other half of their bucket\n",
              100.0 * static_cast<double>(index.at_home_line) / static_cast<double>(std::max<int64_t>(index.keys, 1)),
              100.0 * static_cast<double>(index.displaced) / static_cast<double>(std::max<int64_t>(index.keys, 1)));

  const double gib = 1024.0 * 1024.0 * 1024.0;
  // The weight, its optimizer state and the state buffers are sized for max_capacity + 2 rows but
  // demand-paged: they take memory for the rows in use (num_rows()) only.
  const int64_t used = table.num_rows();
  const double weight_gib = static_cast<double>(used * dim * 4) / gib;
  const double state_gib = static_cast<double>(used * 4) / gib;
  const double index_gib = static_cast<double>(table.memory_bytes()) / gib;
  const double buffers_gib = static_cast<double>(used * 17) / gib;
  const double budget_gib = 1.3 * static_cast<double>(live) * static_cast<double>(dim + 1) * 4.0 / gib + 1.0;
  const double growth = rss_released - rss0;
  std::printf("memory: max_capacity %lld rows, %lld in use; RSS %.2f GiB before, %.2f built, %.2f filled, %.2f during "
              "a checkpoint (sync_state: + state buffers %.2f), %.2f after it (release_state_buffers): growth %.2f GiB "
              "(rows in use: weights %.2f + rowwise state %.2f; index %.2f; = %.2f); budget 1.3 x %lld x (%lld + 1) x "
              "4 B + 1 GiB = %.2f GiB: %s (during a checkpoint: %.2f GiB)\n",
              static_cast<long long>(capacity), static_cast<long long>(used), rss0, rss_built, rss_filled, rss_synced,
              buffers_gib, rss_released, growth, weight_gib, state_gib, index_gib, weight_gib + state_gib + index_gib,
              static_cast<long long>(live), static_cast<long long>(dim), budget_gib,
              growth <= budget_gib ? "PASS" : "FAIL", rss_synced - rss0);

  // Row → its key (every row < num_rows() is live when the table is full; a dead row maps to -1).
  t0 = Clock::now();
  std::vector<int64_t> key_of_row(static_cast<size_t>(table.num_rows()), -1);
  {
    const size_t chunk = 1 << 20;
    std::vector<int64_t> keys(chunk), rows(chunk);
    for (uint64_t j = 0; j < next_key; j += chunk) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, next_key - j));
      for (size_t i = 0; i < n; ++i) keys[i] = raw_key(j + i);
      table.find(keys.data(), n, rows.data());
      for (size_t i = 0; i < n; ++i) {
        if (rows[i] >= 0) key_of_row[static_cast<size_t>(rows[i])] = keys[i];
      }
    }
  }
  const int64_t n_rows = static_cast<int64_t>(key_of_row.size());
  std::printf("row -> key map in %.1f s; huge pages %.2f GiB\n", seconds_since(t0), huge_pages_gib());

  // ---- (a) the fixed arm -----------------------------------------------------------------------
  EmbeddingBagCollection fixed{nullptr};
  const double rss_before_fixed = status_gib("VmRSS");
  if (!no_fixed) {
    t0 = Clock::now();
    TableConfig ft;
    ft.name = "t";
    ft.num_embeddings = n_rows;
    ft.embedding_dim = dim;
    fixed = EmbeddingBagCollection(std::vector<TableConfig>{ft}, bags(names));
    fixed->enable_fused_optimizer(rowwise_adagrad());
    fixed->train();
    std::printf("fixed table: %lld rows, built in %.1f s, RSS +%.2f GiB; huge pages %.2f GiB\n",
                static_cast<long long>(n_rows), seconds_since(t0), status_gib("VmRSS") - rss_before_fixed,
                huge_pages_gib());
  }

  // Dense towers (--tower): one per arm, the same initial weights; the split's steps use (b)'s.
  std::unique_ptr<Tower> tower_a, tower_b;
  if (!tower_units.empty()) {
    tower_a = std::make_unique<Tower>(features * dim, tower_units, batch);
    tower_b = std::make_unique<Tower>(features * dim, tower_units, batch);
  }

  // ---- step batches ------------------------------------------------------------------------------
  // Bijection r → (a·r + c) mod n_rows scattering the ranks (a coprime to n_rows).
  uint64_t mul = 0x9E3779B97F4A7C15ull % static_cast<uint64_t>(n_rows);
  while (std::gcd(mul, static_cast<uint64_t>(n_rows)) != 1) ++mul;
  const auto scatter = [&](int64_t r) {
    const unsigned __int128 v = static_cast<unsigned __int128>(mul) * static_cast<uint64_t>(r) + 12345u;
    int64_t p = static_cast<int64_t>(v % static_cast<uint64_t>(n_rows));
    while (key_of_row[static_cast<size_t>(p)] < 0) p = (p + 1) % n_rows;  // dead row: the next live one
    return p;
  };
  const auto make_batches = [&](double s, uint64_t seed) {
    StepBatches out;
    std::mt19937_64 rng(seed);
    RankSampler sampler(n_rows, s);
    std::vector<int64_t> rows(static_cast<size_t>(ids_per_step)), keys(rows.size());
    double distinct = 0;
    for (int64_t b = 0; b < steps; ++b) {
      for (size_t i = 0; i < rows.size(); ++i) {
        rows[i] = scatter(sampler(rng));
        keys[i] = key_of_row[static_cast<size_t>(rows[i])];
      }
      out.fixed.push_back(make_kjt(names, rows));
      out.dynamic.push_back(make_kjt(names, keys));
      std::vector<int64_t> sorted = rows;
      std::sort(sorted.begin(), sorted.end());
      distinct += static_cast<double>(std::unique(sorted.begin(), sorted.end()) - sorted.begin()) /
                  static_cast<double>(rows.size());
    }
    out.distinct_share = distinct / static_cast<double>(steps);
    return out;
  };

  std::vector<std::string> dist_list;
  {
    std::stringstream s(dists);
    std::string d;
    while (std::getline(s, d, ',')) dist_list.push_back(d);
  }

  std::string json = "{\"live_ids\": " + std::to_string(live) + ", \"max_capacity\": " + std::to_string(capacity) +
                     ", \"batch\": " + std::to_string(batch) + ", \"features\": " + std::to_string(features) +
                     ", \"dim\": " + std::to_string(dim) + ", \"threads\": " + std::to_string(threads) +
                     ", \"tower\": \"" + tower_text + "\"";
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                ", \"fill_s\": %.2f, \"fill_ids\": %llu, \"rss_growth_gib\": %.3f, \"rss_growth_checkpoint_gib\": %.3f, "
                "\"budget_gib\": %.3f, \"home_line_share\": %.4f",
                fill_s, static_cast<unsigned long long>(next_key), growth, rss_synced - rss0, budget_gib,
                static_cast<double>(index.at_home_line) / static_cast<double>(std::max<int64_t>(index.keys, 1)));
  json += buf;

  const auto fmt_rounds = [](const std::vector<double>& v) {
    std::string out;
    for (double x : v) out += (out.empty() ? "" : ", ") + std::to_string(x).substr(0, 5);
    return out;
  };
  EmbeddingBagCollection inner = dyn->embedding_module();
  std::vector<StepBatches> batches;
  std::vector<double> dynamic_median;
  for (const std::string& d : dist_list) {
    const double s = d == "zipf" ? zipf : 0.0;
    t0 = Clock::now();
    batches.push_back(make_batches(s, d == "zipf" ? 7 : 3));
    const StepBatches& sb = batches.back();
    std::printf("\n[%s%s] %lld batches built in %.1f s; distinct rows per batch %.1f%% of %lld ids\n", d.c_str(),
                d == "zipf" ? (" " + std::to_string(zipf).substr(0, 4)).c_str() : "", static_cast<long long>(steps),
                seconds_since(t0), 100.0 * sb.distinct_share, static_cast<long long>(ids_per_step));

    // (a)/(b) alternating rounds.
    for (int64_t w = 0; w < warmup; ++w) {
      if (fixed) timed_step(fixed, sb.fixed[w % steps], tower_a.get());
      timed_step(dyn, sb.dynamic[w % steps], tower_b.get());
    }
    std::vector<double> ta, tb, ra, rb;
    for (int64_t r = 0; r < rounds; ++r) {
      std::vector<double> round_a, round_b;
      if (fixed) {
        for (int64_t k = 0; k < steps; ++k) round_a.push_back(timed_step(fixed, sb.fixed[k], tower_a.get()));
      }
      for (int64_t k = 0; k < steps; ++k) round_b.push_back(timed_step(dyn, sb.dynamic[k], tower_b.get()));
      ra.push_back(median(round_a));
      rb.push_back(median(round_b));
      ta.insert(ta.end(), round_a.begin(), round_a.end());
      tb.insert(tb.end(), round_b.begin(), round_b.end());
    }
    // Split of the dynamic step (forward() is remap() then the inner collection's forward).
    std::vector<double> remap_ms, inner_ms, find_ms;
    std::vector<int64_t> found(static_cast<size_t>(ids_per_step));
    std::vector<KeyedJaggedTensor> remapped;
    for (int64_t k = 0; k < steps; ++k) {
      const auto s0 = Clock::now();
      KeyedJaggedTensor rows = dyn->remap(sb.dynamic[k], true);
      remap_ms.push_back(seconds_since(s0) * 1e3);
      inner_ms.push_back(timed_step(inner, rows, tower_b.get()));
      remapped.push_back(rows);
    }
    // The index probe alone, as the remap meets it: find() of a batch's ids right after an inner
    // step (which leaves the index's lines cold), not timing that step.
    for (int64_t k = 0; k < steps; ++k) {
      const auto s0 = Clock::now();
      table.find(sb.dynamic[k].values().data_ptr<int64_t>(), found.size(), found.data());
      find_ms.push_back(seconds_since(s0) * 1e3);
      timed_step(inner, remapped[k], tower_b.get());
    }
    // Control: (a)'s step right after an (untimed) probe of the same ids — what the remap's traffic
    // alone costs the lookup and update that follow it.
    std::vector<double> polluted_ms;
    for (int64_t k = 0; fixed && k < steps; ++k) {
      table.find(sb.dynamic[k].values().data_ptr<int64_t>(), found.size(), found.data());
      polluted_ms.push_back(timed_step(fixed, sb.fixed[k], tower_a.get()));
    }
    // The same after a training remap() (the probe and its score writes), and (b)'s inner steps
    // back to back with no remap between them: with the control above, where the lookup and update
    // of (b) lose time against (a)'s.
    std::vector<double> after_remap_ms, inner_alone_ms;
    for (int64_t k = 0; fixed && k < steps; ++k) {
      dyn->remap(sb.dynamic[k], true);
      after_remap_ms.push_back(timed_step(fixed, sb.fixed[k], tower_a.get()));
    }
    for (int64_t k = 0; k < steps; ++k) inner_alone_ms.push_back(timed_step(inner, remapped[k], tower_b.get()));
    const double ma = median(ta), mb = median(tb);
    dynamic_median.push_back(mb);
    const double round_ratio = fixed ? median(ratios(rb, ra)) : 0.0;
    std::printf("  (a) fixed   median step %.2f ms (round medians %s)\n", ma, fmt_rounds(ra).c_str());
    std::printf("  (b) dynamic median step %.2f ms (round medians %s)\n", mb, fmt_rounds(rb).c_str());
    std::printf("      split (b): remap %.2f ms (index probe alone, find() after a step: %.2f) + lookup/update %.2f ms\n",
                median(remap_ms), median(find_ms), median(inner_ms));
    if (fixed) {
      std::printf("      control: (a) right after a find() of the same ids %.2f ms, after a training remap() %.2f ms\n",
                  median(polluted_ms), median(after_remap_ms));
    }
    std::printf("      control: (b)'s lookup/update back to back, no remap between %.2f ms\n", median(inner_alone_ms));
    if (fixed) {
      std::printf("  ratio (b)/(a) %.3f, median of the round ratios %.3f (target <= 1.3: %s)\n", mb / ma, round_ratio,
                  round_ratio <= 1.3 ? "met" : "not met");
    }
    std::snprintf(buf, sizeof(buf),
                  ", \"%s\": {\"distinct_share\": %.4f, \"fixed_ms\": %.3f, \"dynamic_ms\": %.3f, \"ratio\": %.3f, "
                  "\"round_ratio\": %.3f, \"remap_ms\": %.3f, \"find_ms\": %.3f, \"inner_ms\": %.3f, "
                  "\"fixed_after_find_ms\": %.3f, \"fixed_after_remap_ms\": %.3f, \"inner_alone_ms\": %.3f}",
                  d.c_str(), sb.distinct_share, ma, mb, ma > 0 ? mb / ma : 0.0, round_ratio, median(remap_ms),
                  median(find_ms), median(inner_ms), median(polluted_ms), median(after_remap_ms),
                  median(inner_alone_ms));
    json += buf;
  }

  // (a')/(c): a share of never-seen ids per batch (at max capacity: evictions). After every (a)/(b)
  // phase, since the evictions take ids their batches read.
  std::mt19937_64 churn_rng(99);
  const int64_t n_new = static_cast<int64_t>(std::llround(new_share * static_cast<double>(ids_per_step)));
  for (size_t di = 0; n_new > 0 && di < dist_list.size(); ++di) {
    const StepBatches& sb = batches[di];
    std::vector<size_t> positions(static_cast<size_t>(ids_per_step));
    std::iota(positions.begin(), positions.end(), size_t{0});
    std::vector<double> tc, ta2, rc, ra2;
    double missing_share = 0;
    std::vector<int64_t> found(static_cast<size_t>(ids_per_step));
    std::vector<double> remap_ms, inner_ms;
    for (int64_t r = -1; r <= rounds; ++r) {  // r = -1: warm-up; r = rounds: the split of (c)'s step
      const int64_t n_steps = r < 0 ? warmup : steps;
      const bool split = r == rounds;
      std::vector<double> round_a, round_c;
      std::vector<KeyedJaggedTensor> kc, ka;  // this round's batches, built before timing
      for (int64_t k = 0; k < n_steps; ++k) {
        const int64_t* base = sb.dynamic[k % steps].values().data_ptr<int64_t>();
        const int64_t* base_a = sb.fixed[k % steps].values().data_ptr<int64_t>();
        std::vector<int64_t> keys(base, base + ids_per_step), rows(base_a, base_a + ids_per_step);
        for (int64_t i = 0; i < n_new; ++i) {  // partial Fisher-Yates: n_new distinct positions
          const size_t j = static_cast<size_t>(i) + churn_rng() % (positions.size() - static_cast<size_t>(i));
          std::swap(positions[static_cast<size_t>(i)], positions[j]);
          keys[positions[static_cast<size_t>(i)]] = raw_key(next_key++);
          rows[positions[static_cast<size_t>(i)]] = static_cast<int64_t>(churn_rng() % static_cast<uint64_t>(n_rows));
        }
        kc.push_back(make_kjt(names, keys));
        ka.push_back(make_kjt(names, rows));
      }
      if (fixed && !split) {
        for (int64_t k = 0; k < n_steps; ++k) round_a.push_back(timed_step(fixed, ka[k], tower_a.get()));
      }
      for (int64_t k = 0; k < n_steps; ++k) {
        if (split) {
          const auto s0 = Clock::now();
          KeyedJaggedTensor rows = dyn->remap(kc[k], true);
          remap_ms.push_back(seconds_since(s0) * 1e3);
          inner_ms.push_back(timed_step(inner, rows, tower_b.get()));
          continue;
        }
        if (r >= 0) {  // ids the table lacks (the new ones, and earlier batches' ids evicted since), untimed
          table.find(kc[k].values().data_ptr<int64_t>(), found.size(), found.data());
          missing_share += static_cast<double>(std::count(found.begin(), found.end(), int64_t{-1})) /
                           static_cast<double>(found.size());
        }
        round_c.push_back(timed_step(dyn, kc[k], tower_b.get()));
      }
      if (r >= 0 && !split) {
        ra2.push_back(median(round_a));
        rc.push_back(median(round_c));
        ta2.insert(ta2.end(), round_a.begin(), round_a.end());
        tc.insert(tc.end(), round_c.begin(), round_c.end());
      }
    }
    missing_share /= static_cast<double>(rounds * steps);
    const double ma2 = median(ta2), mc = median(tc);
    std::printf("\n[%s] churn: %lld never-seen ids per batch (%.0f%%); ids not in the table at their step %.2f%%; "
                "table full, each new id evicts\n",
                dist_list[di].c_str(), static_cast<long long>(n_new), 100.0 * new_share, 100.0 * missing_share);
    std::printf("  (a') fixed   median step %.2f ms (round medians %s)\n", ma2, fmt_rounds(ra2).c_str());
    std::printf("  (c)  dynamic median step %.2f ms (round medians %s); live ids after: %lld\n", mc,
                fmt_rounds(rc).c_str(), static_cast<long long>(table.size()));
    std::printf("      split (c): remap %.2f ms + lookup/update %.2f ms\n", median(remap_ms), median(inner_ms));
    const double churn_round_ratio = fixed ? median(ratios(rc, ra2)) : 0.0;
    if (fixed) {
      std::printf("  ratio (c)/(a') %.3f, median of the round ratios %.3f; (c)/(b) %.3f\n", mc / ma2, churn_round_ratio,
                  mc / dynamic_median[di]);
    }
    std::snprintf(buf, sizeof(buf),
                  ", \"%s_churn\": {\"missing_share\": %.4f, \"fixed_ms\": %.3f, \"dynamic_ms\": %.3f, "
                  "\"ratio\": %.3f, \"round_ratio\": %.3f, \"remap_ms\": %.3f, \"inner_ms\": %.3f}",
                  dist_list[di].c_str(), missing_share, ma2, mc, ma2 > 0 ? mc / ma2 : 0.0, churn_round_ratio,
                  median(remap_ms), median(inner_ms));
    json += buf;
  }
  std::snprintf(buf, sizeof(buf), ", \"peak_rss_gib\": %.3f}", status_gib("VmHWM"));
  json += buf;
  std::printf("\npeak RSS %.2f GiB\n%s\n", status_gib("VmHWM"), json.c_str());
  return 0;
}
