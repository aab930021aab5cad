// Training-speed benchmark of tzrec-cpp: the steps of src/train/trainer.cc (model.predict ->
// model.loss -> TrainingSession::backward_and_step -> advance_step_schedules) on batches built in
// memory before timing, so the step rate has no input pipeline in it. bench/train_speed.sh runs it
// next to bench/train_speed_reference.py (plain PyTorch) on the same data.
//
// Two subcommands:
//
//   gen_multihot --out_dir D --train_rows N --eval_rows E --table_rows R [--features 26]
//                [--mean_ids 10] [--zipf 1.05] [--seed 2024]
//     Writes multi-hot data: per row and feature a bag of 1..2*mean_ids-1 ids (uniform length),
//     each id a Zipf(zipf) rank over R rows scattered by a per-feature bijection
//     (rank * mult_f + add_f) mod R, and a label ~ Bernoulli(sigmoid(bias + 1.5 * sum over
//     features of the mean hidden weight of the bag's ranks)), hidden weights uniform in [-1, 1].
//     Files (little endian, row-major), for S in {train, eval}:
//       D/S.lengths  int32 [rows, features]       bag length of (row, feature)
//       D/S.values   int64 [sum of lengths]       ids in (row, feature) order
//       D/S.labels   float32 [rows]
//       D/meta.json  {"features", "table_rows", "train_rows", "eval_rows", ...}
//     Features are named f_0 .. f_<features-1> (bench/configs/multitower_multihot.config).
//
//   train --pipeline_config C --format parquet|multihot --train_input X --eval_input Y
//         [--table_rows R] [--batch_size B] [--warmup_steps W] [--steps S] [--threads T]
//         [--profile_trace FILE [--profile_steps 3]]
//     parquet: X / Y are input files of the config's dataset type (Parquet, or CSV with a
//     CsvDataset config) read through the feature parser (feature::BatchLoader, one reader, file
//     order; with a negative sampler each batch carries its sampled negatives, drawn before timing). multihot: X is a gen_multihot directory (Y unused, its eval rows
//     are the held-out set). --table_rows overrides num_buckets of every id_feature. Trains the
//     first W batches untimed, then S timed steps (0: the rest of one epoch; more than the
//     batches there are: cycles through them), frees the training batches, loads the held-out
//     ones and evaluates AUC on them, and measures the GEMM rate at the model's Linear shapes
//     (DIN's attention layers, parameters under "din_towers.", on B x T rows, T the timed
//     batches' mean padded history). Prints one JSON line (fields in run_train; peak RSS also
//     per phase: training forward / backward, evaluation).
//     --profile_trace: after the timed steps, runs --profile_steps more under libtorch's profiler
//     and writes its chrome trace (ops and autograd nodes with their times) to FILE.
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include "base/error.h"
#include "base/malloc_tuning.h"
#include "base/stable_hash.h"
#include "config/pipeline_config.h"
#include "feature/batch_loader.h"
#include "sparse/batch.h"
#include "train/training_session.h"

namespace {

using namespace tzrec;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- multi-hot data ----------------------------------------------------------------------------

struct MultiHotOptions {
  std::string out_dir;
  int64_t train_rows = 0;
  int64_t eval_rows = 0;
  int64_t table_rows = 1000000;
  int features = 26;
  int mean_ids = 10;
  double zipf = 1.05;
  uint64_t seed = 2024;
};

template <typename T>
void write_vector(const std::filesystem::path& path, const std::vector<T>& v) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  if (!out) throw IoError(fmt::format("cannot write {}", path.string()));
}

