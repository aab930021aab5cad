// What TorchEasyRec's sequence encoders share: reading a SEQUENCE group's "<input>.query" [B, Dq],
// "<input>.sequence" [B, T, D] (right-padded with zeros) and "<input>.sequence_length" [B], the
// max_seq_length cut, and attention pooling over the valid steps.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <torch/torch.h>

namespace tzrec::nn {

struct SequenceInputs {
  torch::Tensor query;     // [B, Dq]; undefined when not read
  torch::Tensor sequence;  // [B, T, D], T cut to max_seq_length when > 0
  torch::Tensor length;    // [B], clamped to max_seq_length when > 0; undefined when not read
};

// `encoder` names the encoder in shape errors (TORCH_CHECK: the inputs come from the embedding
// group, not from a config). query_dim < 0: the query is not read; with_length false: neither is
// the length.
SequenceInputs read_sequence_inputs(const std::map<std::string, torch::Tensor>& grouped, const char* encoder,
                                    const std::string& input, int64_t sequence_dim, int64_t query_dim,
                                    int64_t max_seq_length, bool with_length = true);

// Σ_t softmax_t(logits) · sequence[:, t] over the steps t < length (TorchEasyRec fills padded
// steps with −2³¹ + 1, so an empty row weighs its zero padding evenly: 0). logits [B, T] (fp16 /
// bf16 are masked in fp32, where −2³¹ + 1 does not overflow to −inf) → [B, D].
torch::Tensor attention_pool(torch::Tensor logits, const torch::Tensor& length, const torch::Tensor& sequence);

}  // namespace tzrec::nn
