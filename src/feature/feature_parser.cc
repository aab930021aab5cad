#include "feature/feature_parser.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "feature/column_cells.h"
#include "feature/text_values.h"

namespace tzrec::feature {
namespace {

// Key-major accumulation of the KJT: features are appended one after the other.
struct SparseOut {
  std::vector<int64_t> values;   // [sum(L)]
  std::vector<int64_t> lengths;  // [F * B]
  std::vector<float> weights;    // [sum(L)] when any feature is weighted
  bool with_weights = false;

  void push(int64_t id, float w) {
    values.push_back(id);
    if (with_weights) weights.push_back(w);
  }
};

std::string range_hint(const FeatureSpec& f) {
  if (f.table_size_field == "num_buckets" || f.table_size_field == "hash_bucket_size") {
    return "fix the data or raise " + f.table_size_field;
  }
  return "fix the data or the " + f.table_size_field;
}

[[noreturn]] void throw_out_of_range(const FeatureSpec& f, const std::string& loc, int64_t id,
                                     const char* what) {
  throw DataError(fmt::format("{}: {} {} out of range [0, {}) for feature {} ({}); {}", loc, what,
                              id, f.info.num_embeddings, f.info.name, f.table_size_source,
                              range_hint(f)));
}

// Splits a weighted text token "key:weight" at the last ':'.
bool split_weighted(std::string_view tok, std::string_view* key, float* weight) {
  const auto colon = tok.rfind(':');
  if (colon == std::string_view::npos) return false;
  double w = 0;
  if (!parse_double(tok.substr(colon + 1), &w)) return false;
  *key = tok.substr(0, colon);
  *weight = static_cast<float>(w);
  return true;
}

// The key and weight of one value of a weighted feature: map entries carry their weight, text
// tokens are "key:weight". False when a text token has no weight.
bool weighted_key(const CellValue& v, CellValue* key, float* weight) {
  *key = v;
  if (v.has_weight) {
    *weight = static_cast<float>(v.weight);
    return true;
  }
  if (v.kind != CellValue::Kind::kText) return false;
  return split_weighted(v.text, &key->text, weight);
}

// Calls fn(value) for the values of row r, or of `default_text` (split by `sep`) when the cell is
// empty. Returns false (calling nothing) when the cell is empty and there is no default.
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

// ---- FG_NONE ----------------------------------------------------------------------------------

void parse_encoded_sparse(const FeatureSpec& f, const std::string& sep, const ColumnCells& cells,
                          int64_t rows, SparseOut* out) {
  const int64_t n = f.info.num_embeddings;
  const std::string* def = f.fg_encoded_default ? &*f.fg_encoded_default : nullptr;
  if (cells.is_map() && !f.info.weighted) {
    throw DataError(fmt::format(
        "column {} is a {} (ids with weights) but feature {} is not weighted; set {}.weighted: "
        "true or use a list column",
        cells.name(), cells.describe_type(), f.info.name, f.field_path));
  }
  for (int64_t r = 0; r < rows; ++r) {
    int64_t len = 0;
    for_each_value_or_default(cells, r, sep, def, [&](const CellValue& v, bool from_default) {
      CellValue id_val = v;
      float w = 1.0f;
      if (f.info.weighted) {
        const bool plain_default = from_default && v.text.find(':') == std::string_view::npos;
        if (!plain_default && !weighted_key(v, &id_val, &w)) {
          throw DataError(fmt::format(
              "{}: '{}' of weighted feature {} is not id:weight; weighted features read "
              "'id:weight' tokens (separated by data_config.fg_encoded_multival_sep) or map "
              "columns; fix the data",
              cells.where(r), display(v), f.info.name));
        }
      }
      int64_t id = 0;
      if (!as_int64(id_val, &id)) {
        throw DataError(fmt::format(
            "{}: '{}' is not an integer id for feature {}; with fg_mode FG_NONE the column holds "
            "bucketized ids separated by data_config.fg_encoded_multival_sep — check the data, "
            "the separator and data_config.fg_mode",
            cells.where(r), display(id_val), f.info.name));
      }
      if (id < 0 || id >= n) throw_out_of_range(f, cells.where(r), id, "id");
      out->push(id, w);
      ++len;
    });
    out->lengths.push_back(len);
  }
}

// dst: [B, stride] float32, this feature's block starts at column `offset`.
void parse_encoded_dense(const FeatureSpec& f, const std::string& sep, const ColumnCells& cells,
                         int64_t rows, float* dst, int64_t stride, int64_t offset) {
  const int64_t dim = f.info.value_dim;
  const std::string* def = f.fg_encoded_default ? &*f.fg_encoded_default : nullptr;
  if (cells.is_map()) {
    throw DataError(fmt::format("column {} is a {}; dense feature {} reads numbers or lists of "
                                "numbers",
                                cells.name(), cells.describe_type(), f.info.name));
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* row = dst + r * stride + offset;
    int64_t k = 0;
    const bool any = for_each_value_or_default(cells, r, sep, def, [&](const CellValue& v, bool) {
      double x = 0;
      if (!as_double(v, &x)) {
        throw DataError(fmt::format(
            "{}: value '{}' of dense feature {} is not a number; fix the data (multiple values "
            "are separated by data_config.fg_encoded_multival_sep)",
            cells.where(r), display(v), f.info.name));
      }
      if (k < dim) row[k] = static_cast<float>(x);
      ++k;
    });
    if (!any) {
      throw DataError(fmt::format(
          "{}: empty value for dense feature {}; set {}.fg_encoded_default_value or fill the "
          "column",
          cells.where(r), f.info.name, f.field_path));
    }
    if (k != dim) {
      throw DataError(
          fmt::format("{}: dense feature {} has {} values, expected value_dim {}; fix the data or "
                      "{}.value_dim",
                      cells.where(r), f.info.name, k, dim, f.field_path));
    }
  }
}

// ---- FG_NORMAL / FG_DAG -----------------------------------------------------------------------

void parse_fg_id(const FeatureSpec& f, HashKind hash_kind, const ColumnCells& cells, int64_t rows,
                 SparseOut* out) {
  std::string key_buf;
  if (cells.is_map() && !f.info.weighted) {
    throw DataError(fmt::format(
        "column {} is a {} (keys with weights) but feature {} is not weighted; set "
        "{}.weighted: true or use a list column",
        cells.name(), cells.describe_type(), f.info.name, f.field_path));
  }
  // The id of one key (text, or a number hashed / looked up as its decimal text).
  auto id_of = [&](const CellValue& key, int64_t r) -> int64_t {
    int64_t id = 0;
    switch (f.bucketizer) {
      case Bucketizer::kHash:
        return hash_bucket(key.kind == CellValue::Kind::kText ? key.text : as_text(key, &key_buf),
                           f.hash_bucket_size, hash_kind);
      case Bucketizer::kVocab: {
        const std::string_view k = as_text(key, &key_buf);
        if (k.data() != key_buf.data()) key_buf.assign(k.data(), k.size());
        auto it = f.vocab.find(key_buf);
        return it == f.vocab.end() ? f.oov_id : it->second;
      }
      case Bucketizer::kNumBuckets:
        if (!as_int64(key, &id)) {
          throw DataError(fmt::format(
              "{}: value '{}' of feature {} is not an integer; num_buckets needs integer ids "
              "in [0, {}) (use hash_bucket_size or a vocab for other values)",
              cells.where(r), display(key), f.info.name, f.info.num_embeddings));
        }
        if (id < 0 || id >= f.info.num_embeddings) {
          throw_out_of_range(f, cells.where(r), id, "value");
        }
        return id;
      default:
        TORCH_CHECK(false, "id_feature without bucketizer");
    }
  };
  for (int64_t r = 0; r < rows; ++r) {
    int64_t len = 0;
    for_each_value_or_default(cells, r, f.separator, &f.default_value,
                              [&](const CellValue& v, bool) {
      if (v.kind == CellValue::Kind::kText && v.text.empty()) return;
      if (!f.info.weighted) {
        out->push(id_of(v, r), 1.0f);
        ++len;
        return;
      }
      CellValue key;
      float w = 1.0f;
      if (!weighted_key(v, &key, &w)) {
        throw DataError(fmt::format(
            "{}: '{}' of weighted feature {} is not key:weight; weighted features read "
            "'key:weight' tokens or map columns; fix the data",
            cells.where(r), display(v), f.info.name));
      }
      if (key.kind == CellValue::Kind::kText && key.text.empty()) return;
      out->push(id_of(key, r), w);
      ++len;
    });
    out->lengths.push_back(len);
  }
}

// Parses a raw_feature cell into value_dim normalized doubles.
void raw_values(const FeatureSpec& f, const ColumnCells& cells, int64_t r, int64_t dim,
                std::vector<double>* vals) {
  vals->clear();
  bool from_default = false;
  for_each_value_or_default(cells, r, f.separator, &f.default_value,
                            [&](const CellValue& v, bool d) {
    from_default = d;
    double x = 0;
    if (!as_double(v, &x)) {
      throw DataError(fmt::format(
          "{}: value '{}' of raw feature {} is not a number; fix the data (multiple values are "
          "separated by {}.separator)",
          cells.where(r), display(v), f.info.name, f.field_path));
    }
    vals->push_back(x);
  });
  if (from_default && vals->size() == 1 && dim > 1)
    vals->resize(static_cast<size_t>(dim), (*vals)[0]);
  if (static_cast<int64_t>(vals->size()) != dim) {
    throw DataError(fmt::format(
        "{}: raw feature {} has {} values, expected value_dim {}; fix the data or {}.value_dim",
        cells.where(r), f.info.name, vals->size(), dim, f.field_path));
  }
  for (auto& v : *vals) v = f.normalizer.apply(v);
}

void parse_fg_raw_sparse(const FeatureSpec& f, int64_t dim, const ColumnCells& cells,
                         int64_t rows, SparseOut* out) {
  std::vector<double> vals;
  for (int64_t r = 0; r < rows; ++r) {
    raw_values(f, cells, r, dim, &vals);
    for (double v : vals) {
      // Compare in float32 like the float-typed FG value and the float boundaries.
      const float x = static_cast<float>(v);
      const auto bucket =
          std::upper_bound(f.boundaries.begin(), f.boundaries.end(), x) - f.boundaries.begin();
      out->push(static_cast<int64_t>(bucket), 1.0f);
    }
    out->lengths.push_back(dim);
  }
}

void parse_fg_raw_dense(const FeatureSpec& f, const ColumnCells& cells, int64_t rows, float* dst,
                        int64_t stride, int64_t offset) {
  std::vector<double> vals;
  for (int64_t r = 0; r < rows; ++r) {
    raw_values(f, cells, r, f.info.value_dim, &vals);
    float* row = dst + r * stride + offset;
    for (size_t k = 0; k < vals.size(); ++k) row[k] = static_cast<float>(vals[k]);
  }
}

// ---- labels -----------------------------------------------------------------------------------

torch::Tensor parse_scalar_column(const ColumnCells& cells, int64_t rows, const char* what) {
  if (!cells.is_scalar()) {
    throw DataError(fmt::format("column {} is a {}; a {} column must hold one number per row",
                                cells.name(), cells.describe_type(), what));
  }
  auto out = torch::empty({rows}, torch::kFloat32);
  float* p = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    if (cells.empty(r)) {
      throw DataError(fmt::format("{}: empty {} '{}'; every row needs a numeric {}",
                                  cells.where(r), what, cells.name(), what));
    }
    const CellValue v = cells.scalar(r);
    double x = 0;
    if (!as_double(v, &x)) {
      throw DataError(fmt::format("{}: {} '{}' value '{}' is not a number; fix the data",
                                  cells.where(r), what, cells.name(), display(v)));
    }
    p[r] = static_cast<float>(x);
  }
  return out;
}

// A 1-D tensor owning the vector's buffer (no copy).
template <typename T>
torch::Tensor to_tensor(std::vector<T>&& v, torch::ScalarType type) {
  auto* owned = new std::vector<T>(std::move(v));
  return torch::from_blob(
      owned->data(), {static_cast<int64_t>(owned->size())},
      [owned](void*) { delete owned; }, torch::TensorOptions().dtype(type));
}

}  // namespace