void gen_multihot(const MultiHotOptions& o) {
  if (o.train_rows <= 0 || o.eval_rows <= 0 || o.table_rows <= 1 || o.features <= 0 || o.mean_ids <= 0) {
    throw UsageError("gen_multihot: train_rows, eval_rows, features and mean_ids must be > 0, table_rows > 1");
  }
  std::filesystem::create_directories(o.out_dir);
  // Zipf CDF over ranks 0 .. R-1 (P(rank k) ~ 1 / (k + 1)^zipf).
  std::vector<double> cdf(static_cast<size_t>(o.table_rows));
  double acc = 0;
  for (int64_t k = 0; k < o.table_rows; ++k) cdf[k] = acc += std::pow(static_cast<double>(k + 1), -o.zipf);
  for (double& c : cdf) c /= acc;
  // Per-feature bijection of ranks onto rows: a multiplier coprime with R.
  std::vector<int64_t> mult(o.features), add(o.features);
  for (int f = 0; f < o.features; ++f) {
    uint64_t h = splitmix64(o.seed * 1000003ULL + static_cast<uint64_t>(f));
    int64_t m = static_cast<int64_t>(h % static_cast<uint64_t>(o.table_rows - 1)) + 1;
    while (std::gcd(m, o.table_rows) != 1) m = m % (o.table_rows - 1) + 1;
    mult[f] = m;
    add[f] = static_cast<int64_t>(splitmix64(h) % static_cast<uint64_t>(o.table_rows));
  }
  auto hidden_weight = [&](int f, int64_t rank) {
    const uint64_t word = splitmix64(o.seed ^ (static_cast<uint64_t>(f) << 40) ^ static_cast<uint64_t>(rank));
    return 2.0 * unit_from_bits(word) - 1.0;
  };
  const double bias = -1.1;  // about 25% positives
  auto write_split = [&](const std::string& split, int64_t first_row, int64_t rows) {
    std::vector<int32_t> lengths(static_cast<size_t>(rows * o.features));
    std::vector<int64_t> values;
    values.reserve(static_cast<size_t>(rows * o.features * o.mean_ids));
    std::vector<float> labels(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      std::mt19937_64 rng(splitmix64(o.seed + static_cast<uint64_t>(first_row + r)));
      double logit = bias;
      for (int f = 0; f < o.features; ++f) {
        const int len = 1 + static_cast<int>(rng() % static_cast<uint64_t>(2 * o.mean_ids - 1));
        lengths[r * o.features + f] = len;
        double wsum = 0;
        for (int i = 0; i < len; ++i) {
          const double u = unit_from_bits(rng());
          const int64_t rank = std::min<int64_t>(
              std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin(), o.table_rows - 1);
          values.push_back(static_cast<int64_t>((static_cast<__int128>(rank) * mult[f] + add[f]) % o.table_rows));
          wsum += hidden_weight(f, rank);
        }
        logit += 1.5 * wsum / len;
      }
      labels[r] = unit_from_bits(rng()) < 1.0 / (1.0 + std::exp(-logit)) ? 1.0f : 0.0f;
    }
    const std::filesystem::path dir(o.out_dir);
    write_vector(dir / (split + ".lengths"), lengths);
    write_vector(dir / (split + ".values"), values);
    write_vector(dir / (split + ".labels"), labels);
  };
  write_split("train", 0, o.train_rows);
  write_split("eval", o.train_rows, o.eval_rows);
  nlohmann::json meta = {{"features", o.features},     {"table_rows", o.table_rows},
                         {"train_rows", o.train_rows}, {"eval_rows", o.eval_rows},
                         {"mean_ids", o.mean_ids},     {"zipf", o.zipf},
                         {"seed", o.seed}};
  std::ofstream(std::filesystem::path(o.out_dir) / "meta.json") << meta.dump() << "\n";
}

template <typename T>
std::vector<T> read_vector(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw IoError(fmt::format("cannot open {}; write it with gen_multihot", path.string()));
  const auto bytes = static_cast<size_t>(in.tellg());
  if (bytes % sizeof(T) != 0) throw DataError(fmt::format("{}: size {} is not a multiple of {}", path.string(), bytes, sizeof(T)));
  std::vector<T> v(bytes / sizeof(T));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(bytes));
  return v;
}

