// Rows of the generated data: row i (global index; eval rows follow the train rows) is a pure
// function of (seed, i). Per row: the element count of each sequence group and the length of
// each list length group are drawn once; with a negative sampler an item (and a user) is
// drawn, Zipf-distributed over the entities, and the item's id and attribute columns are
// generated from the item's own stream so that every row of one item agrees with the item
// table; then every input column, then labels (hidden_model.h), sample weights (0.5..2) and the
// cost column (1..10).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datagen/column_plan.h"
#include "datagen/hidden_model.h"
#include "datagen/value_generator.h"

namespace tzrec::datagen {

class RowGenerator {
 public:
  // Builds the value generators and calibrates the hidden model (on rows of a separate stream).
  RowGenerator(const ColumnPlan& plan, uint64_t seed);

  // Cells of row `index`, one per plan column. *item / *user get the row's entity indexes
  // (-1 without a sampler / user id column).
  void row(int64_t index, std::vector<Cell>* cells, int64_t* item = nullptr, int64_t* user = nullptr) const;

  // Number of items / users of the sampler tables (0 without them).
  int64_t num_items() const { return num_items_; }
  int64_t num_users() const { return num_users_; }
  // The attribute cell of item `item` for plan column `column` (an item_attr column).
  void item_attribute(int64_t item, int column, Cell* cell) const;

  const ColumnPlan& plan() const { return *plan_; }

 private:
  void draw(uint64_t row_seed, std::vector<Cell>* cells, std::vector<Contribution>* contributions,
            int64_t* item, int64_t* user) const;

  const ColumnPlan* plan_;
  uint64_t seed_;
  std::vector<ValueGenerator> generators_;
  HiddenModel hidden_;
  int64_t num_items_ = 0;
  int64_t num_users_ = 0;
};

}  // namespace tzrec::datagen
