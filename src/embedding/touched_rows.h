// TouchedRows: the rows of one embedding table that training lookups read since the rows were last
// taken — what a delta embedding dump publishes (train/delta_embedding_dump.h), TorchRec's
// ModelDeltaTracker in id-only mode. One bit per row, so the memory is rows / 8 bytes whatever the
// number of steps between two dumps, and take() gives the rows ascending, as the dump writes them.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

namespace tzrec::embedding {

class TouchedRows {
 public:
  explicit TouchedRows(int64_t rows);

  // Marks ids[0, n); every id must lie in [0, rows) (the lookup checked them).
  void mark(const int64_t* ids, int64_t n);
  // The marked rows [K] int64 ascending, then none are marked.
  torch::Tensor take();
  int64_t rows() const { return rows_; }

 private:
  int64_t rows_;
  std::vector<uint64_t> bits_;
  // Words that hold a bit, in the order they were first set, so take() need not scan the whole
  // bitmap of a large table that a few ids touched.
  std::vector<int64_t> dirty_words_;
};

// Rows `rows` of a table's `weight` as a float32 copy [K, dim] (whatever the table's storage type):
// what a dump publishes of the rows it took.
torch::Tensor read_weight_rows(const torch::Tensor& weight, const torch::Tensor& rows);

}  // namespace tzrec::embedding
