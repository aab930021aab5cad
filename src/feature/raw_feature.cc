#include "feature/raw_feature.h"

#include <algorithm>
#include <cmath>

#include "feature/boundaries.h"
#include "feature/dense_embedding_settings.h"
#include "feature/feature_support.h"
#include "feature/fg_json_entry.h"
#include "feature/multi_input.h"

namespace tzrec::feature {

RawFeature::RawFeature(const protos::RawFeature& c, const std::string& path, const std::string& type,
                       const BuildContext& ctx, bool sequence)
    : Feature(c.feature_name(), path, type, ctx), config_(c) {
  if (c.value_dim() == 0) throw ConfigError(path + ".value_dim: must be >= 1");
  value_dim_ = c.value_dim();
  info_.value_dim = value_dim_;
  if (sequence) {
    sequence_delim_ = sequence_settings(c, ctx, ctx.sequence_name.empty(), &info_);
    if (sequence_delim_.empty()) throw ConfigError(path + ".sequence_delim: must not be empty");
  }
  check_single_input_sequence_fields(c.expression(), path + ".expression", sequence, c.sequence_fields(), path);
  if (c.boundaries_size() > 0) {
    info_.is_sparse = true;
    fill_table_info(c, path, &info_);
    boundaries_.assign(c.boundaries().begin(), c.boundaries().end());
    check_boundaries(boundaries_, path + ".boundaries");
    info_.num_embeddings = static_cast<int64_t>(boundaries_.size()) + 1;
    // Non-sequence sparse features have no per-item width (their ids are pooled per row).
    if (!sequence) info_.value_dim = 0;
  } else {
    info_.embedding_dim = c.embedding_dim();
  }
  fill_dense_embedding(c, value_dim_, SequenceDenseEmbedding::kIgnored, path, &info_);
  if (reads_encoded_column(fg_mode_)) {
    // The column holds FG output: bucket ids when boundaries are set (FG_BUCKETIZE: the numbers
    // before bucketization), else value_dim floats.
    if (c.has_normalizer()) warn_normalizer_not_applied(path);
    input_column_ = info_.name;
    fg_encoded_default_ =
        fg_encoded_default(c.has_fg_encoded_default_value(), c.fg_encoded_default_value(), info_, path, multival_sep_);
    return;
  }
  const FgInputName input = parse_fg_input(c.expression(), path + ".expression");
  input_side_ = input.side;
  input_column_ = fg_input_column(input, ctx, sequence, path + ".expression");
  default_value_ = c.default_value();
  separator_ = c.separator();
  if (separator_.empty()) throw ConfigError(path + ".separator: must not be empty");
  if (c.has_normalizer()) normalizer_ = Normalizer::parse(c.normalizer(), path + ".normalizer");
}

const char* RawFeature::kind() const {
  return reads_encoded_column(fg_mode_) && !info_.is_sparse ? "dense" : "raw";
}

int64_t RawFeature::encoded_bucket(const CellValue& v, const std::string& where) const {
  int64_t id = 0;
  if (!as_int64(v, &id)) {
    throw DataError(fmt::format(
        "{}: '{}' is not an integer id for feature {}; with fg_mode FG_NONE a raw_feature with boundaries holds "
        "bucket ids separated by data_config.fg_encoded_multival_sep — check the data, the separator and "
        "data_config.fg_mode",
        where, display(v), info_.name));
  }
  if (id < 0 || id >= info_.num_embeddings) {
    throw DataError(fmt::format("{}: id {} out of range [0, {}) for feature {} ({} boundaries -> {} buckets); fix the "
                                "data or the boundaries",
                                where, id, info_.num_embeddings, info_.name, boundaries_.size(),
                                info_.num_embeddings));
  }
  return id;
}

template <typename ForEach>
void RawFeature::values_of(const ForEach& for_each_value, const ColumnCells& cells, int64_t r,
                           std::vector<double>* vals) const {
  vals->clear();
  const bool encoded = reads_encoded_column(fg_mode_);
  const bool encoded_ids = fg_mode_ == FgMode::kNone && info_.is_sparse;
  auto take = [&](const CellValue& v) {
    if (encoded_ids) {
      vals->push_back(static_cast<double>(encoded_bucket(v, cells.where(r))));
      return;
    }
    double x = 0;
    if (!as_double(v, &x)) {
      throw DataError(fmt::format(
          "{}: value '{}' of {} feature {} is not a number; fix the data (multiple values are separated by {})",
          cells.where(r), display(v), kind(), info_.name,
          encoded ? "data_config.fg_encoded_multival_sep" : field_path_ + ".separator"));
    }
    vals->push_back(x);
  };
  for_each_value(take);
  bool from_default = false;
  if (vals->empty()) {
    const std::string* def = encoded ? (fg_encoded_default_ ? &*fg_encoded_default_ : nullptr) : &default_value_;
    if (def == nullptr || def->empty()) {
      throw DataError(fmt::format("{}: empty value for {} feature {}; set {}.{} or fill the column", cells.where(r),
                                  kind(), info_.name, field_path_,
                                  encoded ? "fg_encoded_default_value" : "default_value"));
    }
    CellValue d;
    for_each_token(*def, encoded ? multival_sep_ : separator_, [&](std::string_view tok) {
      d.text = tok;
      take(d);
    });
    from_default = true;
  }
  // FG modes: a single default value stands for all value_dim values.
  if (!encoded && from_default && vals->size() == 1 && value_dim_ > 1) {
    vals->resize(static_cast<size_t>(value_dim_), (*vals)[0]);
  }
  if (static_cast<int64_t>(vals->size()) != value_dim_) {
    throw DataError(fmt::format("{}: {} feature {} has {} values{}, expected value_dim {}; fix the data or {}.value_dim",
                                cells.where(r), kind(), info_.name, vals->size(),
                                info_.is_sequence ? " in an item" : "", value_dim_, field_path_));
  }
  if (!encoded) {
    for (auto& v : *vals) v = normalizer_.apply(v);
  }
}

void RawFeature::emit(const std::vector<double>& vals, const ColumnCells& cells, int64_t r, const ParseOutput& out,
                      float* dense_row) const {
  if (!info_.is_sparse) {
    for (size_t k = 0; k < vals.size(); ++k) dense_row[k] = static_cast<float>(vals[k]);
    return;
  }
  for (double v : vals) {
    if (fg_mode_ == FgMode::kNone) {
      out.sparse->push(static_cast<int64_t>(v), 1.0f);
      continue;
    }
    out.sparse->push(bucket(v), 1.0f);
  }
}

int64_t RawFeature::bucket(double v) const {
  // Compare in float32 like the float-typed FG value and the float boundaries.
  const float x = static_cast<float>(v);
  return boundary_bucket(boundaries_, x);
}

int64_t RawFeature::value_bucket(const CellValue& v, const ColumnCells& cells, int64_t r) const {
  double x = 0;
  if (!as_double(v, &x)) {
    throw DataError(fmt::format("{}: value '{}' of raw feature {} is not a number; with fg_mode FG_BUCKETIZE the "
                                "column holds the feature's numbers before bucketization — fix the data",
                                cells.where(r), display(v), info_.name));
  }
  return bucket(x);
}

void RawFeature::parse(const data::RecordBatch& batch, const ParseOutput& out) const {
  const ColumnCells cells(batch, input_column_, "feature " + info_.name, info_.is_sequence);
  if (cells.is_map()) {
    throw DataError(fmt::format("column {} is a {}; raw feature {} reads numbers or lists of numbers", cells.name(),
                                cells.describe_type(), info_.name));
  }
  const bool encoded = reads_encoded_column(fg_mode_);
  const std::string& sep = encoded ? multival_sep_ : separator_;
  std::vector<double> vals;
  if (!info_.is_sequence && info_.is_sparse && encoded) {
    // FG output of a bucketized raw feature: its bucket ids (FG_BUCKETIZE: the numbers to
    // bucketize), any number of them, like an id feature's.
    const std::string* def = fg_encoded_default_ ? &*fg_encoded_default_ : nullptr;
    for (int64_t r = 0; r < out.rows; ++r) {
      int64_t len = 0;
      for_each_value_or_default(cells, r, sep, def, [&](const CellValue& v, bool) {
        out.sparse->push(fg_mode_ == FgMode::kNone ? encoded_bucket(v, cells.where(r)) : value_bucket(v, cells, r),
                         1.0f);
        ++len;
      });
      out.sparse->lengths.push_back(len);
    }
    return;
  }
  if (!info_.is_sequence) {
    for (int64_t r = 0; r < out.rows; ++r) {
      values_of(
          [&](auto&& fn) {
            if (!cells.empty(r)) cells.for_each(r, sep, fn);
          },
          cells, r, &vals);
      emit(vals, cells, r, out, info_.is_sparse ? nullptr : out.dense + r * out.dense_stride + out.dense_offset);
      if (info_.is_sparse) out.sparse->lengths.push_back(value_dim_);
    }
    return;
  }
  const auto max_items = !encoded && info_.sequence_length > 0 ? info_.sequence_length : INT64_MAX;
  // FG modes, one number per item: an item that is one parseable number goes straight to the
  // output (what values_of and emit do with it, without the value list); others take the general
  // path below (defaults, several values, errors).
  const bool one_number_items = !encoded && value_dim_ == 1;
  const bool text_cells = cells.is_scalar() && cells.leaf_kind() == CellValue::Kind::kText;
  const bool whole_rows = one_number_items && text_cells && sequence_delim_.size() == 1 && !sep.empty();
  std::vector<int64_t> ids_per_item;
  for (int64_t r = 0; r < out.rows; ++r) {
    if (whole_rows && !cells.empty(r)) {
      const std::string_view text = cells.scalar(r).text;
      if (push_number_items(text, max_items, out)) continue;
    }
    ids_per_item.clear();
    auto push_item = [&](const auto& for_each_value) {
      if (static_cast<int64_t>(ids_per_item.size()) >= max_items) return;
      values_of(for_each_value, cells, r, &vals);
      if (info_.is_sparse) {
        emit(vals, cells, r, out, nullptr);
      } else {
        const size_t at = out.sequence_dense->size();
        out.sequence_dense->resize(at + vals.size());
        emit(vals, cells, r, out, out.sequence_dense->data() + at);
      }
      ids_per_item.push_back(value_dim_);
    };
    if (!cells.empty(r)) {
      cells.for_each_item(r, sequence_delim_, sep, [&](const ColumnCells::Item& item) {
        const CellValue* one = one_number_items ? item.one_text_value() : nullptr;
        double x = 0;
        if (one != nullptr && static_cast<int64_t>(ids_per_item.size()) < max_items && as_double(*one, &x)) {
          x = normalizer_.apply(x);
          if (info_.is_sparse) {
            out.sparse->push(bucket(x), 1.0f);
          } else {
            out.sequence_dense->push_back(static_cast<float>(x));
          }
          ids_per_item.push_back(1);
          return;
        }
        if (!encoded && item.empty()) {
          push_item([](auto&&) {});  // FG modes: an empty item is the default value
        } else {
          push_item([&](auto&& fn) { item.for_each(fn); });
        }
      });
    } else if (!encoded || fg_encoded_default_) {
      push_item([](auto&&) {});  // one item of the default value
    }
    if (info_.is_sparse) {
      end_sequence_row(ids_per_item, value_dim_ == 1, out);
    } else {
      out.sequence_lengths->push_back(static_cast<int64_t>(ids_per_item.size()));
    }
  }
}

// Flattened: the compiler otherwise keeps the dense vector's push_back out of line, a call per item.
__attribute__((flatten)) bool RawFeature::push_number_items(std::string_view text, int64_t max_items,
                                                            const ParseOutput& out) const {
  const bool sparse = info_.is_sparse;
  // Bucket ids (sparse) or floats (dense) go to the end of one of these.
  std::vector<int64_t>* ids = sparse ? &out.sparse->values : nullptr;
  std::vector<float>* dense = sparse ? nullptr : out.sequence_dense;
  const size_t begin = sparse ? ids->size() : dense->size();
  // Items are at most the delimiters + 1.
  const auto room = static_cast<size_t>(std::min<int64_t>(max_items, static_cast<int64_t>(text.size()) + 1));
  if (sparse) {
    reserve_room(ids, begin + room);
  } else {
    reserve_room(dense, begin + room);
  }
  const char* text_end = text.data() + text.size();  // a token's parse may read up to the cell's end
  // A cell holding the value separator (a byte of it: several values per item) takes the general
  // path; its bytes are searched for it with the delimiters.
  bool separator_seen = false;
  bool parsed = true;
  const size_t items = for_each_leading_token(
      text, sequence_delim_[0], room,
      [&](size_t, std::string_view token) {
        double x = 0;
        parsed = !token.empty() && parse_double_in(token, text_end, &x);
        if (!parsed) return false;
        x = normalizer_.apply(x);
        if (sparse) {
          ids->push_back(bucket(x));
        } else {
          dense->push_back(static_cast<float>(x));
        }
        return true;
      },
      separator_[0], &separator_seen);
  if (!parsed || separator_seen) {
    if (sparse) {
      ids->resize(begin);
    } else {
      dense->resize(begin);
    }
    return false;
  }
  // (Raw features are never weighted: the parser gives bucket ids weight 1 afterwards.)
  if (sparse) {
    end_sequence_row(static_cast<int64_t>(items), out);
  } else {
    out.sequence_lengths->push_back(static_cast<int64_t>(items));
  }
  return true;
}

// TorchEasyRec's RawFeature._fg_json (docs/tzrec-compatibility.md §5.3): separator and value_dim
// only for value_dim > 1, normalizer when not empty, boundaries when set.
std::vector<nlohmann::ordered_json> RawFeature::fg_json_entries() const {
  const protos::RawFeature& c = config_;
  nlohmann::ordered_json e;
  e["feature_type"] = "raw_feature";
  e["feature_name"] = c.feature_name();
  e["default_value"] = fg_default_value(c.default_value(), info_.is_sequence);
  e["expression"] = c.expression();
  e["value_type"] = "float";
  if (c.value_dim() > 1) {
    if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
    e["value_dim"] = c.value_dim();
  }
  if (!c.normalizer().empty()) e["normalizer"] = c.normalizer();
  if (c.boundaries_size() > 0) e["boundaries"] = fg_float_list(c.boundaries(), field_path_ + ".boundaries");
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  add_fg_sequence_fields(c.sequence_fields(), info_, &e);
  return {e};
}

}  // namespace tzrec::feature
