// How a checkpoint lays out the rows of a dynamic embedding table (docs/tzrec-compatibility.md
// §5.13, "Checkpoints"): the blocks of the W_s ranks that wrote it, each holding the rows in use
// of its table — rows [0, U_r), U_r = DynamicTable::num_rows() — and, in the weight (and sparse
// optimizer state), its two reserved rows after them:
//   weight               [Σ (U_r + 2), dim]  rank r's block at O_r = Σ_{q<r} (U_q + 2)
//   row_keys / row_scores / row_live  [Σ U_r]  rank r's at S_r = Σ_{q<r} U_q
//   rows_in_use          [W_s] int64   U_r
//   capacity             [1] int64     R_s, each rank's max_capacity() when it was written
// (named by DynamicEmbeddingBagCollection::layout_tensor_names).
// Rows keep their numbers, so a table restored with the same world size and capacity hands out
// rows as the table that was saved. Checkpoints without `rows_in_use` (written before, by
// zch_to_dynamicemb, or export packages) have the full layout: U_r = R_s for every rank, the
// weight W_s · (R_s + 2) rows, the state W_s · R_s — W_s and R_s read from the two shapes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tzrec::embedding {

struct DynamicSavedLayout {
  int64_t world = 1;                    // W_s
  int64_t capacity = 0;                 // R_s
  std::vector<int64_t> rows_in_use;     // [W_s] U_r
  std::vector<int64_t> state_offsets;   // [W_s] S_r
  std::vector<int64_t> weight_offsets;  // [W_s] O_r
  int64_t state_rows = 0;               // Σ U_r
  int64_t weight_rows = 0;              // Σ (U_r + 2)
};

// The layout of the ranks' rows in use `rows_in_use` (each at most `capacity`): what a checkpoint
// written now holds, and what read_dynamic_saved_layout reads back.
DynamicSavedLayout dynamic_saved_layout(std::vector<int64_t> rows_in_use, int64_t capacity);

// The layout of a saved table from its state `saved` (row_keys, row_scores, row_live; and
// rows_in_use / capacity when the checkpoint has them) and its weight's row count.
// CheckpointError naming `where` when they do not fit together.
DynamicSavedLayout read_dynamic_saved_layout(const std::map<std::string, torch::Tensor>& saved,
                                             int64_t saved_weight_rows, const std::string& where);

// The blocks of one rank: weight rows [0, rows) and the two reserved rows [capacity, capacity + 2)
// of `rows` (a rank's weight or sparse optimizer state of capacity + 2 rows), as one tensor of
// rows + 2 rows.
torch::Tensor rows_in_use_block(const torch::Tensor& rows, int64_t rows_in_use, int64_t capacity);

}  // namespace tzrec::embedding
