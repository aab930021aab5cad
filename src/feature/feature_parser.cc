#include "feature/feature_parser.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
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

// "file.csv line 12 column cat_3"
std::string where(const data::RecordBatch& b, int64_t row, const std::string& column) {
  return b.describe_row(row) + " column " + column;
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  if (s.size() > 64) out += "...";
  return out;
}

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

// Splits a weighted token "key:weight" at the last ':'.
bool split_weighted(std::string_view tok, std::string_view* key, float* weight) {
  const auto colon = tok.rfind(':');
  if (colon == std::string_view::npos) return false;
  double w = 0;
  if (!parse_double(tok.substr(colon + 1), &w)) return false;
  *key = tok.substr(0, colon);
  *weight = static_cast<float>(w);
  return true;
}

// ---- FG_NONE ----------------------------------------------------------------------------------

void parse_encoded_sparse(const FeatureSpec& f, const std::string& sep,
                          const data::StringColumn& col, const data::RecordBatch& b,
                          SparseOut* out) {
  const int64_t n = f.info.num_embeddings;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    std::string_view cell = col.cell(r);
    const bool from_default = cell.empty();
    if (from_default) {
      if (!f.fg_encoded_default) {
        out->lengths.push_back(0);
        continue;
      }
      cell = *f.fg_encoded_default;
    }
    int64_t len = 0;
    for_each_token(cell, sep, [&](std::string_view tok) {
      std::string_view id_tok = tok;
      float w = 1.0f;
      if (f.info.weighted && !(from_default && tok.find(':') == std::string_view::npos)) {
        if (!split_weighted(tok, &id_tok, &w)) {
          throw DataError(
              fmt::format("{}: '{}' of weighted feature {} is not id:weight (tokens separated by "
                          "data_config.fg_encoded_multival_sep); fix the data",
                          where(b, r, col.name), printable(tok), f.info.name));
        }
      }
      int64_t id = 0;
      if (!parse_int64(id_tok, &id)) {
        throw DataError(fmt::format(
            "{}: '{}' is not an integer id for feature {}; with fg_mode FG_NONE the column holds "
            "bucketized ids separated by data_config.fg_encoded_multival_sep — check the data, "
            "the separator and data_config.fg_mode",
            where(b, r, col.name), printable(tok), f.info.name));
      }
      if (id < 0 || id >= n) throw_out_of_range(f, where(b, r, col.name), id, "id");
      out->push(id, w);
      ++len;
    });
    out->lengths.push_back(len);
  }
}

// dst: [B, stride] float32, this feature's block starts at column `offset`.
void parse_encoded_dense(const FeatureSpec& f, const std::string& sep,
                         const data::StringColumn& col, const data::RecordBatch& b, float* dst,
                         int64_t stride, int64_t offset) {
  const int64_t dim = f.info.value_dim;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    std::string_view cell = col.cell(r);
    if (cell.empty()) {
      if (!f.fg_encoded_default) {
        throw DataError(fmt::format(
            "{}: empty value for dense feature {}; set {}.fg_encoded_default_value or fill the "
            "column",
            where(b, r, col.name), f.info.name, f.field_path));
      }
      cell = *f.fg_encoded_default;
    }
    float* row = dst + r * stride + offset;
    int64_t k = 0;
    for_each_token(cell, sep, [&](std::string_view tok) {
      double v = 0;
      if (!parse_double(tok, &v)) {
        throw DataError(fmt::format(
            "{}: value '{}' of dense feature {} is not a number; fix the data (multiple values "
            "are separated by data_config.fg_encoded_multival_sep)",
            where(b, r, col.name), printable(tok), f.info.name));
      }
      if (k < dim) row[k] = static_cast<float>(v);
      ++k;
    });
    if (k != dim) {
      throw DataError(
          fmt::format("{}: dense feature {} has {} values, expected value_dim {}; fix the data or "
                      "{}.value_dim",
                      where(b, r, col.name), f.info.name, k, dim, f.field_path));
    }
  }
}

