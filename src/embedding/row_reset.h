// Resetting rows of an embedding table in place: the rows a zero-collision hashed table's eviction
// freed (zch_embedding_bag_collection.h) and the rows a dynamic table hands to new ids
// (dynamic_embedding_bag_collection.h) start again as if the table were new.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <torch/torch.h>

#include "embedding/embedding_bag_collection.h"
#include "embedding/fused_embedding_bags.h"

namespace tzrec::embedding {

// Overwrites rows `rows` [K] int64 of table `table` (an index into ebc->tables()) with values
// drawn by `draw` (given an uninitialised [K, dim] tensor of the table's dtype to fill), with
// torch's default CPU generator seeded from `seed` and its state put back afterwards (the draws
// are reproducible from (seed) alone and take nothing from the default stream); in fused mode the
// sparse optimizer's state of those rows goes back to its initial value (momentum1:
// initial_accumulator_value for the adagrads, else 0; momentum2: 0; per-table step counters are
// left alone).
void reset_table_rows(EmbeddingBagCollection& ebc, size_t table, const torch::Tensor& rows, uint64_t seed,
                      const std::function<void(torch::Tensor&)>& draw);

// Overwrites rows `rows` [K] int64 of table `table` with `fresh` [K, dim] (the table's dtype), and
// in fused mode puts their sparse optimizer state back to its initial value: reset_table_rows
// after its draw, for rows whose values are known.
void write_table_rows(EmbeddingBagCollection& ebc, size_t table, const torch::Tensor& rows, const torch::Tensor& fresh);

// A seed from a table name and a step: FNV-1a of the name mixed with the step (splitmix64
// finaliser). The same in every process, so a run resumed from a checkpoint draws what the
// uninterrupted run drew.
uint64_t table_step_seed(const std::string& table, int64_t step);

// The seed of the rows a rank resets in its row block of a table sharded by rows (remapping
// tables across ranks): table_step_seed of the table's name — with "@<block offset>" appended for
// every block but the first, so ranks draw from streams of their own and one process draws what
// it always drew.
uint64_t block_step_seed(const std::string& table, int64_t block_offset, int64_t step);

}  // namespace tzrec::embedding
