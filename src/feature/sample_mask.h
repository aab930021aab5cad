// TorchEasyRec's training-time sample masks (data_config.sample_mask_prob and
// negative_sample_mask_prob, read by features with use_mask; docs/tzrec-compatibility.md §5.14).
// In training each row of a batch is masked with probability sample_mask_prob, each sampled
// negative with negative_sample_mask_prob; a feature with use_mask then reads its first input
// that is not a map column as empty on the masked rows (TorchEasyRec nulls it), so the feature
// takes its default there. Features of data group __NEG__ see the batch's rows' masks followed by
// the negatives' ones, as TorchEasyRec concatenates them.
//
// The draws come from one splitmix64 stream per batch seeded from (TORCH_MANUAL_SEED, rank, the
// batch's first row), like the negative samplers' (TorchEasyRec draws them from numpy's global
// generator): a resumed run masks a batch as the uninterrupted run did.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/record_batch.h"
#include "tzrec/protos/data.pb.h"

namespace tzrec::feature {

struct SampleMaskOptions {
  double sample_prob = 0;    // data_config.sample_mask_prob
  double negative_prob = 0;  // data_config.negative_sample_mask_prob
  bool active() const { return sample_prob > 0 || negative_prob > 0; }
};

// The two probabilities of `dc`: ConfigError naming the field for a value outside [0, 1] (or NaN).
SampleMaskOptions sample_mask_options(const protos::DataConfig& dc);

// One batch's masks (1: masked): `rows` for its rows, `negatives` for the sampled negatives.
struct SampleMasks {
  std::vector<uint8_t> rows;
  std::vector<uint8_t> negatives;
};

// Draws the masks of `batch` (its rows) and of `num_negatives` sampled negatives.
SampleMasks draw_sample_masks(const SampleMaskOptions& options, const data::RecordBatch& batch, int64_t num_negatives,
                              uint64_t seed, int rank);

// The columns `columns` of `batch` (each once; those it lacks are left out for the feature to
// report), its files and row origins, with column `masked` (one of them) empty on the rows where
// `mask` is 1: a text cell becomes "", a typed scalar null, a typed list (or list of lists) an
// empty list. `masked` must not be a map column. What a use_mask feature parses in training.
data::RecordBatch with_masked_column(const data::RecordBatch& batch, const std::vector<std::string>& columns,
                                     const std::string& masked, const std::vector<uint8_t>& mask);

// The column a use_mask feature masks: its first input column that is not a typed map (TorchEasyRec:
// the first input that is not an Arrow map); "" when all are maps or absent.
std::string first_maskable_column(const data::RecordBatch& batch, const std::vector<std::string>& columns);

}  // namespace tzrec::feature
