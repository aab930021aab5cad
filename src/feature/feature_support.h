// What the feature types share: config rules (table settings, FG inputs, FG_NONE defaults) and the
// parsing steps (defaults of empty cells, weighted tokens, range errors, item loops of sequences).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "feature/column_cells.h"
#include "feature/feature.h"
#include "feature/text_values.h"
#include "config/vocab_file.h"

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

// An FG input "side:input_name" (docs/tzrec-compatibility.md §5.1).
struct FgInputName {
  std::string side;  // user | item | context | feature | const
  std::string name;
};
// Parses the input of config field `field_path` ("...combo_feature.expression[1]",
// "...lookup_feature.map"); ConfigError naming the field when it is not "side:input_name" with
// side user, item, context, feature or const.
FgInputName parse_fg_input(const std::string& expr, const std::string& field_path);

// The column input `n` of config field `field_path` is read from (`per_item`: an input of a
// sequence's items). user / item / context inputs: their name (per-item inputs of a grouped
// sequence prefixed, sequence_input_column); feature / const inputs: under FG_DAG the column
// FeatureParser adds (fg_dag.h), under FG_NORMAL the column of that name, as TorchEasyRec.
// NotSupportedError for a per-item feature / const input.
std::string fg_input_column(const FgInputName& n, const BuildContext& ctx, bool per_item,
                            const std::string& field_path);

// The column a feature reads its FG input `input` from: grouped sequences prefix it with
// "<sequence_name>__" (their per-item inputs live in the sequence's columns).
std::string sequence_input_column(const BuildContext& ctx, const std::string& input);

// FG_NONE's fg_encoded_default_value: checked (ids in [0, num_embeddings) for sparse features,
// numbers for dense ones) and kept; unset or "" means none.
std::optional<std::string> fg_encoded_default(bool has, const std::string& value, const FeatureInfo& info,
                                              const std::string& path, const std::string& sep);

// Sequence settings from a sequence_* message (its own sequence_length / sequence_delim) or the
// grouped sequence in ctx; sets info->is_sequence, sequence_name, sequence_length, sequence_delim
// and returns the item delimiter.
template <typename Msg>
std::string sequence_settings(const Msg& c, const BuildContext& ctx, bool stand_alone, FeatureInfo* info) {
  info->is_sequence = true;
  if (stand_alone) {
    info->sequence_length = c.sequence_length();
    info->sequence_delim = c.sequence_delim();
  } else {
    info->sequence_name = ctx.sequence_name;
    info->sequence_length = ctx.sequence_length;
    info->sequence_delim = ctx.sequence_delim;
  }
  return info->sequence_delim;
}

// The item delimiter of a feature with per-item inputs: in a sequence (sequence_* or a grouped
// sub-feature), sequence_settings()'s, a ConfigError when empty; outside sequences "", and
// sequence_fields is a ConfigError there.
template <typename Msg>
std::string item_delimiter(const Msg& c, const BuildContext& ctx, bool sequence, const std::string& path,
                           FeatureInfo* info) {
  if (!sequence) {
    if (c.sequence_fields_size() > 0) {
      throw ConfigError(path + ".sequence_fields: only sequence features have per-item inputs");
    }
    return "";
  }
  std::string delim = sequence_settings(c, ctx, ctx.sequence_name.empty(), info);
  if (delim.empty()) throw ConfigError(path + ".sequence_delim: must not be empty");
  return delim;
}

// Logs `message` as a warning the first time it is given in the process (features are built
// several times per run: parser, model, export).
void warn_once(const std::string& message);

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

// ---- FG_NONE sparse columns (docs/tzrec-compatibility.md §5.6) ----------------------------------

