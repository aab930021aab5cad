#include "nn/gr/jagged.h"

#include <vector>

namespace tzrec::nn::gr {

namespace {

torch::Tensor as_offsets(const torch::Tensor& offsets) {
  TORCH_CHECK(offsets.dim() == 1 && offsets.size(0) >= 1, "jagged offsets must be [B + 1], got ", offsets.sizes());
  return offsets.to(torch::kInt64).contiguous();
}

torch::Tensor index_tensor(std::vector<int64_t>&& idx) {
  auto t = torch::empty({static_cast<int64_t>(idx.size())}, torch::kInt64);
  std::copy(idx.begin(), idx.end(), t.data_ptr<int64_t>());
  return t;
}

}  // namespace

torch::Tensor complete_cumsum(const torch::Tensor& lengths) {
  auto l = lengths.to(torch::kInt64);
  return torch::cat({torch::zeros({1}, torch::kInt64), l.cumsum(0)});
}

torch::Tensor fixed_offsets(int64_t batch_size, int64_t n) {
  return torch::arange(batch_size + 1, torch::kInt64) * n;
}

torch::Tensor offsets_to_lengths(const torch::Tensor& offsets) {
  auto o = as_offsets(offsets);
  return o.slice(0, 1) - o.slice(0, 0, o.size(0) - 1);
}

torch::Tensor concat_2d_jagged(const torch::Tensor& values_left, const torch::Tensor& values_right,
                               const torch::Tensor& offsets_left, const torch::Tensor& offsets_right) {
  auto ol = as_offsets(offsets_left);
  auto orr = as_offsets(offsets_right);
  TORCH_CHECK(ol.size(0) == orr.size(0), "concat_2d_jagged: offsets of different batch sizes");
  const int64_t batch = ol.size(0) - 1;
  const int64_t* l = ol.data_ptr<int64_t>();
  const int64_t* r = orr.data_ptr<int64_t>();
  const int64_t left_rows = values_left.size(0);
  TORCH_CHECK(l[batch] == left_rows && r[batch] == values_right.size(0),
              "concat_2d_jagged: offsets do not match the values' rows");
  // out = cat(left, right)[perm]: sequence b's left rows, then its right rows.
  std::vector<int64_t> perm;
  perm.reserve(static_cast<size_t>(l[batch] + r[batch]));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = l[b]; i < l[b + 1]; ++i) perm.push_back(i);
    for (int64_t i = r[b]; i < r[b + 1]; ++i) perm.push_back(left_rows + i);
  }
  return torch::cat({values_left, values_right.to(values_left.dtype())}).index_select(0, index_tensor(std::move(perm)));
}

std::pair<torch::Tensor, torch::Tensor> split_2d_jagged(const torch::Tensor& values, const torch::Tensor& offsets_left,
                                                        const torch::Tensor& offsets_right) {
  auto ol = as_offsets(offsets_left);
  auto orr = as_offsets(offsets_right);
  TORCH_CHECK(ol.size(0) == orr.size(0), "split_2d_jagged: offsets of different batch sizes");
  const int64_t batch = ol.size(0) - 1;
  const int64_t* l = ol.data_ptr<int64_t>();
  const int64_t* r = orr.data_ptr<int64_t>();
  TORCH_CHECK(l[batch] + r[batch] == values.size(0), "split_2d_jagged: offsets do not match the values' rows");
  std::vector<int64_t> left, right;
  left.reserve(static_cast<size_t>(l[batch]));
  right.reserve(static_cast<size_t>(r[batch]));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t start = l[b] + r[b];
    const int64_t nl = l[b + 1] - l[b];
    const int64_t nr = r[b + 1] - r[b];
    for (int64_t i = 0; i < nl; ++i) left.push_back(start + i);
    for (int64_t i = 0; i < nr; ++i) right.push_back(start + nl + i);
  }
  return {values.index_select(0, index_tensor(std::move(left))), values.index_select(0, index_tensor(std::move(right)))};
}

torch::Tensor jagged_dense_bmm_broadcast_add(const torch::Tensor& seq_offsets, const torch::Tensor& jagged,
                                             const torch::Tensor& dense, const torch::Tensor& bias) {
  auto o = as_offsets(seq_offsets);
  const int64_t batch = o.size(0) - 1;
  TORCH_CHECK(dense.dim() == 3 && dense.size(0) == batch && bias.dim() == 2 && bias.size(0) == batch,
              "jagged_dense_bmm_broadcast_add: dense must be [B, Din, Dout] and bias [B, Dout]");
  const int64_t* off = o.data_ptr<int64_t>();
  auto x = jagged.to(torch::kFloat);
  auto w = dense.to(torch::kFloat);
  auto bvec = bias.to(torch::kFloat);
  std::vector<torch::Tensor> parts;
  parts.reserve(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    if (off[b + 1] == off[b]) continue;
    parts.push_back(torch::addmm(bvec[b], x.slice(0, off[b], off[b + 1]), w[b]));
  }
  if (parts.empty()) return torch::zeros({0, dense.size(2)}, jagged.options());
  return torch::cat(parts).to(jagged.scalar_type());
}

torch::Tensor row_sequence_ids(const torch::Tensor& offsets) {
  auto o = as_offsets(offsets);
  return torch::repeat_interleave(offsets_to_lengths(o));
}

}  // namespace tzrec::nn::gr