// ---- FG_NORMAL / FG_DAG -----------------------------------------------------------------------

void parse_fg_id(const FeatureSpec& f, HashKind hash_kind, const data::StringColumn& col,
                 const data::RecordBatch& b, SparseOut* out) {
  std::string key_buf;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    std::string_view cell = col.cell(r);
    if (cell.empty()) cell = f.default_value;
    int64_t len = 0;
    if (!cell.empty()) {
      for_each_token(cell, f.separator, [&](std::string_view tok) {
        if (tok.empty()) return;
        std::string_view key = tok;
        float w = 1.0f;
        if (f.info.weighted) {
          if (!split_weighted(tok, &key, &w)) {
            throw DataError(
                fmt::format("{}: '{}' of weighted feature {} is not key:weight; fix the data",
                            where(b, r, col.name), printable(tok), f.info.name));
          }
          if (key.empty()) return;
        }
        int64_t id = 0;
        switch (f.bucketizer) {
          case Bucketizer::kHash:
            id = hash_bucket(key, f.hash_bucket_size, hash_kind);
            break;
          case Bucketizer::kVocab: {
            key_buf.assign(key.data(), key.size());
            auto it = f.vocab.find(key_buf);
            id = it == f.vocab.end() ? f.oov_id : it->second;
            break;
          }
          case Bucketizer::kNumBuckets:
            if (!parse_int64(key, &id)) {
              throw DataError(fmt::format(
                  "{}: value '{}' of feature {} is not an integer; num_buckets needs integer ids "
                  "in [0, {}) (use hash_bucket_size or a vocab for other values)",
                  where(b, r, col.name), printable(key), f.info.name, f.info.num_embeddings));
            }
            if (id < 0 || id >= f.info.num_embeddings) {
              throw_out_of_range(f, where(b, r, col.name), id, "value");
            }
            break;
          default:
            TORCH_CHECK(false, "id_feature without bucketizer");
        }
        out->push(id, w);
        ++len;
      });
    }
    out->lengths.push_back(len);
  }
}

// Parses a raw_feature cell into value_dim normalized doubles.
void raw_values(const FeatureSpec& f, const data::StringColumn& col, const data::RecordBatch& b,
                int64_t r, int64_t dim, std::vector<double>* vals) {
  std::string_view cell = col.cell(r);
  const bool from_default = cell.empty();
  if (from_default) cell = f.default_value;
  vals->clear();
  for_each_token(cell, f.separator, [&](std::string_view tok) {
    double v = 0;
    if (!parse_double(tok, &v)) {
      throw DataError(fmt::format(
          "{}: value '{}' of raw feature {} is not a number; fix the data (multiple values are "
          "separated by {}.separator)",
          where(b, r, col.name), printable(tok), f.info.name, f.field_path));
    }
    vals->push_back(v);
  });
  if (from_default && vals->size() == 1 && dim > 1)
    vals->resize(static_cast<size_t>(dim), (*vals)[0]);
  if (static_cast<int64_t>(vals->size()) != dim) {
    throw DataError(fmt::format(
        "{}: raw feature {} has {} values, expected value_dim {}; fix the data or {}.value_dim",
        where(b, r, col.name), f.info.name, vals->size(), dim, f.field_path));
  }
  for (auto& v : *vals) v = f.normalizer.apply(v);
}

void parse_fg_raw_sparse(const FeatureSpec& f, int64_t dim, const data::StringColumn& col,
                         const data::RecordBatch& b, SparseOut* out) {
  std::vector<double> vals;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    raw_values(f, col, b, r, dim, &vals);
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

void parse_fg_raw_dense(const FeatureSpec& f, const data::StringColumn& col,
                        const data::RecordBatch& b, float* dst, int64_t stride, int64_t offset) {
  std::vector<double> vals;
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    raw_values(f, col, b, r, f.info.value_dim, &vals);
    float* row = dst + r * stride + offset;
    for (size_t k = 0; k < vals.size(); ++k) row[k] = static_cast<float>(vals[k]);
  }
}

