#include "nn/sequence_inputs.h"

namespace tzrec::nn {

SequenceInputs read_sequence_inputs(const std::map<std::string, torch::Tensor>& grouped, const char* encoder,
                                    const std::string& input, int64_t sequence_dim, int64_t query_dim,
                                    int64_t max_seq_length, bool with_length) {
  auto get = [&](const char* suffix) -> const torch::Tensor& {
    auto it = grouped.find(input + suffix);
    TORCH_CHECK(it != grouped.end(), encoder, ": no tensor \"", input, suffix, "\" among the group's inputs");
    return it->second;
  };
  SequenceInputs in;
  in.sequence = get(".sequence");
  TORCH_CHECK(in.sequence.dim() == 3 && in.sequence.size(2) == sequence_dim, encoder, " \"", input,
              "\": sequence must be [B, T, ", sequence_dim, "], got ", in.sequence.sizes());
  const int64_t batch = in.sequence.size(0);
  if (query_dim >= 0) {
    in.query = get(".query");
    TORCH_CHECK(in.query.dim() == 2 && in.query.size(0) == batch && in.query.size(1) == query_dim, encoder, " \"",
                input, "\": query must be [", batch, ", ", query_dim, "], got ", in.query.sizes());
  }
  if (with_length) {
    in.length = get(".sequence_length");
    TORCH_CHECK(in.length.dim() == 1 && in.length.size(0) == batch, encoder, " \"", input,
                "\": sequence_length must be [", batch, "], got ", in.length.sizes());
  }
  if (max_seq_length > 0) {
    in.sequence = in.sequence.slice(1, 0, max_seq_length);
    if (in.length.defined()) in.length = in.length.clamp_max(max_seq_length);
  }
  return in;
}

torch::Tensor attention_pool(torch::Tensor logits, const torch::Tensor& length, const torch::Tensor& sequence) {
  constexpr double kPaddingLogit = -2147483647.0;  // TorchEasyRec's −2³¹ + 1
  if (logits.scalar_type() == torch::kHalf || logits.scalar_type() == torch::kBFloat16) {
    logits = logits.to(torch::kFloat);
  }
  const int64_t steps = logits.size(1);
  torch::Tensor valid =
      torch::arange(steps, length.options().dtype(torch::kLong)).unsqueeze(0) < length.unsqueeze(1);  // [B, T]
  logits = logits.masked_fill(valid.logical_not(), kPaddingLogit);
  // [B, 1, T] × [B, T, D] → [B, D]
  return torch::softmax(logits, -1).to(sequence.scalar_type()).unsqueeze(1).matmul(sequence).squeeze(1);
}

}  // namespace tzrec::nn
