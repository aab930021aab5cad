// The tables of a negative sampler in TorchEasyRec's local graph format: one text file per
// table, fields separated by the sampler's field_delimiter (default a tab), a first line with
// the typed header, then one line per node or edge:
//   items  "id:int64<TAB>weight:float<TAB>attrs:string": the item id, weight 1 and the item's
//          attr_fields values joined by attr_delimiter (no attrs field without attr_fields)
//   users  "id:int64<TAB>weight:float"
//   edges  "userid:int64<TAB>itemid:int64<TAB>weight:float": positive edges are the (user,
//          item) pairs of the training rows; hard-negative edges 2 items per user drawn from
//          a separate stream
// Items and users are the entities of RowGenerator, so ids and attributes agree with the rows.
// With a sequence item_id_field (column_plan.h) the items are the ids its elements hold, each
// attribute the value of the item's element in the (prefixed) attr column, and the positive edges
// pair the row's user with every item of its sequence; the items are also written as
// items.parquet, one row per item with the attr_fields (unprefixed) as columns: the input of the
// item tower package of hstu_match, whose plain features read them.
// tdm_sampler: the items go to tdm_items.csv (item_id_field, then the attr_fields columns) and
// `tzrec tdm_init_tree`'s builder (tdm/tree_io.h; n_cluster 2, category = the first attr column,
// every attr an attr_fields column, attr_delimiter the sampler's) writes tdm_tree/node_table.txt,
// edge_table.txt and predict_edge_table.txt from it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "datagen/row_generator.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::datagen {

struct SamplerTables {
  std::string item_path;           // every sampler
  std::string user_path;           // *_v2 and hard samplers
  std::string pos_edge_path;       // negative_sampler_v2, hard_negative_sampler_v2
  std::string hard_neg_edge_path;  // hard samplers
  std::string item_rows_path;      // items.parquet (a sequence item_id_field)
  // tdm_sampler: item_path is the tree's node table; the item table it was built from, the
  // edge and predict edge tables, and the number of tree levels.
  std::string tdm_item_table_path;
  std::string edge_path;
  std::string predict_edge_path;
  int tdm_levels = 0;
  std::vector<std::string> paths() const;
};

// Writes the tables the plan's sampler reads into `dir` (sampler_item.txt, sampler_user.txt,
// sampler_pos_edge.txt, sampler_hard_neg_edge.txt); nothing without a sampler. `train_pairs`:
// the (user, item) pair of every training row. Throws IoError naming a file it cannot write.
SamplerTables write_sampler_tables(const RowGenerator& rows, const std::string& dir,
                                   const std::vector<std::pair<int64_t, int64_t>>& train_pairs,
                                   uint64_t seed);

// Points the input path fields of the config's sampler at `tables`; for tdm_sampler also fits
// layer_num_sample to the tree's levels (root 0; cut, or extended with its last entry).
void point_sampler_at(const SamplerTables& tables, protos::EasyRecConfig* config);

}  // namespace tzrec::datagen
