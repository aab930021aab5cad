// Negative sampling of a batch (docs/tzrec-compatibility.md §6.5): the loader calls
// NegativeRows::sample on each batch it reads; the sampler draws the batch's negatives and the
// result is the input of data group __NEG__ (data_groups.h) — the attr_fields columns its
// features read, over the batch's rows followed by the negatives' rows, as TorchEasyRec's dataset
// appends the sampled attributes after the batch's rows.
//
//   ids       item_id_field (and user_id_field for the v2 / hard samplers) of each row: integers
//             (text cells parsed; empty or null is 0, TorchEasyRec's fill_null(0)), or any text with
//             USE_HASH_NODE_ID=1 (data/negative_sampler.h: key_of).
//   columns   the batch's cells as text (typed cells: integers in decimal, floats in their shortest
//             round-trip form, list elements joined by "\x1d" — fg_encoded_multival_sep under
//             FG_NONE — as TorchEasyRec splits the sampled attribute strings), then one cell per
//             negative: its attribute text from the item table.
//   origins   the batch's rows, then "<item table> negative k" for the negatives (messages).
// Candidate sequences (data_groups.h, CandidateSequence): item_id_field is a grouped sequence's
// input column; the ids are every row's items in order (user_id_field repeated per item for the
// v2 / hard samplers, as TorchEasyRec's build_sampler_input), and the result holds the negatives'
// rows only, their columns named "<sequence>__<attr field>" (FeatureParser appends them to the
// sequence's last row); hard_neg_indices' rows then count the items.
//   randomness  the sampler's stream for (seed, rank, data/row_key.h of the batch's first row), so
//             a batch gets the same negatives in every run with the same seed, after
//             --continue_train and wherever the data lies (data/negative_sampler.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "data/negative_sampler.h"
#include "data/record_batch.h"
#include "feature/data_groups.h"

namespace tzrec::feature {

class NegativeRows {
 public:
  // `columns`: the attr_fields the __NEG__ features read; `list_sep`: how typed list cells are
  // joined. `rank`: the global rank (independent negatives per rank). `seed`: the run's seed
  // (TORCH_MANUAL_SEED, 0 when unset).
  // `candidate`: the sequence the negatives join (its columns are then `columns`), or nullopt.
  NegativeRows(std::shared_ptr<const data::NegativeSampler> sampler, std::vector<std::string> columns,
               std::string list_sep, int32_t rank, uint64_t seed,
               std::optional<CandidateSequence> candidate = std::nullopt);

  // The columns the ids are read from (item_id_field, user_id_field when the sampler reads it).
  std::vector<std::string> id_columns() const;

  // The __NEG__ rows of `batch`; the hard samplers' indices into *hard_neg_indices ([H, 2] int64,
  // undefined for the others). DataError naming file, row and column for an id that does not parse.
  data::RecordBatch sample(const data::RecordBatch& batch, torch::Tensor* hard_neg_indices) const;

 private:
  // One id per row of `column`; with `items_per_row`, every item of the candidate sequence's
  // cells instead, *items_per_row receiving their count per row.
  std::vector<int64_t> keys(const data::RecordBatch& batch, const std::string& column,
                            std::vector<int64_t>* items_per_row = nullptr) const;

  std::shared_ptr<const data::NegativeSampler> sampler_;
  std::vector<std::string> columns_;
  std::string list_sep_;
  int32_t rank_ = 0;
  uint64_t seed_ = 0;
  std::optional<CandidateSequence> candidate_;
};

}  // namespace tzrec::feature
