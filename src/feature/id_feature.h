// id_feature, sequence_id_feature and the id_feature sub-features of a grouped sequence_feature
// (docs/tzrec-compatibility.md §5.4 - §5.6).
//
// FG_NONE (the column holds FG output, named after the feature):
//   ids split by fg_encoded_multival_sep; weighted features hold "id:weight" tokens (or map
//   columns); an empty cell uses fg_encoded_default_value or gives an empty bag; ids outside
//   [0, num_embeddings) are a DataError.
//   Sequences: items split by sequence_delim (or list<...> elements, or the inner lists of
//   list<list<...>>), each item's ids split by fg_encoded_multival_sep; an empty cell is an empty
//   history (or one item of fg_encoded_default_value); no truncation (as TorchEasyRec).
// FG_BUCKETIZE: read as FG_NONE, but the values are tokens before bucketization (the FG output of
//   a config without bucketizers), each put through the feature's bucketizer as in FG_NORMAL.
// FG_NORMAL / FG_DAG (the column is the expression's input; grouped sub-features read
// "<sequence_name>__<input>"):
//   empty cell -> default_value; values split by `separator`; empty tokens are no value;
//   weighted tokens "key:weight" (split at the last ':'); then hash_bucket_size (hash of the text
//   as is) | vocab_list | vocab_dict | num_buckets (integers in [0, num_buckets)).
//   Sequences: items split by sequence_delim, an empty cell or item is default_value ("0" when
//   empty, as TorchEasyRec); value_dim 1 keeps an item's first value, 0 all of them; histories
//   longer than sequence_length keep their first sequence_length items.
// Sequence items carry one id each (value_dim 1, the default) or any number (value_dim 0: the
// KJT holds ids per row, Batch::sequence_item_lengths the ids per item).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "feature/column_cells.h"
#include "feature/feature.h"
#include "feature/feature_support.h"
#include "tzrec/protos/feature.pb.h"

namespace tzrec::feature {

class IdFeature : public Feature {
 public:
  // `type`: the config oneof name ("id_feature", "sequence_id_feature"); `sequence`: parse as a
  // sequence (sequence_id_feature, or a sub-feature of the grouped sequence in ctx).
  IdFeature(const protos::IdFeature& c, const std::string& path, const std::string& type, const BuildContext& ctx,
            bool sequence);

  std::vector<std::string> input_columns() const override { return {input_column_}; }
  std::vector<SideInput> side_inputs() const override {
    if (reads_encoded_column(fg_mode_)) return {};
    return {{input_side_, input_column_}};
  }
  void parse(const data::RecordBatch& batch, const ParseOutput& out) const override;
  std::vector<FeatureAsset> assets() const override { return vocab_file_assets(config_); }

 protected:
  std::vector<nlohmann::ordered_json> fg_json_entries() const override;

 private:
  enum class Bucketizer { kHash, kNumBuckets, kVocab };

  void check_vocab_ids() const;
  [[noreturn]] void throw_out_of_range(const std::string& where, int64_t id, const char* what) const;
  // The id of an FG_NORMAL value (text, or a number hashed / looked up as its decimal text) by
  // bucketizer B; fg_id() by bucketizer_.
  template <Bucketizer B>
  int64_t fg_id_by(const CellValue& key, HashKind hash_kind, const ColumnCells& cells, int64_t r,
                   std::string* buf) const;
  int64_t fg_id(const CellValue& key, HashKind hash_kind, const ColumnCells& cells, int64_t r,
                std::string* buf) const;
  void parse_fg(const ColumnCells& cells, const ParseOutput& out) const;
  // Sequences: the item loop is compiled per bucketizer (hundreds of ids per row).
  void parse_fg_sequence(const ColumnCells& cells, const ParseOutput& out) const;
  template <Bucketizer B>
  void parse_fg_sequence_by(const ColumnCells& cells, const ParseOutput& out) const;
  // One row's text cell of hashed items ("" for an empty cell), one id per item, empty items
  // taking `default_id`: appended to `out` as parse_fg_sequence_by would, unless the cell may hold
  // `separator_` (not empty; false, nothing appended: the general path's case).
  bool push_hashed_items(std::string_view text, int64_t max_items, int64_t default_id, const ParseOutput& out) const;

  protos::IdFeature config_;  // for fg_json_entries()
  std::string input_column_;
  std::string input_side_;  // FG modes: the side of the expression
  std::string sequence_delim_;
  std::optional<std::string> fg_encoded_default_;  // FG_NONE
  std::string default_value_;                      // FG_NORMAL
  std::string separator_;
  Bucketizer bucketizer_ = Bucketizer::kNumBuckets;
  Modulus hash_buckets_;  // hash_bucket_size (zch / dynamicemb: the int64 range)
  std::unordered_map<std::string, int64_t> vocab_;  // token -> id
  int64_t oov_id_ = 1;
  // "num_buckets 500", "vocab_list of 4 entries", ... and the field for range errors.
  std::string table_size_source_;
  std::string table_size_field_;
};

}  // namespace tzrec::feature
