// A buffer of a remapping collection sharded by rows across ranks (the place buffers of row-wise
// sharded zero-collision hashed tables, the state of dynamic tables): this rank's block of a
// tensor of the whole table, checkpointed as a row block (train/remapped_shard_checkpoint.h).
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace tzrec::embedding {

struct RowBlockBuffer {
  std::string name;      // below the collection
  torch::Tensor value;   // rows [row_offset, row_offset + value.size(0)) of the whole tensor
  int64_t total_rows = 0;
  int64_t row_offset = 0;
};

}  // namespace tzrec::embedding
