// HSTU attention and STU stack: the C++ side of bench/hstu_speed.sh (bench/hstu_reference.py is the
// plain PyTorch side, with the padded attention of TorchEasyRec's pytorch_hstu_mha). Figures and
// their meaning: bench/README.md, section "HSTU attention and STU stack".
//
//   tzrec_hstu_bench [--mode speed|memory_attention|memory_step] [--batch 128] [--max_len 512]
//       [--targets 8] [--layers 4] [--heads 2] [--dim 128] [--threads 2] [--steps 3] [--warmup 1]
//       [--full] [--seed 2024] [--block 64] [--bf16]
//
// Workload: batch users, history lengths uniform in [1, max_len] (--full: all max_len) from the
// 64-bit LCG below (the Python side draws the same), plus `targets` target rows each; x [L, dim]
// float32 with requires_grad; a stack of `layers` STU layers (embedding = hidden = attention =
// dim, `heads` heads, output dropout 0.3, training mode, target-aware).
//   speed: median step time (stack forward + out.sum() backward, grads set to none between steps)
//          over `steps` timed steps after `warmup`; then the attention alone (q, k, v [L, heads,
//          dim] with requires_grad): forward, and forward + backward of out.sum().
//   memory_attention: in a fresh process, the peak RSS above the RSS before one attention forward
//          + backward (q, k, v already allocated): /proc/self/clear_refs "5" resets VmHWM, then
//          VmHWM − VmRSS(before). Nothing runs before it, so no freed heap hides a first touch.
//   memory_step: the same around one whole stack step.
// Prints one JSON line.
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nn/gr/stu.h"
#include "nn/hstu_attention.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

// kB field of /proc/self/status in MiB.
double status_mib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      std::istringstream s(line.substr(field.size() + 1));
      double kb = 0;
      s >> kb;
      return kb / 1024.0;
    }
  }
  return -1.0;
}

void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// History lengths: state ← state · 6364136223846793005 + 1442695040888963407 (mod 2^64),
// length = 1 + (state >> 33) mod max_len; hstu_reference.py computes the same.
std::vector<int64_t> history_lengths(int64_t batch, int64_t max_len, uint64_t seed, bool full) {
  std::vector<int64_t> out;
  uint64_t state = seed;
  for (int64_t b = 0; b < batch; ++b) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    out.push_back(full ? max_len : 1 + static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(max_len)));
  }
  return out;
}