// Batches of `batch_size` rows (last one partial) from one split of a gen_multihot directory:
// sparse features f_0.. as a key-major KeyedJaggedTensor, label "label".
std::vector<sparse::Batch> load_multihot(const std::string& dir, const std::string& split, int64_t batch_size) {
  const auto meta = nlohmann::json::parse(std::ifstream(std::filesystem::path(dir) / "meta.json"));
  const int features = meta.at("features").get<int>();
  const auto lengths = read_vector<int32_t>(std::filesystem::path(dir) / (split + ".lengths"));
  const auto values = read_vector<int64_t>(std::filesystem::path(dir) / (split + ".values"));
  const auto labels = read_vector<float>(std::filesystem::path(dir) / (split + ".labels"));
  const int64_t rows = static_cast<int64_t>(labels.size());
  if (static_cast<int64_t>(lengths.size()) != rows * features) {
    throw DataError(fmt::format("{}/{}.lengths: {} entries, expected rows {} x features {}", dir, split,
                                lengths.size(), rows, features));
  }
  std::vector<int64_t> start(lengths.size() + 1, 0);  // (row, feature) -> first value
  std::partial_sum(lengths.begin(), lengths.end(), start.begin() + 1);
  if (start.back() != static_cast<int64_t>(values.size())) {
    throw DataError(fmt::format("{}/{}.values: {} ids, lengths sum to {}", dir, split, values.size(), start.back()));
  }
  std::vector<std::string> keys;
  for (int f = 0; f < features; ++f) keys.push_back(fmt::format("f_{}", f));
  std::vector<sparse::Batch> batches;
  for (int64_t b = 0; b < rows; b += batch_size) {
    const int64_t n = std::min(batch_size, rows - b);
    const int64_t nvals = start[(b + n) * features] - start[b * features];
    torch::Tensor v = torch::empty({nvals}, torch::kInt64);
    torch::Tensor l = torch::empty({features * n}, torch::kInt64);
    int64_t* vp = v.data_ptr<int64_t>();
    int64_t* lp = l.data_ptr<int64_t>();
    for (int f = 0; f < features; ++f) {  // key-major
      for (int64_t r = b; r < b + n; ++r) {
        const int64_t k = r * features + f;
        *lp++ = lengths[k];
        vp = std::copy(values.begin() + start[k], values.begin() + start[k + 1], vp);
      }
    }
    sparse::Batch batch;
    batch.batch_size = n;
    batch.sparse_features = sparse::KeyedJaggedTensor(keys, v, l);
    batch.labels["label"] = torch::from_blob(const_cast<float*>(labels.data()) + b, {n}, torch::kFloat32).clone();
    batches.push_back(std::move(batch));
  }
  return batches;
}

std::vector<sparse::Batch> load_parquet(const protos::EasyRecConfig& config, const std::string& path,
                                        feature::Mode mode) {
  feature::BatchLoader loader(config, path, mode);
  std::vector<sparse::Batch> out;
  while (auto loaded = loader.next()) out.push_back(std::move(loaded->batch));
  return out;
}

// ---- measurements ------------------------------------------------------------------------------

int64_t tensor_bytes(const torch::Tensor& t) { return t.defined() ? t.numel() * t.element_size() : 0; }

// A Linear layer: [in, out], and whether it runs once per sequence step (DIN's attention MLP and
// its output linear, parameters under "din_towers.") rather than once per row.
struct LinearShape {
  int64_t in = 0, out = 0;
  bool per_step = false;
};

// Every Linear layer (2-D dense ".weight" parameters [out, in]).
std::vector<LinearShape> linear_shapes(models::Model& model) {
  std::vector<LinearShape> out;
  for (const auto& [name, p] : model.dense_parameters()) {
    const bool weight = name.size() >= 7 && name.compare(name.size() - 7, 7, ".weight") == 0;
    if (weight && p.dim() == 2) out.push_back({p.size(1), p.size(0), name.rfind("din_towers.", 0) == 0});
  }
  return out;
}

// GEMM rows of a layer per batch of B rows with `steps` sequence steps.
int64_t gemm_rows(const LinearShape& l, int64_t batch, double steps) {
  return l.per_step ? static_cast<int64_t>(std::llround(static_cast<double>(batch) * steps)) : batch;
}