FeatureParser::FeatureParser(const protos::EasyRecConfig& config)
    : FeatureParser(build_parser_spec(config), hash_kind_from_env()) {}

namespace {

ParserSpec spec_without_labels(ParserSpec spec) {
  spec.label_fields.clear();
  spec.sample_weight_fields.clear();
  return spec;
}

}  // namespace

FeatureParser::FeatureParser(const protos::EasyRecConfig& config, bool read_labels)
    : FeatureParser(read_labels ? build_parser_spec(config)
                                : spec_without_labels(build_parser_spec(config)),
                    hash_kind_from_env()) {}

FeatureParser::FeatureParser(ParserSpec spec, HashKind hash_kind)
    : spec_(std::move(spec)), hash_kind_(hash_kind) {}

std::vector<std::string> FeatureParser::input_columns() const {
  std::vector<std::string> out;
  auto add = [&](const std::string& c) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  for (const auto& f : spec_.features) add(f.input_column);
  for (const auto& c : spec_.label_fields) add(c);
  for (const auto& c : spec_.sample_weight_fields) add(c);
  return out;
}

sparse::Batch FeatureParser::parse(const data::RecordBatch& b) const {
  const int64_t rows = b.num_rows();
  sparse::Batch out;
  out.batch_size = rows;

  SparseOut sp;
  std::vector<std::string> sparse_keys, dense_keys;
  std::vector<int64_t> dense_dims;
  int64_t dense_width = 0;
  for (const auto& f : spec_.features) {
    if (f.info.is_sparse) {
      sparse_keys.push_back(f.info.name);
      sp.with_weights = sp.with_weights || f.info.weighted;
    } else {
      dense_keys.push_back(f.info.name);
      dense_dims.push_back(f.info.value_dim);
      dense_width += f.info.value_dim;
    }
  }
  // Most features have one value per row: reserve that much, vectors grow for the rest.
  const auto expected = static_cast<size_t>(rows) * sparse_keys.size();
  sp.lengths.reserve(expected);
  sp.values.reserve(expected);
  if (sp.with_weights) sp.weights.reserve(expected);
  auto dense = torch::empty({rows, dense_width}, torch::kFloat32);
  float* dense_ptr = dense.data_ptr<float>();
  int64_t dense_offset = 0;
  const bool encoded = spec_.fg_mode == FgMode::kNone;
  for (const auto& f : spec_.features) {
    const ColumnCells cells(b, f.input_column, "feature " + f.info.name);
    if (f.info.is_sparse) {
      if (encoded) {
        parse_encoded_sparse(f, spec_.multival_sep, cells, rows, &sp);
      } else if (f.bucketizer == Bucketizer::kBoundaries) {
        // raw_feature: value_dim ids per row (one per value).
        parse_fg_raw_sparse(f, f.raw_value_dim, cells, rows, &sp);
      } else {
        parse_fg_id(f, hash_kind_, cells, rows, &sp);
      }
    } else {
      if (encoded) {
        parse_encoded_dense(f, spec_.multival_sep, cells, rows, dense_ptr, dense_width,
                            dense_offset);
      } else {
        parse_fg_raw_dense(f, cells, rows, dense_ptr, dense_width, dense_offset);
      }
      dense_offset += f.info.value_dim;
    }
  }
  if (!sparse_keys.empty()) {
    out.sparse_features = sparse::KeyedJaggedTensor(
        sparse_keys, to_tensor(std::move(sp.values), torch::kInt64),
        to_tensor(std::move(sp.lengths), torch::kInt64),
        sp.with_weights ? to_tensor(std::move(sp.weights), torch::kFloat32) : torch::Tensor());
  }
  if (!dense_keys.empty()) {
    out.dense_features = sparse::KeyedTensor(dense_keys, dense_dims, dense);
  }
  for (const auto& name : spec_.label_fields) {
    out.labels[name] = parse_scalar_column(ColumnCells(b, name, "label_fields"), rows, "label");
  }
  for (const auto& name : spec_.sample_weight_fields) {
    out.sample_weights[name] =
        parse_scalar_column(ColumnCells(b, name, "sample_weight_fields"), rows, "sample weight");
  }
  return out;
}

}  // namespace tzrec::feature