std::string join(const std::vector<double>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"HSTU attention / STU stack benchmark (C++ side)"};
  std::string mode = "speed";
  int64_t batch = 128, max_len = 512, targets = 8, layers = 4, heads = 2, dim = 128, threads = 2, steps = 3, warmup = 1,
          block = 64;
  uint64_t seed = 2024;
  bool full = false, bf16 = false;
  app.add_option("--mode", mode);
  app.add_option("--batch", batch);
  app.add_option("--max_len", max_len);
  app.add_option("--targets", targets);
  app.add_option("--layers", layers);
  app.add_option("--heads", heads);
  app.add_option("--dim", dim);
  app.add_option("--threads", threads);
  app.add_option("--steps", steps);
  app.add_option("--warmup", warmup);
  app.add_option("--seed", seed);
  app.add_option("--block", block);
  app.add_flag("--full", full);
  app.add_flag("--bf16", bf16, "attention inputs in bfloat16 (speed mode's attention-only figures)");
  CLI11_PARSE(app, argc, argv);
  if (mode != "speed" && mode != "memory_attention" && mode != "memory_step") {
    std::fprintf(stderr, "unknown --mode %s\n", mode.c_str());
    return 2;
  }
  torch::set_num_threads(static_cast<int>(threads));
  torch::manual_seed(static_cast<uint64_t>(seed));

  std::vector<int64_t> lengths = history_lengths(batch, max_len, seed, full);
  std::vector<int64_t> off{0};
  for (int64_t& n : lengths) {
    n += targets;
    off.push_back(off.back() + n);
  }
  const int64_t L = off.back(), max_seq_len = max_len + targets;
  const torch::Tensor offsets = torch::tensor(off, torch::kInt64);
  const torch::Tensor num_targets = torch::full({batch}, targets, torch::kInt64);

  tzrec::nn::HstuAttentionOptions ao;
  ao.max_seq_len = max_seq_len;
  ao.alpha = 1.0 / std::sqrt(static_cast<double>(dim));
  ao.num_targets = num_targets;
  ao.block_size = block;
  const auto attn_dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
  auto qkv = [&] {
    return std::vector<torch::Tensor>{torch::randn({L, heads, dim}).to(attn_dtype).requires_grad_(true),
                                      torch::randn({L, heads, dim}).to(attn_dtype).requires_grad_(true),
                                      torch::randn({L, heads, dim}).to(attn_dtype).requires_grad_(true)};
  };
  auto attention_step = [&](const std::vector<torch::Tensor>& t) {
    tzrec::nn::hstu_mha(t[0], t[1], t[2], offsets, ao).sum().backward();
  };

  std::vector<tzrec::nn::gr::STUOptions> opts(layers);
  for (auto& o : opts) {
    o.embedding_dim = o.hidden_dim = o.attention_dim = dim;
    o.num_heads = heads;
    o.output_dropout_ratio = 0.3;
  }
  auto make_stack = [&] {
    tzrec::nn::gr::STUStack stack(opts);
    stack->train();
    return stack;
  };
  auto stack_step = [&](tzrec::nn::gr::STUStack& stack, const torch::Tensor& x) {
    stack->zero_grad(true);
    x.mutable_grad().reset();
    stack->forward(x, offsets, max_seq_len, num_targets).x.sum().backward();
  };

  std::printf(
      "{\"engine\": \"cpp\", \"mode\": \"%s\", \"batch\": %lld, \"tokens\": %lld, \"max_seq_len\": %lld, "
      "\"threads\": %lld, \"full\": %s",
      mode.c_str(), static_cast<long long>(batch), static_cast<long long>(L), static_cast<long long>(max_seq_len),
      static_cast<long long>(threads), full ? "true" : "false");
  if (mode == "memory_attention") {
    const auto t = qkv();
    const double before = status_mib("VmRSS");
    reset_peak_rss();
    attention_step(t);
    std::printf(", \"rss_before_mib\": %.1f, \"peak_delta_mib\": %.1f}\n", before, status_mib("VmHWM") - before);
  } else if (mode == "memory_step") {
    auto stack = make_stack();
    const torch::Tensor x = torch::randn({L, dim}, torch::requires_grad());
    const double before = status_mib("VmRSS");
    reset_peak_rss();
    stack_step(stack, x);
    std::printf(", \"rss_before_mib\": %.1f, \"peak_delta_mib\": %.1f}\n", before, status_mib("VmHWM") - before);
  } else {
    auto stack = make_stack();
    const torch::Tensor x = torch::randn({L, dim}, torch::requires_grad());
    std::vector<double> step_ms, fwd_ms, fwd_bwd_ms;
    for (int64_t i = 0; i < warmup + steps; ++i) {
      const auto t0 = Clock::now();
      stack_step(stack, x);
      if (i >= warmup) step_ms.push_back(ms_since(t0));
    }
    const auto t = qkv();
    for (int64_t i = 0; i < warmup + steps; ++i) {
      auto t0 = Clock::now();
      {
        torch::NoGradGuard no_grad;
        tzrec::nn::hstu_mha(t[0], t[1], t[2], offsets, ao);
      }
      if (i >= warmup) fwd_ms.push_back(ms_since(t0));
      for (const auto& x : t) x.mutable_grad().reset();
      t0 = Clock::now();
      attention_step(t);
      if (i >= warmup) fwd_bwd_ms.push_back(ms_since(t0));
    }
    std::printf(
        ", \"step_ms\": [%s], \"step_ms_median\": %.1f, \"attn_fwd_ms_median\": %.1f, "
        "\"attn_fwd_bwd_ms_median\": %.1f, \"attn_dtype\": \"%s\"}\n",
        join(step_ms).c_str(), median(step_ms), median(fwd_ms), median(fwd_bwd_ms), bf16 ? "bf16" : "fp32");
  }
  return 0;
}
