// TDM sampling of a batch (docs/tzrec-compatibility.md §6.5, TorchEasyRec's expand_tdm_sample):
// the loader calls TdmRows::expand on each batch it reads (train and eval, not predict); the
// tree sampler (tdm/tdm_sampler.h) gives each row's ancestors and per-level negatives, and the
// batch grows to
//   [the B input rows | B x P positives | B x N negatives]
// (P, N per row: tdm/tdm_sampler.h; each row's samples contiguous, in row order), all of it in
// data group __BASE__ (TorchEasyRec builds no __NEG__ group for tdm_sampler):
//   item columns   the sampler's attr_fields but "tree_level" that the batch has: the input
//                  cells, then each sampled node's attribute from the node table (text columns;
//                  typed cells as text like negative_rows.h)
//   label columns  the input labels, then 1 for positives and 0 for negatives (text)
//   other columns  (user side, sample weights, ...) the input cells, then row j's cell repeated
//                  for each of row j's samples (typed columns stay typed)
//   origins        the input rows, then for each sample the row it was drawn for (messages name
//                  the user's row).
// Randomness: the sampler's stream for (seed, train / eval, rank, data/row_key.h of the batch's
// first row), as negative_rows.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/record_batch.h"
#include "tdm/tdm_sampler.h"

namespace tzrec::feature {

class TdmRows {
 public:
  // label_fields: the columns that get 1 / 0; list_sep: how typed list cells are joined;
  // rank: the global rank; seed: the run's seed (TORCH_MANUAL_SEED, 0 when unset).
  TdmRows(std::shared_ptr<const tdm::TdmSampler> sampler, std::vector<std::string> label_fields, std::string list_sep,
          int32_t rank, uint64_t seed, bool is_training);

  // The column the item ids are read from.
  std::string id_column() const { return sampler_->config().item_id_field; }

  // The expanded batch. DataError naming file, row and column for an id that does not parse or
  // is not a leaf of the tree.
  data::RecordBatch expand(const data::RecordBatch& batch) const;

 private:
  std::shared_ptr<const tdm::TdmSampler> sampler_;
  std::vector<std::string> label_fields_;
  std::string list_sep_;
  int32_t rank_ = 0;
  uint64_t seed_ = 0;
  bool is_training_ = true;
};

}  // namespace tzrec::feature
