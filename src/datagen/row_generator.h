// Rows of the generated data: row i (global index; eval rows follow the train rows) is a pure
// function of (seed, i). Per row: the element count of each sequence group and the length of
// each list length group are drawn once; with a negative sampler an item (and a user) is
// drawn, Zipf-distributed over the entities, and the item's id and attribute columns are
// generated from the item's own stream so that every row of one item agrees with the item
// table; then every input column, then labels (hidden_model.h), sample weights (0.5..2) and the
// cost column (1..10). When the item id column is a sequence (column_plan.h), each of its elements
// is an item drawn so, and element e of every item attribute column of that sequence is item e's
// attribute.
// A generative-recommendation config (plan.generative enabled) gets its users, histories,
// candidates and per-candidate labels from GenerativeRows (generative_rows.h), whose users and
// items are then the sampler tables' entities; its other columns are drawn as above.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datagen/column_plan.h"
#include "datagen/generative_rows.h"
#include "datagen/hidden_model.h"
#include "datagen/value_generator.h"

namespace tzrec::datagen {

class RowGenerator {
 public:
  // Builds the value generators and calibrates the hidden model (on rows of a separate stream).
  RowGenerator(const ColumnPlan& plan, uint64_t seed, const GenerativeOptions& generative = {});

  // Cells of row `index`, one per plan column. *items gets the row's items (one, or one per
  // element of a sequence item id column; none without a sampler), *user its user (-1 without a
  // user id column).
  void row(int64_t index, std::vector<Cell>* cells, std::vector<int64_t>* items = nullptr,
           int64_t* user = nullptr) const;

  // Number of items / users of the sampler tables (0 without them).
  int64_t num_items() const { return num_items_; }
  int64_t num_users() const { return num_users_; }
  // The attribute cell of item `item` for plan column `column` (an item_attr or the item id
  // column): a scalar or list cell; for a sequence column the item's element (one value).
  void item_attribute(int64_t item, int column, Cell* cell) const;

  const ColumnPlan& plan() const { return *plan_; }
  // The generative rows; nullptr unless plan.generative is enabled.
  const GenerativeRows* generative() const { return generative_.get(); }

 private:
  void draw(uint64_t row_seed, std::vector<Cell>* cells, std::vector<Contribution>* contributions,
            std::vector<int64_t>* items, int64_t* user) const;
  // The cell of the entity id column or item attribute column `column` for entity `id`, drawn from
  // the entity's own stream (a sequence column: one element); adds its contribution to *acc.
  void entity_cell(int64_t id, int column, Cell* cell, Contribution* acc) const;
  // A sequence column whose element e is entity_cell(items[e]); adds the elements' mean contribution.
  void sequence_cell(const std::vector<int64_t>& items, int column, Cell* cell, Contribution* acc) const;

  const ColumnPlan* plan_;
  uint64_t seed_;
  std::vector<ValueGenerator> generators_;
  HiddenModel hidden_;
  std::unique_ptr<GenerativeRows> generative_;
  int64_t num_items_ = 0;
  int64_t num_users_ = 0;
  // Set when the item id column is a sequence: its group and length (items per row).
  std::string item_sequence_group_;
  int item_sequence_length_ = 0;
  // The sampler's items / users are those of the generative rows.
  bool generative_items_ = false;
  bool generative_user_ = false;
};

}  // namespace tzrec::datagen
