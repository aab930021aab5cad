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
  std::vector<std::string> paths() const;
};

// Writes the tables the plan's sampler reads into `dir` (sampler_item.txt, sampler_user.txt,
// sampler_pos_edge.txt, sampler_hard_neg_edge.txt); nothing without a sampler. `train_pairs`:
// the (user, item) pair of every training row. Throws IoError naming a file it cannot write.
SamplerTables write_sampler_tables(const RowGenerator& rows, const std::string& dir,
                                   const std::vector<std::pair<int64_t, int64_t>>& train_pairs,
                                   uint64_t seed);

// Points the input path fields of the config's sampler at `tables`.
void point_sampler_at(const SamplerTables& tables, protos::EasyRecConfig* config);

}  // namespace tzrec::datagen
