// Dense optimizer benchmark: one step of train_config.dense_optimizer (optim/dense_optimizer.h:
// Adam / AdamW in one pass, optim/adam_step.h) next to libtorch's torch::optim::Adam / AdamW (the
// single-tensor path of torch.optim, several tensor ops per parameter), on the same parameters and
// gradients, 2 threads by default.
//
// For each parameter size and kind: --rounds rounds, each --steps steps of this engine and then
// --steps of libtorch's, alternating; prints the median ms per step of each over all rounds, their
// ratio, and the largest difference of the parameters at the end (float rounding: the two compute
// the same formulas).
//
//   build/tzrec_dense_optimizer_bench [--sizes 65536,1048576,4194304 --rounds 5 --steps 20 --threads 2]
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "optim/dense_optimizer.h"

namespace {

using Kind = tzrec::optim::DenseOptimizerOptions::Kind;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run(int64_t size, Kind kind, int rounds, int steps) {
  torch::manual_seed(3);
  torch::Tensor ours = torch::randn({size}).requires_grad_(true);
  torch::Tensor theirs = ours.detach().clone().requires_grad_(true);
  tzrec::optim::DenseOptimizerOptions o;
  o.kind = kind;
  o.lr = 0.001;
  o.weight_decay = kind == Kind::kAdamW ? 0.01 : 0.0;
  tzrec::optim::DenseOptimizer engine(o, {{"w", ours}});
  std::unique_ptr<torch::optim::Optimizer> reference;
  if (kind == Kind::kAdam) {
    reference = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{theirs},
                                                     torch::optim::AdamOptions(o.lr));
  } else {
    reference = std::make_unique<torch::optim::AdamW>(std::vector<torch::Tensor>{theirs},
                                                      torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  }
  const torch::Tensor grad = torch::randn({size}) * 0.1;
  ours.mutable_grad() = grad.clone();
  theirs.mutable_grad() = grad.clone();
  std::vector<double> ours_ms, theirs_ms;
  auto timed = [&](auto&& step, std::vector<double>& out) {
    for (int i = 0; i < steps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      step();
      out.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  };
  for (int r = 0; r < rounds; ++r) {
    timed([&] { engine.step(); }, ours_ms);
    timed([&] { reference->step(); }, theirs_ms);
  }
  const double a = median(ours_ms), b = median(theirs_ms);
  fmt::print("{:>9} {:<6} {:>10.3f} {:>10.3f} {:>7.2f} {:>12.2e}\n", size, kind == Kind::kAdam ? "Adam" : "AdamW", a,
             b, b / a, (ours - theirs).abs().max().item<double>());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tzrec dense optimizer benchmark (one pass against libtorch's torch::optim)"};
  std::vector<int64_t> sizes = {65536, 1048576, 4194304};
  int rounds = 5, steps = 20, threads = 2;
  app.add_option("--sizes", sizes, "parameter sizes (elements)")->delimiter(',');
  app.add_option("--rounds", rounds, "alternating rounds");
  app.add_option("--steps", steps, "steps per engine and round");
  app.add_option("--threads", threads, "intra-op threads");
  CLI11_PARSE(app, argc, argv);
  torch::set_num_threads(threads);
  fmt::print("{} threads, {} rounds of {} steps each, median ms per step\n", threads, rounds, steps);
  fmt::print("{:>9} {:<6} {:>10} {:>10} {:>7} {:>12}\n", "elements", "kind", "tzrec", "libtorch", "ratio", "max diff");
  for (int64_t size : sizes) {
    for (Kind kind : {Kind::kAdam, Kind::kAdamW}) run(size, kind, rounds, steps);
  }
  return 0;
}
