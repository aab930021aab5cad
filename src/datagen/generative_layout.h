// The data layout of a generative-recommendation config (TorchEasyRec's DlrmHSTU, UltraHSTU and
// HSTUMatch, or any config with JAGGED_SEQUENCE feature groups): which plan columns hold the user
// histories, the candidates and the per-candidate labels, read from the feature groups by the
// names TorchEasyRec's HSTU preprocessors use (tzrec/modules/gr/preprocessors.py,
// docs/source/models/dlrm_hstu.md, ultra_hstu.md, hstu_match.md):
//
//   candidate group   "candidate" (HSTUMatch: item_tower.input). Its first sequence feature holds
//                     the candidate item ids, its other features item attributes;
//                     "candidate_timestamp" the candidates' query times (Unix seconds).
//   history channels  every other JAGGED_SEQUENCE group X that is not "<Y>_action",
//                     "<Y>_watchtime" or "<Y>_timestamp" of a group Y ("uih"; UltraHSTU's
//                     "uih_click", "uih_view"). Its first sequence feature holds the item ids, its
//                     other features item attributes; the groups "X_action", "X_watchtime" and
//                     "X_timestamp" hold each event's action bitmask, watch time (seconds) and
//                     time (Unix seconds).
//   The other columns of the sequences these groups read (sub-features of the same
//   sequence_feature that no group names) are item attributes as well.
//   candidate labels  the label fields a fusion_mtl_tower task reads and those named
//                     "<candidate sequence_name>__<x>" (or "_<x>", RTP naming): Parquet
//                     list<int64> columns, one value per candidate. A label is the watch time
//                     (seconds) when no task with a task_bitmask reads it and a task reads it with
//                     l2_loss or its name contains "watch"; otherwise the action bitmask.
//   actions           the distinct task_bitmask values of the tasks and the action_weights of
//                     simple_action_encoder, ascending ({1} when the config sets none); an event's
//                     action bitmask is the OR of the actions it took.
//   channel filter    a channel named "<prefix>_<word>" whose <word> is the task_name, or one of
//                     its "_"-separated words, of tasks with one task_bitmask ("uih_click":
//                     is_click, "uih_view": long_view) holds only the events with that action;
//                     other channels hold every event.
//   user column       the sampler's user_id_field; else the column of the feature that a jrc_loss
//                     session_name or grouped_auc grouping_key names; else the column "user_id". It
//                     holds the user's index. Every other non-sequence input column is drawn per
//                     user, except the request-time columns: the non-sequence columns of a
//                     "query_time" group (HSTUMatch's time anchor).
//   order             sequence_timestamp_is_ascending (default true): false writes the histories
//                     newest first, and, except for hstu_match (which flips only the user side),
//                     the candidates too.
//
// A config without such groups gets an empty layout (enabled() false). Throws ConfigError naming
// the feature groups when one sequence is read by two channels, or by a channel and the candidates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datagen/column_spec.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::datagen {

// One user-history channel; column fields are plan column indexes, -1 when absent.
struct HistoryChannel {
  std::string group;
  int item_column = -1;
  int timestamp_column = -1;
  int action_column = -1;
  int watch_time_column = -1;
  std::vector<int> attribute_columns;
  int sequence_length = 0;      // the smallest sequence_length of its columns; 0: none set
  uint64_t action_filter = 0;   // nonzero: only events whose action has these bits
};

struct CandidateLayout {
  std::string group;  // empty: the config has no candidate group
  int item_column = -1;
  int query_time_column = -1;
  std::vector<int> attribute_columns;
  int sequence_length = 0;  // as HistoryChannel's
  std::vector<int> action_label_columns;
  std::vector<int> watch_time_label_columns;
  // The candidates are a negative sampler's positives (its item_id_field is the item column): the
  // items the user engaged with next. Otherwise they are impressions, labelled by the user's
  // response.
  bool positives = false;
  bool reversed = false;  // written newest first
};

struct GenerativeLayout {
  std::vector<HistoryChannel> channels;  // empty: not a generative config
  CandidateLayout candidates;
  std::vector<uint64_t> actions;
  bool histories_reversed = false;  // written newest first
  int user_column = -1;
  std::vector<int> user_columns;  // drawn per user (the user column among them)
  std::vector<int> request_time_columns;
  std::vector<bool> written;  // per plan column: written from this layout

  bool enabled() const { return !channels.empty(); }
  bool writes(int column) const {
    return column >= 0 && static_cast<size_t>(column) < written.size() && written[static_cast<size_t>(column)];
  }
};

// Reads the layout from the config's feature groups and model, and turns the candidate label
// columns of `columns` into list<int64> columns.
GenerativeLayout plan_generative_layout(const protos::EasyRecConfig& config, std::vector<ColumnSpec>* columns);

}  // namespace tzrec::datagen
