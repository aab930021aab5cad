// The cells of a generative-recommendation config's rows (the columns of its GenerativeLayout,
// generative_layout.h), one user per row, following the hidden interaction model
// (interaction_model.h). Row i is a pure function of (seed, i):
//
//   user         uniform over num_users() (min(1000, the user column's ids)). Its non-sequence
//                input columns are drawn from the user's own stream, so every row of a user has
//                the same values; the user column holds the user's index. The propensity p_u is a
//                random linear function of those cells' contributions (value_generator.h),
//                standardized.
//   histories    each channel gets a length log-uniform in [1, cap], cap = min(its
//                sequence_length, max_history_length). Events are drawn newest first (items at
//                kHistoryInterest, responses at the taste affinity, times going back from the
//                request end) until every channel has its length (a channel with an action
//                filter takes only events with that action) or kMaxEvents were drawn; a channel
//                left empty gets the newest event, with the filter's action added. Written oldest
//                first (newest first when reversed): item ids, times, action bitmasks, watch
//                seconds and item attributes, joined by the sequence's delimiter.
//   candidates   1..min(the candidate sequence_length, max_candidates), uniform. Query times start
//                5 s .. 1 day (log-uniform) after the last event and go on as a session's events
//                do. Impressions: items at kCandidateInterest, responses at the recent affinity
//                to the observed history (the events the channels hold); a sampler's positives:
//                items at kPositiveInterest, redrawn (up to 32 times) until the response has an
//                action. The label columns hold each candidate's action bitmask or watch seconds,
//                in the order the candidates are written.
//   request time the first candidate's query time (rounded up to the next float for FLOAT
//                columns), or the request end plus 5 s .. 1 day without candidates.
//   attributes   item attribute columns hold one value per item, drawn from the item's stream for
//                the attribute's name after the sequence prefix ("video_cate" of
//                "uih_seq__video_cate") with the candidate column of that name when there is one,
//                so that histories, candidates and the sampler's item table agree. Item id
//                columns hold the item index (num_items() = min(2000, their id ranges)).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datagen/column_plan.h"
#include "datagen/interaction_model.h"
#include "datagen/value_generator.h"

namespace tzrec::datagen {

struct GenerativeOptions {
  // Longest history per channel (capped by the channel's sequence_length where set).
  int max_history_length = 256;
  // Most candidates per row (capped by the candidate sequence's sequence_length where set).
  int max_candidates = 8;
};

inline constexpr int64_t kMaxGenerativeItems = 2000;
inline constexpr int64_t kMaxGenerativeUsers = 1000;
inline constexpr int kMaxEvents = 8192;

class GenerativeRows {
 public:
  // `plan.generative` must be enabled; `generators` (one per plan column) must outlive this.
  GenerativeRows(const ColumnPlan& plan, const std::vector<ValueGenerator>& generators, uint64_t seed,
                 const GenerativeOptions& options);

  // Sets the cells (and contributions, for the user columns) of the layout's columns; leaves the
  // other columns alone. *items gets the candidates' items, *user the user's index when the user
  // column is a sampler's user_id_field (else -1).
  void fill(uint64_t row_seed, std::vector<Cell>* cells, std::vector<Contribution>* contributions,
            std::vector<int64_t>* items, int64_t* user) const;

  // The cell of item `item` for an item id or item attribute column: one value (its element).
  void item_attribute(int64_t item, int column, Cell* cell) const;

  int64_t num_items() const { return model_.num_items(); }
  int64_t num_users() const { return num_users_; }
  const InteractionModel& model() const { return model_; }

 private:
  // The text of one element of item column or attribute column `column` for `item`.
  std::string element_text(int64_t item, int column) const;
  // Draws the user's columns; returns the standardized propensity.
  double user_cells(int64_t user, std::vector<Cell>* cells, std::vector<Contribution>* contributions) const;

  const ColumnPlan* plan_;
  const GenerativeLayout* layout_;
  const std::vector<ValueGenerator>* generators_;
  uint64_t seed_;
  InteractionModel model_;
  int64_t num_users_ = kMaxGenerativeUsers;
  std::vector<int> history_caps_;  // per channel
  int candidate_cap_ = 0;
  std::vector<int> attribute_key_;   // per column: the column whose generator and name key item attributes
  std::vector<uint64_t> attribute_hash_;  // per column: hash of the attribute's name
  std::vector<bool> item_column_;    // per column: an item id column
  std::vector<Contribution> propensity_weights_;  // per column (user columns)
  double propensity_norm_ = 1.0;
};

}  // namespace tzrec::datagen
