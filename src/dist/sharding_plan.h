// ShardingPlan: where every embedding table lives across the ranks of a job (TorchRec's
// ParameterSharding per table). Written by dist/planner, consumed by the sharded embedding layer
// and saved with every checkpoint (plan.json), so the same plan can be reused on restore.
//
// Sharding types (docs/tzrec-compatibility.md §2.3, ParameterConstraints.sharding_types):
//   data_parallel   every rank holds the whole table (one shard per rank, all rows and columns);
//   table_wise      one rank holds the whole table;
//   row_wise        rows split into contiguous blocks of ceil(rows / n) over n = world_size ranks
//                   (TorchRec's block size; trailing blocks may be smaller or empty);
//   table_row_wise  row_wise over the ranks of one node (multi-node jobs);
//   column_wise     columns split into contiguous blocks, each block held by one rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tzrec::dist {

enum class ShardingType { kDataParallel, kTableWise, kRowWise, kTableRowWise, kColumnWise };

// "data_parallel", "table_wise", "row_wise", "table_row_wise", "column_wise".
std::string sharding_type_name(ShardingType type);
// Inverse of sharding_type_name; anything else → tzrec::ConfigError quoting `what` (the field
// path or variable the name came from) and listing the valid names.
ShardingType parse_sharding_type(const std::string& name, const std::string& what);

// One block of a table held by one rank: rows [row_offset, row_offset + rows) and columns
// [col_offset, col_offset + cols) of the full [num_embeddings, embedding_dim] table.
struct Shard {
  int rank = 0;
  int64_t row_offset = 0;
  int64_t rows = 0;
  int64_t col_offset = 0;
  int64_t cols = 0;

  bool operator==(const Shard& o) const {
    return rank == o.rank && row_offset == o.row_offset && rows == o.rows &&
           col_offset == o.col_offset && cols == o.cols;
  }
};

struct TableSharding {
  std::string table;  // table name (EmbeddingGroup's table names, e.g. "cat_0_emb")
  int64_t num_embeddings = 0;
  int64_t embedding_dim = 0;
  ShardingType type = ShardingType::kTableWise;
  // data_parallel: one full shard per rank, in rank order. Otherwise the blocks, ordered by
  // (col_offset, row_offset); together they cover the table exactly once. Empty row_wise blocks
  // (rows == 0) are kept so a block's index is its position in the rank list.
  std::vector<Shard> shards;
  // One line explaining the choice (printed by `tzrec plan`), e.g. "fits on one rank; lowest
  // estimated step cost".
  std::string reason;

  bool operator==(const TableSharding& o) const {
    return table == o.table && num_embeddings == o.num_embeddings &&
           embedding_dim == o.embedding_dim && type == o.type && shards == o.shards;
  }
};

struct ShardingPlan {
  int world_size = 1;
  std::vector<TableSharding> tables;  // in the order the planner received the tables

  // Throws tzrec::ConfigError naming the table when absent.
  const TableSharding& table(const std::string& name) const;

  // {"world_size": N, "tables": [{"table", "num_embeddings", "embedding_dim", "sharding_type",
  //   "reason", "shards": [{"rank", "row_offset", "rows", "col_offset", "cols"}]}]}
  nlohmann::json to_json() const;
  // Inverse of to_json; checks that every table's shards cover it exactly once, ranks are in
  // [0, world_size) and data_parallel has one full shard per rank. Any problem →
  // tzrec::CheckpointError naming `source` (the file it came from), the table and the field.
  static ShardingPlan from_json(const nlohmann::json& json, const std::string& source);

  bool operator==(const ShardingPlan& o) const {
    return world_size == o.world_size && tables == o.tables;
  }
};

}  // namespace tzrec::dist
