// A dynamic embedding table's init table (`dynamicemb.init_table`, docs/tzrec-compatibility.md
// §5.13, TorchEasyRec's tools/dynamicemb/create_dynamicemb_init_ckpt): a CSV (with a header) or
// Parquet table whose first column holds ids and second column their embeddings.
//
// - Ids: one per row, mapped to the raw 64-bit ids the table is keyed by as the feature's own
//   values are — under feature generation (FG_NORMAL, FG_DAG, FG_BUCKETIZE) the id's text (an
//   integer's decimal digits) hashed into [0, 2^63 − 1) as zch / dynamicemb features hash
//   (feature/hash.h, USE_FARM_HASH_TO_BUCKETIZE honoured); under FG_NONE, whose columns hold raw
//   ids, the integer itself. (TorchEasyRec's tool always hashes, which matches its training under
//   feature generation only.)
// - Embeddings: a list of numbers, or text of numbers joined by `separator` (TorchEasyRec's
//   --separator, default ","), exactly embedding_dim of them.
// Each id once. Rows are read by `workers` threads (the files, or Parquet row ranges, split among
// them as a dataset's) and kept in table order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "data/table_sources.h"

namespace tzrec::train {

struct InitTableOptions {
  std::string path;  // comma list of files / globs
  data::TableFormat format = data::TableFormat::kParquet;
  std::string separator = ",";
  int64_t embedding_dim = 0;
  bool hashed_ids = true;  // false: FG_NONE, the ids are int64 as they are
  int workers = 1;
  int64_t batch_size = 20000;
  // What the table belongs to, for messages: "table 'user_id_emb' (feature_configs[0]...init_table)".
  std::string owner;
};

struct InitTableRows {
  std::string id_column, embedding_column;  // the table's first two columns
  std::vector<int64_t> ids;                 // raw ids, in table order
  torch::Tensor values;                     // [ids.size(), embedding_dim] float32
};

// Reads the table. DataError naming the file, row and column for: a table with fewer than two
// columns, an id cell that is empty, a list, a non-integral number or (FG_NONE) not an int64; an
// embedding that is not numbers or not embedding_dim of them; an id given twice (both rows named);
// a table without rows.
InitTableRows read_init_table(const InitTableOptions& options);

}  // namespace tzrec::train
