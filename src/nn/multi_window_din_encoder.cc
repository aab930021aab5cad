#include "nn/multi_window_din_encoder.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "nn/autocast.h"
#include "nn/fp16_linear.h"
#include "nn/sequence_inputs.h"

namespace tzrec::nn {

MultiWindowDINEncoderImpl::MultiWindowDINEncoderImpl(int64_t sequence_dim, int64_t query_dim, std::string input,
                                                     MultiWindowDINEncoderOptions options,
                                                     const std::string& config_path)
    : sequence_dim_(sequence_dim),
      query_dim_(query_dim),
      input_(std::move(input)),
      windows_(std::move(options.windows_len)) {
  if (query_dim_ > sequence_dim_) {
    throw ConfigError(fmt::format(
        "{}: the query of sequence group \"{}\" is wider ({}) than its sequence ({}); MultiWindowDINEncoder pads "
        "a narrower query with zeros but cannot shrink one: give the group's query features a total "
        "embedding_dim no larger than its sequence features'",
        config_path, input_, query_dim_, sequence_dim_));
  }
  if (windows_.empty()) {
    throw ConfigError(fmt::format(
        "{}.windows_len: is empty; list the number of steps of each time window, e.g. windows_len: [1, 2, 5]",
        config_path));
  }
  for (size_t i = 0; i < windows_.size(); ++i) {
    if (windows_[i] <= 0) {
      throw ConfigError(fmt::format("{}.windows_len[{}]: a window of {} steps; every window needs at least one step: "
                                    "make it positive or remove it",
                                    config_path, i, windows_[i]));
    }
  }
  std::vector<int64_t> starts(windows_.size(), 0);  // exclusive prefix sums
  for (size_t i = 1; i < windows_.size(); ++i) starts[i] = starts[i - 1] + windows_[i - 1];
  windows_len_ = register_buffer("windows_len", torch::tensor(windows_, torch::kLong));
  cumsum_windows_len_ = register_buffer("cumsum_windows_len", torch::tensor(starts, torch::kLong));
  options.attn_mlp.dim = 3;
  mlp_ = register_module("mlp", MLP(3 * sequence_dim_, std::move(options.attn_mlp), config_path + ".attn_mlp"));
  linear_ = register_module("linear", torch::nn::Linear(mlp_->output_dim(), 1));
  active_ = register_module("active", torch::nn::PReLU(torch::nn::PReLUOptions().num_parameters(1).init(0.25)));
}

torch::Tensor MultiWindowDINEncoderImpl::forward(const std::map<std::string, torch::Tensor>& grouped) {
  SequenceInputs in = read_sequence_inputs(grouped, "MultiWindowDINEncoder", input_, sequence_dim_, query_dim_,
                                           /*max_seq_length=*/0);
  const int64_t batch = in.sequence.size(0);
  const int64_t steps = in.sequence.size(1);
  const auto num_windows = static_cast<int64_t>(windows_.size());
  torch::Tensor query = in.query;
  if (query_dim_ < sequence_dim_) query = torch::constant_pad_nd(query, {0, sequence_dim_ - query_dim_});

  torch::Tensor sums;  // [B, L, D]
  if (steps == 0) {
    // No step falls in any window; the MLP (and its BatchNorm statistics) is skipped.
    sums = torch::zeros({batch, num_windows, sequence_dim_}, in.sequence.options());
  } else {
    torch::Tensor queries = query.unsqueeze(1).expand({batch, steps, sequence_dim_});  // [B, T, D]
    torch::Tensor attn_input = torch::cat({in.sequence, queries * in.sequence, queries}, -1);
    torch::Tensor logits = linear_forward(mlp_->forward(attn_input), linear_->weight, linear_->bias);  // [B, T, 1]
    // The slope is fp32; a bf16 GEMM output (CPU autocast) is brought to it first.
    torch::Tensor weights = torch::prelu(in_norm_dtype(logits, active_->weight), active_->weight);
    torch::Tensor valid =
        torch::arange(steps, in.length.options().dtype(torch::kLong)).unsqueeze(0) < in.length.unsqueeze(1);  // [B, T]
    torch::Tensor weighted = weights * valid.unsqueeze(2) * in.sequence;  // [B, T, D]
    // Window i sums its steps below T; steps at or beyond Σ w_i are in no window.
    std::vector<torch::Tensor> windows;
    windows.reserve(windows_.size());
    int64_t start = 0;
    for (int64_t len : windows_) {
      const int64_t end = std::min(start + len, steps);
      windows.push_back(start < end ? weighted.slice(1, start, end).sum(1)
                                    : torch::zeros({batch, sequence_dim_}, weighted.options()));
      start += len;
    }
    sums = torch::stack(windows, 1);
  }
  // Steps of each window within the row's length, at least 1 (TorchEasyRec's segment mean).
  torch::Tensor remaining = in.length.to(torch::kLong).unsqueeze(1) - cumsum_windows_len_.unsqueeze(0);  // [B, L]
  torch::Tensor counts = torch::minimum(remaining, windows_len_.unsqueeze(0)).clamp_min(1);
  torch::Tensor means = sums / counts.unsqueeze(2);
  return torch::cat({means, query.unsqueeze(1).to(means.scalar_type())}, 1).reshape({batch, -1});
}

}  // namespace tzrec::nn