// ---- labels -----------------------------------------------------------------------------------

torch::Tensor parse_scalar_column(const data::StringColumn& col, const data::RecordBatch& b,
                                  const char* what) {
  auto out = torch::empty({b.num_rows()}, torch::kFloat32);
  float* p = out.data_ptr<float>();
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    const std::string_view cell = col.cell(r);
    double v = 0;
    if (cell.empty()) {
      throw DataError(fmt::format("{}: empty {} '{}'; every row needs a numeric {}",
                                  where(b, r, col.name), what, col.name, what));
    }
    if (!parse_double(cell, &v)) {
      throw DataError(fmt::format("{}: {} '{}' value '{}' is not a number; fix the data",
                                  where(b, r, col.name), what, col.name, printable(cell)));
    }
    p[r] = static_cast<float>(v);
  }
  return out;
}

const data::StringColumn& column_of(const data::RecordBatch& b, const std::string& name,
                                    const std::string& user) {
  const int c = b.column_index(name);
  if (c < 0) {
    throw DataError(
        fmt::format("input batch has no column '{}' (needed by {}); the reader must "
                    "read FeatureParser::input_columns()",
                    name, user));
  }
  return b.columns[static_cast<size_t>(c)];
}

template <typename T>
torch::Tensor to_tensor(const std::vector<T>& v, torch::ScalarType type) {
  auto t = torch::empty({static_cast<int64_t>(v.size())}, type);
  if (!v.empty()) std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(T));
  return t;
}

}  // namespace

FeatureParser::FeatureParser(const protos::EasyRecConfig& config)
    : FeatureParser(build_parser_spec(config), hash_kind_from_env()) {}

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
  auto dense = torch::empty({rows, dense_width}, torch::kFloat32);
  float* dense_ptr = dense.data_ptr<float>();
  int64_t dense_offset = 0;
  const bool encoded = spec_.fg_mode == FgMode::kNone;
  for (const auto& f : spec_.features) {
    const auto& col = column_of(b, f.input_column, "feature " + f.info.name);
    if (f.info.is_sparse) {
      if (encoded) {
        parse_encoded_sparse(f, spec_.multival_sep, col, b, &sp);
      } else if (f.bucketizer == Bucketizer::kBoundaries) {
        // raw_feature: value_dim ids per row (one per value).
        parse_fg_raw_sparse(f, f.raw_value_dim, col, b, &sp);
      } else {
        parse_fg_id(f, hash_kind_, col, b, &sp);
      }
    } else {
      if (encoded) {
        parse_encoded_dense(f, spec_.multival_sep, col, b, dense_ptr, dense_width, dense_offset);
      } else {
        parse_fg_raw_dense(f, col, b, dense_ptr, dense_width, dense_offset);
      }
      dense_offset += f.info.value_dim;
    }
  }
  if (!sparse_keys.empty()) {
    out.sparse_features = sparse::KeyedJaggedTensor(
        sparse_keys, to_tensor(sp.values, torch::kInt64), to_tensor(sp.lengths, torch::kInt64),
        sp.with_weights ? to_tensor(sp.weights, torch::kFloat32) : torch::Tensor());
  }
  if (!dense_keys.empty()) {
    out.dense_features = sparse::KeyedTensor(dense_keys, dense_dims, dense);
  }
  for (const auto& name : spec_.label_fields) {
    out.labels[name] = parse_scalar_column(column_of(b, name, "label_fields"), b, "label");
  }
  for (const auto& name : spec_.sample_weight_fields) {
    out.sample_weights[name] =
        parse_scalar_column(column_of(b, name, "sample_weight_fields"), b, "sample weight");
  }
  return out;
}

}  // namespace tzrec::feature
