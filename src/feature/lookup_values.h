// What lookup_feature and match_feature make of the map values their keys hit, for one row (or
// one item of a sequence), in FG modes (docs/tzrec-compatibility.md §5.10, LookupFeature /
// MatchFeature):
//
//   discrete (a hash_bucket_size / num_buckets / vocab bucketizer): every hit is a text value
//       (the caller composes it: need_key, show_pkey / show_skey prefixes) and one id;
//   numeric: every hit is a number; with a combiner (sum, mean, min, max, count) the hits of the
//       row become one number, without one (combiner "", or need_discrete) each hit is a number;
//       value_dim > 1 (lookup_feature): each hit is `value_dim` numbers split by value_separator.
//       Then the normalizer, then boundaries (ids) or the dense block (floats).
//   No hit: default_value — one text value (discrete; "" gives no id), or one number (repeated
//       value_dim times when value_dim > 1; "" gives no id with boundaries outside sequences).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "feature/bucketizer.h"
#include "feature/column_cells.h"
#include "feature/dense_embedding_settings.h"
#include "feature/feature.h"
#include "feature/feature_support.h"
#include "feature/multi_input.h"
#include "feature/normalizer.h"
#include "feature/raw_feature.h"

namespace tzrec::feature {

enum class Combiner { kNone, kSum, kMean, kMin, kMax, kCount };

// lookup_feature.combiner (case-insensitive): "" | sum | mean (avg) | min | max | count.
// gap_min / gap_max: NotSupportedError; anything else: ConfigError at `field_path`.
Combiner parse_combiner(const std::string& text, const std::string& field_path);

struct LookupValuesSpec {
  std::string feature;                  // the feature's name (messages)
  std::string field_path;               // the feature's config path (messages)
  Bucketizer bucketizer;                // kNone: dense output
  Combiner combiner = Combiner::kNone;  // numeric hits; kNone: each hit is a value
  std::optional<Normalizer> normalizer;
  std::string default_value;  // the effective default value
  int64_t width = 1;          // dense: floats per row / item; value_dim > 1: numbers per hit
  bool multi_dim = false;     // value_dim > 1: hits are value_separator-joined vectors
  std::string value_separator = ",";
};

// A feature computing one number per row (per item in sequences), which TorchEasyRec declares as a
// RawFeature of value_dim 1 (overlap_feature, kv_dot_product): with boundaries sparse (its bucket,
// pooled per row; one id per item in sequences), else one dense float; dense embeddings as a raw
// feature's. Fills *info and returns the spec of its value.
template <typename Msg>
LookupValuesSpec single_number_values(const Msg& c, const std::string& default_value, const std::string& path,
                                      bool sequence, FeatureInfo* info) {
  Bucketizer::Fields f;
  f.boundaries.assign(c.boundaries().begin(), c.boundaries().end());
  LookupValuesSpec spec;
  spec.bucketizer = Bucketizer(f, default_value, path, info->name);
  info->is_sparse = spec.bucketizer.kind() == Bucketizer::Kind::kBoundaries;
  if (info->is_sparse) {
    fill_table_info(c, path, info);
    info->num_embeddings = spec.bucketizer.num_embeddings();
    info->value_dim = sequence ? 1 : 0;
  } else {
    info->embedding_dim = c.embedding_dim();
    info->value_dim = 1;
  }
  fill_dense_embedding(c, 1, SequenceDenseEmbedding::kIgnored, path, info);
  spec.feature = info->name;
  spec.field_path = path;
  spec.default_value = default_value;
  spec.width = 1;
  spec.combiner = Combiner::kNone;
  return spec;
}

// Checks the numeric default value of a numeric lookup / match (ConfigError at field_path
// .default_value when it is not a number; empty is allowed only with boundaries).
void check_numeric_default(const LookupValuesSpec& spec);

// ---- config shared by lookup_feature and match_feature ----------------------------------------

// fg_value_type (the FG output type before bucketization) may only restate what TorchEasyRec
// derives: "string" with a text bucketizer (or "int64" / "int32" with num_buckets), "float"
// otherwise; another type is NotSupportedError at `path`.fg_value_type.
void check_fg_value_type(bool has, const std::string& value, const Bucketizer& b, const std::string& path);

// A text default value with num_buckets must be an id of the table (ConfigError otherwise).
void check_text_default(const std::string& default_value, const Bucketizer& b, const std::string& path);

// The FG_NONE / FG_BUCKETIZE reading of a feature computed from other inputs (lookup, match,
// custom, expr, ...; docs/tzrec-compatibility.md §5.6, §5.2): its own column holds FG output — ids
// (fg_encoded_multival_sep, fg_encoded_default_value) when the feature is sparse (under
// FG_BUCKETIZE the values before bucketization, each put through `bucketizer`), else
// `dense_width` numbers read as a raw_feature's. Set up once in the
// feature's constructor; the feature is not moved afterwards (the reader points into it).
class OwnEncodedColumn {
 public:
  template <typename Msg>
  void init(const Msg& c, const Bucketizer& bucketizer, int64_t dense_width, const std::string& path,
            const std::string& type, const BuildContext& ctx, bool sequence, const std::string& sequence_delim,
            const FeatureInfo* info) {
    if (!info->is_sparse) {
      protos::RawFeature raw;
      raw.set_feature_name(c.feature_name());
      raw.set_value_dim(static_cast<uint32_t>(dense_width));
      if (c.has_fg_encoded_default_value()) raw.set_fg_encoded_default_value(c.fg_encoded_default_value());
      raw.set_sequence_length(c.sequence_length());
      raw.set_sequence_delim(c.sequence_delim());
      dense_ = std::make_unique<RawFeature>(raw, path, type, ctx, sequence);
      return;
    }
    default_ = fg_encoded_default(c.has_fg_encoded_default_value(), c.fg_encoded_default_value(), *info, path,
                                  ctx.multival_sep);
    ids_ = encoded_ids_spec(info, path, ctx.multival_sep, sequence_delim, default_, bucketizer.table_size_source(),
                            bucketizer.table_size_field());
    if (ctx.fg_mode == FgMode::kBucketize) {
      auto b = std::make_shared<const Bucketizer>(bucketizer);
      ids_.bucketize = [b](const CellValue& v, HashKind hash_kind, const ColumnCells& cells, int64_t r) {
        return b->value_id(v, hash_kind, cells, r);
      };
    }
  }
  void parse(const FeatureInfo& info, const data::RecordBatch& batch, const ParseOutput& out) const {
    parse_own_encoded(dense_.get(), ids_, info, batch, out);
  }

