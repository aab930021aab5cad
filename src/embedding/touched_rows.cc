#include "embedding/touched_rows.h"

#include <algorithm>

namespace tzrec::embedding {

TouchedRows::TouchedRows(int64_t rows) : rows_(rows), bits_(static_cast<size_t>((rows + 63) / 64), 0) {}

void TouchedRows::mark(const int64_t* ids, int64_t n) {
  uint64_t* bits = bits_.data();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t word = ids[i] >> 6;
    const uint64_t bit = uint64_t{1} << (ids[i] & 63);
    if (bits[word] == 0) dirty_words_.push_back(word);
    bits[word] |= bit;
  }
}

torch::Tensor TouchedRows::take() {
  std::sort(dirty_words_.begin(), dirty_words_.end());
  int64_t count = 0;
  for (int64_t w : dirty_words_) count += __builtin_popcountll(bits_[w]);
  torch::Tensor out = torch::empty({count}, torch::kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t w : dirty_words_) {
    uint64_t word = bits_[w];
    while (word != 0) {
      *o++ = w * 64 + __builtin_ctzll(word);
      word &= word - 1;
    }
    bits_[w] = 0;
  }
  dirty_words_.clear();
  return out;
}

torch::Tensor read_weight_rows(const torch::Tensor& weight, const torch::Tensor& rows) {
  torch::NoGradGuard no_grad;
  return weight.index_select(0, rows.to(torch::kInt64)).to(torch::kFloat32);
}

}  // namespace tzrec::embedding