// How a sparse feature's FG_NONE column is read: ids (or "id:weight" tokens / map entries for
// weighted features) split by fg_encoded_multival_sep, checked against the table.
struct EncodedIds {
  const FeatureInfo* info = nullptr;  // name, num_embeddings, weighted, value_dim, is_sequence
  std::string field_path;             // the feature's config path, for messages
  std::string multival_sep;
  std::string sequence_delim;            // sequences
  const std::string* default_value = nullptr;  // fg_encoded_default_value; nullptr: none
  std::string table_size_source;  // "num_buckets 500", "hash_bucket_size 100", ...
  std::string table_size_field;   // "num_buckets", ... (range_hint)
  // Zero-collision hashed feature (info->zch_path set): FG_NONE ids are raw 64-bit ids, any value.
  bool raw_ids = false;
  // FG_BUCKETIZE: the column holds values before bucketization and this maps each one (a text, or
  // a number for boundaries) to its id, throwing DataError at cells.where(r). Empty: FG_NONE ids.
  std::function<int64_t(const CellValue& v, HashKind hash_kind, const ColumnCells& cells, int64_t r)> bucketize;
};

// The spec of a feature's FG_NONE column; `default_value`: its fg_encoded_default_value (the
// optional must outlive the spec).
EncodedIds encoded_ids_spec(const FeatureInfo* info, const std::string& field_path, const std::string& multival_sep,
                            const std::string& sequence_delim, const std::optional<std::string>& default_value,
                            const std::string& table_size_source, const std::string& table_size_field);

// The id of one value of the column: FG_NONE, the value itself (DataError at cells.where(r) when it
// is not an integer in the table); FG_BUCKETIZE, spec.bucketize of it.
int64_t encoded_id(const EncodedIds& spec, const CellValue& v, HashKind hash_kind, const ColumnCells& cells,
                   int64_t r);
// The ids of each row: an empty cell gives the default ids or an empty bag.
void parse_encoded_ids(const EncodedIds& spec, const ColumnCells& cells, const ParseOutput& out);
// Sequences: items split by sequence_delim (or list elements / inner lists), each item's ids by
// fg_encoded_multival_sep; value_dim 1 needs exactly one id per item; an empty cell is an empty
// history, or one item of the default ids.
void parse_encoded_id_sequence(const EncodedIds& spec, const ColumnCells& cells, const ParseOutput& out);
// A sparse feature's FG_NONE column (named after the feature): parse_encoded_ids, or
// parse_encoded_id_sequence for a sequence feature.
void parse_own_encoded_ids(const EncodedIds& spec, const FeatureInfo& info, const data::RecordBatch& batch,
                           const ParseOutput& out);
// A feature's own FG_NONE column: through `dense` (the raw_feature reader of a dense feature) when
// it is set, else as encoded ids (parse_own_encoded_ids).
void parse_own_encoded(const Feature* dense, const EncodedIds& spec, const FeatureInfo& info,
                       const data::RecordBatch& batch, const ParseOutput& out);

// Ends one row of a sparse sequence whose ids were pushed to out.sparse: items per row into
// out.sequence_lengths; KJT length = items (one id per item) or ids, with the ids per item into
// out.item_lengths.
void end_sequence_row(const std::vector<int64_t>& ids_per_item, bool one_id_per_item, const ParseOutput& out);
// The same for a row of `items` items of one id each.
void end_sequence_row(int64_t items, const ParseOutput& out);
// Capacity for at least `size` values in *v, grown geometrically as push_back grows it (an exact
// reserve per row would reallocate for every row): a row's items are then pushed one by one, with
// no zero-filled room to cut back.
template <typename T>
void reserve_room(std::vector<T>* v, size_t size) {
  if (v->capacity() < size) v->reserve(std::max(size, 2 * v->capacity()));
}

// The vocab_file asset of a feature message that has vocab_file and asset_dir (none when unset).
template <typename Msg>
std::vector<FeatureAsset> vocab_file_assets(const Msg& c) {
  if (!c.has_vocab_file()) return {};
  return {{"vocab_file", config::vocab_file_path(c.vocab_file(), c.has_asset_dir(), c.asset_dir())}};
}

}  // namespace tzrec::feature
