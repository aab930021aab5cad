// The dynamic embedding tables of a built model (docs/tzrec-compatibility.md §5.13), with the
// state-dict names of their weights and state: what the checkpoint tools that fill dynamic tables
// (zch_to_dynamicemb, dynamicemb_init_ckpt) write into.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "embedding/dynamic_table.h"
#include "train/training_session.h"

namespace tzrec::train {

// One dynamic table of the model. State-dict names below the model:
//   <group>.dynamicemb_ebc | <group>.dynamicemb_ec_dict.<dim>
//     ._embedding_module.{embedding_bags,embeddings}.<table>.weight      (weight)
//     .dynamic_tables.<table>.<state>                                   (state_prefix + state)
struct ModelDynamicTable {
  std::string group;         // the collection's path without its last segment(s)
  std::string table;         // the table's name
  std::string base_name;     // the features' embedding_name (TableConfig::base_name)
  std::string weight;        // state-dict name of its weight
  std::string state_prefix;  // "<collection>.dynamic_tables.<table>."
  int64_t embedding_dim = 0;
  embedding::DynamicTable* index = nullptr;  // owned by the model
};

// Every dynamic table of `session`'s model (DEEP / WIDE groups, then sequence groups).
std::vector<ModelDynamicTable> model_dynamic_tables(TrainingSession& session);

// Loads `state` into `table` (DynamicTable::load, kCompact: rows 0, 1, ... for the entries kept)
// and copies, for every kept entry i, row state.rows[i] of `source` into the row the table gave
// it in `weight` ([R + 2, dim]). Returns what load did.
embedding::DynamicTableLoadResult load_dynamic_table_rows(embedding::DynamicTable& table,
                                                          const embedding::DynamicTableState& state,
                                                          const torch::Tensor& source, torch::Tensor weight);

}  // namespace tzrec::train