// FLOP/s of torch::mm for the forward and the two backward GEMMs of every Linear layer at batch B
// (2 * rows * in * out each; rows = B, or B x steps for per-step layers), best of `repeats`
// passes after one warm-up pass.
double gemm_flops_per_second(const std::vector<LinearShape>& layers, int64_t batch, double steps, int repeats) {
  struct Operands { torch::Tensor x, w, g; };
  std::vector<Operands> ops;
  double flops = 0;
  for (const LinearShape& l : layers) {
    const int64_t rows = gemm_rows(l, batch, steps);
    ops.push_back({torch::randn({rows, l.in}), torch::randn({l.out, l.in}), torch::randn({rows, l.out})});
    flops += 3.0 * 2.0 * static_cast<double>(rows * l.in * l.out);
  }
  double best = 1e30;
  for (int r = 0; r <= repeats; ++r) {
    const auto t0 = Clock::now();
    for (auto& o : ops) {
      torch::Tensor y = torch::mm(o.x, o.w.t());   // forward   [B, out]
      torch::Tensor dx = torch::mm(o.g, o.w);      // grad in   [B, in]
      torch::Tensor dw = torch::mm(o.g.t(), o.x);  // grad W    [out, in]
    }
    if (r > 0) best = std::min(best, seconds_since(t0));
  }
  return flops / best;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Current resident set size (/proc/self/statm), 0 when unavailable.
int64_t current_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return pages_resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// Samples the resident set size every millisecond while alive and keeps the largest value per
// phase (what the process was doing: training forward, training backward, evaluation), so the
// report says where the peak comes from.
class RssSampler {
 public:
  enum Phase { kSetup, kForward, kBackward, kEval, kPhases };
  RssSampler() : thread_([this] { run(); }) {}
  ~RssSampler() {
    stop_ = true;
    thread_.join();
  }
  void set_phase(Phase p) { phase_ = p; }
  nlohmann::json report() const {
    static constexpr const char* kNames[kPhases] = {"setup", "train_forward", "train_backward", "eval"};
    nlohmann::json out;
    for (int p = 0; p < kPhases; ++p) out[kNames[p]] = peak_[p].load();
    return out;
  }

 private:
  void run() {
    while (!stop_) {
      const int64_t rss = current_rss_bytes();
      std::atomic<int64_t>& peak = peak_[phase_.load()];
      if (rss > peak.load()) peak = rss;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::atomic<bool> stop_{false};
  std::atomic<int> phase_{kSetup};
  std::atomic<int64_t> peak_[kPhases] = {};
  std::thread thread_;
};

int64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
}

// ---- train -------------------------------------------------------------------------------------

struct TrainOptions {
  std::string pipeline_config;
  std::string format = "parquet";
  std::string train_input;
  std::string eval_input;
  int64_t table_rows = 0;
  int64_t batch_size = 4096;
  int64_t warmup_steps = 3;
  int64_t steps = 0;
  int threads = 2;
  int gemm_repeats = 5;
  uint64_t init_seed = 2024;  // torch's generator: the model's initial values
  std::string profile_trace;  // chrome trace of profile_steps extra steps (after the timed ones)
  int64_t profile_steps = 3;
};

// The model's eval metrics on `batches`.
std::map<std::string, double> evaluate(train::TrainingSession& session, const std::vector<sparse::Batch>& batches) {
  auto& model = session.model();
  torch::NoGradGuard no_grad;
  model.eval();
  model.reset_metrics();
  for (const auto& batch : batches) model.update_metrics(model.predict(batch), batch, {});
  auto metrics = model.compute_metrics();
  model.train();
  return metrics;
}

void run_train(const TrainOptions& o) {
  torch::set_num_threads(o.threads);
  torch::manual_seed(o.init_seed);
  protos::EasyRecConfig config = config::load_pipeline_config(o.pipeline_config);
  auto* dc = config.mutable_data_config();
  dc->set_batch_size(static_cast<uint32_t>(o.batch_size));
  dc->set_num_workers(1);  // file order, as the reference reads it
  if (o.table_rows > 0) {
    for (auto& fc : *config.mutable_feature_configs()) {
      if (fc.has_id_feature()) fc.mutable_id_feature()->set_num_buckets(static_cast<uint64_t>(o.table_rows));
    }
  }

  // The training batches are loaded now, the held-out ones after training, once the training
  // batches are freed (a trainer streams its batches; only the timed steps need them in memory).
  auto load_split = [&](bool train) {
    if (o.format == "parquet") {
      return load_parquet(config, train ? o.train_input : o.eval_input,
                          train ? feature::Mode::kTrain : feature::Mode::kEval);
    }
    if (o.format == "multihot") return load_multihot(o.train_input, train ? "train" : "eval", o.batch_size);
    throw UsageError(fmt::format("--format {}: expected parquet or multihot", o.format));
  };
  auto t0 = Clock::now();
  std::vector<sparse::Batch> train_batches = load_split(true);
  double load_seconds = seconds_since(t0);
  const int64_t rss_after_load = current_rss_bytes();  // the process with its data, before the model
  const int64_t num_batches = static_cast<int64_t>(train_batches.size());
  if (num_batches <= o.warmup_steps) {
    throw UsageError(fmt::format("{} training batches, need more than --warmup_steps {}", num_batches, o.warmup_steps));
  }
  const int64_t timed_steps = o.steps > 0 ? o.steps : num_batches - o.warmup_steps;

  t0 = Clock::now();
  train::TrainingSession session(config, /*with_optimizers=*/true);
  const double init_seconds = seconds_since(t0);
  auto& model = session.model();
  model.train();
  auto& fused = session.sparse_optimizer();

  double loss_sum = 0, data_wait = 0, emb_fwd = 0, emb_bwd = 0, timed_seconds = 0, forward_seconds = 0;
  double steps_sum = 0;  // padded sequence steps of the timed batches (their longest history)
  int64_t timed_samples = 0;
  std::vector<double> step_times;  // timed steps, seconds
  RssSampler rss_sampler;
  auto train_step = [&](int64_t step) {
    const sparse::Batch& batch = train_batches[step % num_batches];
    const auto start = Clock::now();
    rss_sampler.set_phase(RssSampler::kForward);
    auto predictions = model.predict(batch);
    auto losses = model.loss(predictions, batch);
    torch::Tensor total;
    for (const auto& [name, value] : losses) total = total.defined() ? total + value : value;
    if (step >= o.warmup_steps) forward_seconds += seconds_since(start);
    rss_sampler.set_phase(RssSampler::kBackward);
    session.backward_and_step(total, step);
    session.advance_step_schedules();
    return total;
  };
  for (int64_t step = 0; step < o.warmup_steps + timed_steps; ++step) {
    const bool timed = step >= o.warmup_steps;
    if (step == o.warmup_steps) fused.reset_timing();
    const auto start = Clock::now();
    const int64_t rows = train_batches[step % num_batches].batch_size;  // data wait: in memory
    const double wait = seconds_since(start);
    const torch::Tensor total = train_step(step);
    const double step_seconds = seconds_since(start);
    if (timed) {
      int64_t longest = 0;
      for (const auto& [name, lengths] : train_batches[step % num_batches].sequence_lengths) {
        if (lengths.numel() > 0) longest = std::max(longest, lengths.max().item<int64_t>());
      }
      steps_sum += static_cast<double>(longest);
      timed_seconds += step_seconds;
      step_times.push_back(step_seconds);
      data_wait += wait;
      timed_samples += rows;
      loss_sum += total.item<double>();  // outside the split below only by this scalar read
    }
  }
  emb_fwd = fused.timing().forward_seconds;
  emb_bwd = fused.timing().backward_seconds;
  const double timed_forward_seconds = forward_seconds;
  if (!o.profile_trace.empty()) {  // op-level profile of a few more steps, outside the figures
    torch::autograd::profiler::RecordProfile profile(o.profile_trace);
    for (int64_t i = 0; i < o.profile_steps; ++i) train_step(o.warmup_steps + timed_steps + i);
  }

  train_batches.clear();
  train_batches.shrink_to_fit();
  t0 = Clock::now();
  const std::vector<sparse::Batch> eval_batches = load_split(false);
  load_seconds += seconds_since(t0);
  t0 = Clock::now();
  rss_sampler.set_phase(RssSampler::kEval);
  const std::map<std::string, double> eval_metrics = evaluate(session, eval_batches);
  const double auc = eval_metrics.count("auc") ? eval_metrics.at("auc") : std::nan("");
  rss_sampler.set_phase(RssSampler::kSetup);
  const double eval_seconds = seconds_since(t0);
  int64_t eval_rows = 0;
  for (const auto& b : eval_batches) eval_rows += b.batch_size;

  // Memory budget: 1.25 x (tables + optimizer state + dense model) + 1 GiB.
  int64_t table_bytes = 0, sparse_state_bytes = 0, dense_state_bytes = 0, dense_param_bytes = 0;
  for (const auto* member : fused.members()) {
    for (const auto& t : member->tables()) table_bytes += tensor_bytes(t.weight);
  }
  for (const auto& [key, t] : session.optimizer_state()) {
    (key.rfind("sparse.", 0) == 0 ? sparse_state_bytes : dense_state_bytes) += tensor_bytes(t);
  }
  for (const auto& [name, p] : model.dense_parameters()) dense_param_bytes += tensor_bytes(p);
  const int64_t model_bytes = table_bytes + sparse_state_bytes + dense_state_bytes + dense_param_bytes;
  const int64_t budget = static_cast<int64_t>(1.25 * static_cast<double>(model_bytes)) + (int64_t{1} << 30);
  const int64_t rss = peak_rss_bytes();

  // FLOPs of the Linear layers as the model is written (DIN's first attention layer on its
  // [B, T, 4D] input, whatever tzrec computes), T = the mean padded steps of the timed batches.
  const auto layers = linear_shapes(model);
  const double mean_steps = steps_sum / static_cast<double>(timed_steps);
  double mac_per_sample = 0;
  nlohmann::json layer_json = nlohmann::json::array();
  for (const LinearShape& l : layers) {
    mac_per_sample += static_cast<double>(l.in * l.out) * (l.per_step ? mean_steps : 1.0);
    layer_json.push_back({l.in, l.out, gemm_rows(l, o.batch_size, mean_steps)});
  }
  const double mlp_flops_per_sample = 3.0 * 2.0 * mac_per_sample;
  const double gemm_rate = gemm_flops_per_second(layers, o.batch_size, mean_steps, o.gemm_repeats);
  const double samples_per_sec = static_cast<double>(timed_samples) / timed_seconds;
  const double dense_forward = timed_forward_seconds - emb_fwd;

  nlohmann::json report = {
      {"engine", "tzrec-cpp"},
      {"threads", torch::get_num_threads()},
      {"batch_size", o.batch_size},
      {"warmup_steps", o.warmup_steps},
      {"steps_timed", timed_steps},
      {"samples_timed", timed_samples},
      {"samples_per_sec", samples_per_sec},
      {"step_ms", 1000.0 * timed_seconds / static_cast<double>(timed_steps)},
      {"median_step_ms", 1000.0 * median(step_times)},
      // Per timed step, milliseconds: data wait, embedding forward (pooling), embedding backward +
      // fused optimizer update, and the rest = dense forward + loss + backward + dense optimizer.
      {"split_ms",
       {{"data_wait", 1000.0 * data_wait / timed_steps},
        {"embedding_forward", 1000.0 * emb_fwd / timed_steps},
        {"dense_fwd_bwd_opt", 1000.0 * (timed_seconds - data_wait - emb_fwd - emb_bwd) / timed_steps},
        {"embedding_backward_update", 1000.0 * emb_bwd / timed_steps},
        // dense_fwd_bwd_opt split at the loss: forward + loss, and backward + dense optimizer.
        {"dense_forward_loss", 1000.0 * dense_forward / timed_steps},
        {"dense_backward_opt", 1000.0 * (timed_seconds - data_wait - emb_fwd - emb_bwd - dense_forward) / timed_steps}}},
      {"mean_train_loss", loss_sum / static_cast<double>(timed_steps)},
      {"auc", auc},
      {"eval_metrics", eval_metrics},  // every metric of the model (match models: recall@k)
      {"eval_rows", eval_rows},
      {"eval_seconds", eval_seconds},
      {"load_seconds", load_seconds},
      {"init_seconds", init_seconds},
      {"table_bytes", table_bytes},
      {"sparse_state_bytes", sparse_state_bytes},
      {"dense_bytes", dense_param_bytes + dense_state_bytes},
      {"memory_budget_bytes", budget},
      {"peak_rss_bytes", rss},
      {"rss_after_load_bytes", rss_after_load},
      {"peak_rss_by_phase_bytes", rss_sampler.report()},  // sampled every millisecond
      {"memory_within_budget", rss <= budget},
      {"mixed_precision", config.train_config().mixed_precision()},
      {"mlp_layers", layer_json},  // [in, out, GEMM rows per batch]
      {"mean_steps", mean_steps},
      {"mlp_flops_per_sample", mlp_flops_per_sample},
      {"gemm_flops_per_sec", gemm_rate},
      {"roofline_pct", 100.0 * mlp_flops_per_sample * samples_per_sec / gemm_rate},
  };
  fmt::print("{}\n", report.dump());
}

}  // namespace

int main(int argc, char** argv) {
  tzrec::tune_malloc_for_training();  // as the tzrec binary does
  CLI::App app{"tzrec-cpp training-speed benchmark (see bench/README.md)"};
  app.require_subcommand(1);
  MultiHotOptions gen;
  auto* g = app.add_subcommand("gen_multihot", "write Zipf multi-hot training / eval data");
  g->add_option("--out_dir", gen.out_dir)->required();
  g->add_option("--train_rows", gen.train_rows)->required();
  g->add_option("--eval_rows", gen.eval_rows)->required();
  g->add_option("--table_rows", gen.table_rows)->capture_default_str();
  g->add_option("--features", gen.features)->capture_default_str();
  g->add_option("--mean_ids", gen.mean_ids)->capture_default_str();
  g->add_option("--zipf", gen.zipf)->capture_default_str();
  g->add_option("--seed", gen.seed)->capture_default_str();
  TrainOptions train;
  auto* t = app.add_subcommand("train", "train on in-memory batches and print one JSON line");
  t->add_option("--pipeline_config", train.pipeline_config)->required();
  t->add_option("--format", train.format, "parquet | multihot")->capture_default_str();
  t->add_option("--train_input", train.train_input, "Parquet file or gen_multihot directory")->required();
  t->add_option("--eval_input", train.eval_input, "Parquet file (parquet format only)");
  t->add_option("--table_rows", train.table_rows, "override num_buckets of every id_feature (0: keep)");
  t->add_option("--batch_size", train.batch_size)->capture_default_str();
  t->add_option("--warmup_steps", train.warmup_steps)->capture_default_str();
  t->add_option("--steps", train.steps, "timed steps (0: rest of one epoch)")->capture_default_str();
  t->add_option("--threads", train.threads)->capture_default_str();
  t->add_option("--gemm_repeats", train.gemm_repeats)->capture_default_str();
  t->add_option("--init_seed", train.init_seed, "seed of the initial weights (AUC spread over seeds)")
      ->capture_default_str();
  t->add_option("--profile_trace", train.profile_trace,
                "write a chrome trace (libtorch profiler) of --profile_steps extra steps");
  t->add_option("--profile_steps", train.profile_steps)->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (g->parsed()) gen_multihot(gen);
    if (t->parsed()) run_train(train);
  } catch (const std::exception& e) {
    fmt::print(stderr, "train_speed_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
