// What the feature types share: config rules (table settings, FG inputs, FG_NONE defaults) and the
// parsing steps (defaults of empty cells, weighted tokens, range errors, item loops of sequences).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "feature/column_cells.h"
#include "feature/feature.h"
#include "feature/text_values.h"

namespace tzrec::feature {

// ---- config -------------------------------------------------------------------------------------

// The embedding-table settings of a sparse feature (docs/tzrec-compatibility.md §5.7): Msg is any
// feature message with embedding_dim, embedding_name, pooling, trainable, init_fn, data_type.
void fill_table_info(uint32_t embedding_dim, const std::string& embedding_name, const std::string& pooling,
                     bool trainable, const std::string& init_fn, const std::string& data_type,
                     const std::string& path, FeatureInfo* info);
template <typename Msg>
void fill_table_info(const Msg& c, const std::string& path, FeatureInfo* info) {
  fill_table_info(c.embedding_dim(), c.embedding_name(), c.pooling(), c.trainable(), c.init_fn(), c.data_type(), path,
                  info);
}

// The FG input name of expression "side:input_name" (docs/tzrec-compatibility.md §5.1); FG DAG
// inputs ("feature:", "const:") are not supported yet.
std::string input_from_expression(const std::string& expr, const std::string& path);

// The column a feature reads its FG input `input` from: grouped sequences prefix it with
// "<sequence_name>__" (their per-item inputs live in the sequence's columns).
std::string sequence_input_column(const BuildContext& ctx, const std::string& input);

// FG_NONE's fg_encoded_default_value: checked (ids in [0, num_embeddings) for sparse features,
// numbers for dense ones) and kept; unset or "" means none.
std::optional<std::string> fg_encoded_default(bool has, const std::string& value, const FeatureInfo& info,
                                              const std::string& path, const std::string& sep);

// Sequence settings from a sequence_* message (its own sequence_length / sequence_delim) or the
// grouped sequence in ctx; sets info->is_sequence, sequence_name, sequence_length and returns the
// item delimiter.
template <typename Msg>
std::string sequence_settings(const Msg& c, const BuildContext& ctx, bool stand_alone, FeatureInfo* info) {
  info->is_sequence = true;
  if (stand_alone) {
    info->sequence_length = c.sequence_length();
    return c.sequence_delim();
  }
  info->sequence_name = ctx.sequence_name;
  info->sequence_length = ctx.sequence_length;
  return ctx.sequence_delim;
}

// A normalizer under FG_NONE is valid but has no effect: one warning per feature and process.
void warn_normalizer_not_applied(const std::string& path);

// ---- parsing ------------------------------------------------------------------------------------

// "fix the data or raise num_buckets" / "fix the data or the vocab_list".
std::string range_hint(const std::string& table_size_field);

// Splits a weighted text token "key:weight" at the last ':'.
bool split_weighted(std::string_view tok, std::string_view* key, float* weight);

// The key and weight of one value of a weighted feature: map entries carry their weight, text
// tokens are "key:weight". False when a text token has no weight.
bool weighted_key(const CellValue& v, CellValue* key, float* weight);

// Calls fn(value, from_default) for the values of row r, or of `default_text` (split by `sep`) when
// the cell is empty. Returns false (calling nothing) when the cell is empty and there is no default.
template <typename Fn>
bool for_each_value_or_default(const ColumnCells& cells, int64_t r, std::string_view sep,
                               const std::string* default_text, Fn&& fn) {
  if (!cells.empty(r)) {
    cells.for_each(r, sep, [&](const CellValue& v) { fn(v, false); });
    return true;
  }
  if (!default_text || default_text->empty()) return false;
  CellValue v;
  for_each_token(*default_text, sep, [&](std::string_view tok) {
    v.text = tok;
    fn(v, true);
  });
  return true;
}

// Ends one row of a sparse sequence whose ids were pushed to out.sparse: items per row into
// out.sequence_lengths; KJT length = items (one id per item) or ids, with the ids per item into
// out.item_lengths.
void end_sequence_row(const std::vector<int64_t>& ids_per_item, bool one_id_per_item, const ParseOutput& out);

}  // namespace tzrec::feature