 private:
  std::optional<std::string> default_;
  std::unique_ptr<RawFeature> dense_;
  EncodedIds ids_;
};

// One row or item: add the hits, then finish.
class LookupValues {
 public:
  explicit LookupValues(const LookupValuesSpec* spec) : spec_(spec) {}

  void begin() {
    ids_.clear();
    numbers_.clear();
    hits_ = 0;
  }
  // A discrete hit (spec.bucketizer.is_text()): its text; `cells` / `r`: where, for messages.
  void add_text(std::string_view text, HashKind hash_kind, const ColumnCells& cells, int64_t r) {
    ids_.push_back(spec_->bucketizer.text_id(text, hash_kind, cells, r));
    ++hits_;
  }
  // A numeric hit; DataError at cells.where(r) when `v` is not a number.
  void add_number(const CellValue& v, const ColumnCells& cells, int64_t r);
  // Applies the default when nothing hit, combines, normalizes and bucketizes. Sparse: the ids of
  // the row / item in ids(); dense: writes spec.width floats to `dense` (DataError when the hits
  // give another number of values).
  void finish(HashKind hash_kind, const ColumnCells& cells, int64_t r, float* dense);
  const std::vector<int64_t>& ids() const { return ids_; }

 private:
  const LookupValuesSpec* spec_;
  std::vector<int64_t> ids_;
  std::vector<double> numbers_;
  int64_t hits_ = 0;
};

// The FG-mode rows of a lookup / match feature: for each row (each item of a sequence), `collect(r,
// k, values)` adds the hits of row r / item k (k = 0 outside sequences) to a begun LookupValues,
// whose ids go to out.sparse (sequences: value_dim 1 keeps an item's first id) or whose floats go
// to the dense block. `read_map(r, k)` is called before: once per row when the map input is not
// per item (`map_per_item` false), else once per item.
template <typename ReadMap, typename Collect>
void emit_lookup_rows(const FeatureInfo& info, const LookupValuesSpec& spec, MultiInputCells* cells, bool map_per_item,
                      const ParseOutput& out, ReadMap&& read_map, Collect&& collect) {
  LookupValues values(&spec);
  const ColumnCells& map_cells = cells->cells(0);
  if (!info.is_sequence) {
    for (int64_t r = 0; r < out.rows; ++r) {
      values.begin();
      read_map(r, int64_t{0});
      collect(r, int64_t{0}, &values);
      values.finish(out.hash_kind, map_cells, r,
                    info.is_sparse ? nullptr : out.dense + r * out.dense_stride + out.dense_offset);
      if (!info.is_sparse) continue;
      for (int64_t id : values.ids()) out.sparse->push(id, 1.0f);
      out.sparse->lengths.push_back(static_cast<int64_t>(values.ids().size()));
    }
    return;
  }
  std::vector<int64_t> ids_per_item;
  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t items = cells->begin_row(r);
    ids_per_item.clear();
    if (!map_per_item) read_map(r, int64_t{0});
    for (int64_t k = 0; k < items; ++k) {
      if (map_per_item) read_map(r, k);
      values.begin();
      collect(r, k, &values);
      float* dense = nullptr;
      if (!info.is_sparse) {
        const size_t at = out.sequence_dense->size();
        out.sequence_dense->resize(at + static_cast<size_t>(info.value_dim));
        dense = out.sequence_dense->data() + at;
      }
      values.finish(out.hash_kind, map_cells, r, dense);
      if (!info.is_sparse) continue;
      const auto& ids = values.ids();
      const size_t n = info.value_dim == 1 ? std::min<size_t>(ids.size(), 1) : ids.size();
      for (size_t j = 0; j < n; ++j) out.sparse->push(ids[j], 1.0f);
      ids_per_item.push_back(static_cast<int64_t>(n));
    }
    if (info.is_sparse) {
      end_sequence_row(ids_per_item, info.value_dim == 1, out);
    } else {
      out.sequence_lengths->push_back(items);
    }
  }
}

}  // namespace tzrec::feature
