// The bags of a collection that maps raw ids to rows per table before an inner
// EmbeddingBagCollection looks them up (zch_embedding_bag_collection.h,
// dynamic_embedding_bag_collection.h): which bags read each table, the inner collection's bags,
// and the remapping of a KeyedJaggedTensor table by table.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/embedding_config.h"
#include "sparse/keyed_jagged_tensor.h"

namespace tzrec::embedding {

class RemappedBags {
 public:
  // `tables`: the collection's table names in order; every bag names one of them.
  RemappedBags(const std::vector<std::string>& tables, std::vector<BagConfig> bags);

  const std::vector<BagConfig>& bags() const { return bags_; }
  // The inner collection's bags: each reads the remapped rows under its bag key (a feature feeding
  // two tables is remapped by each of them), without an output key.
  std::vector<BagConfig> inner_bags() const;

  // One key per bag (its key()), in bag order: lengths and weights (weighted bags) as in `kjt`,
  // values = the rows rows_of_tables gives each table for its ids — those of all its bags,
  // concatenated in bag order, int64 — cut back into the bags. rows_of_tables is called once, with
  // one entry per table: the ids of the tables with bags, undefined for the others (to be returned
  // as they are). DataError for a bag whose feature `kjt` lacks (before rows_of_tables is called).
  using RowsOfTables = std::function<std::vector<torch::Tensor>(const std::vector<torch::Tensor>& ids)>;
  // When `kjt` holds exactly the bags' features in bag order (int64 ids; weights on every bag or on
  // none) and each table's bags are consecutive, nothing is copied around rows_of_tables: its ids
  // are views of kjt.values(), the output's lengths and weights are kjt's, and its values are the
  // rows (one table) or the tables' rows joined once. Otherwise the ids and rows are gathered bag
  // by bag.
  sparse::KeyedJaggedTensor remap(const sparse::KeyedJaggedTensor& kjt, const RowsOfTables& rows_of_tables) const;

 private:
  // The in-place path of remap(), or nullopt when `kjt` does not qualify.
  std::optional<sparse::KeyedJaggedTensor> remap_aligned(const sparse::KeyedJaggedTensor& kjt,
                                                         const RowsOfTables& rows_of_tables) const;

  std::vector<std::string> tables_;
  std::vector<BagConfig> bags_;
  std::vector<std::vector<size_t>> table_bags_;  // table index → indices of its bags, in bag order
  std::vector<std::string> features_;            // bag index → its feature name
  std::vector<std::string> keys_;                // bag index → its key()
  // Tables with bags, by their first bag, when every table's bags are consecutive; else empty.
  std::vector<size_t> consecutive_tables_;
  bool all_weighted_ = false;
};

}  // namespace tzrec::embedding
