#include "feature/expr_feature.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string_view>

#include "base/stable_hash.h"
#include "data/row_key.h"
#include "feature/dense_embedding_settings.h"
#include "feature/fg_json_entry.h"
#include "feature/lookup_values.h"
#include "feature/text_values.h"

namespace tzrec::feature {

struct ExprFeature::Scratch {
  std::vector<std::vector<double>> values;  // per variable
  std::vector<ExprArg> args;                // per variable
  ExprProgram::Scratch program;
  std::vector<double> result;
  bool from_default = false;
};

ExprFeature::ExprFeature(const protos::ExprFeature& c, const std::string& path, const std::string& type,
                         const BuildContext& ctx, bool sequence)
    : MultiInputFeature(c.feature_name(), path, type, ctx), config_(c) {
  // use_mask: refused when the config is loaded (config/field_registry.cc).
  sequence_delim_ = item_delimiter(c, ctx, sequence, path, &info_);
  // TorchEasyRec: sequences have no empty default value ("0" instead).
  default_value_ = sequence && c.default_value().empty() ? "0" : c.default_value();
  info_.is_sparse = c.boundaries_size() > 0;
  if (info_.is_sparse) {
    fill_table_info(c, path, &info_);
    Bucketizer::Fields f;
    f.boundaries.assign(c.boundaries().begin(), c.boundaries().end());
    bucketizer_ = Bucketizer(f, default_value_, path, info_.name);
    info_.num_embeddings = bucketizer_.num_embeddings();
    if (!sequence) {
      info_.value_dim = 0;  // the row's ids are pooled
      max_ids_ = c.has_value_dim() ? c.value_dim() : 0;
    } else {
      max_ids_ = c.has_value_dim() ? c.value_dim() : 1;
      if (max_ids_ > 1) {
        throw ConfigError(
            fmt::format("{}.value_dim: {} for a sparse sequence expr feature; use 1 (one id per item) or 0 (every "
                        "value of an item's result)",
                        path, max_ids_));
      }
      info_.value_dim = max_ids_;
    }
  } else {
    // TorchEasyRec's RawFeature.value_dim: the configured value, else 1.
    width_ = c.has_value_dim() ? c.value_dim() : 1;
    if (width_ == 0) {
      throw ConfigError(path +
                        ".value_dim: 0 for a dense expr feature (no boundaries); set the number of values the "
                        "expression gives (1 for a scalar)");
    }
    info_.embedding_dim = c.embedding_dim();
    info_.value_dim = width_;
  }
  // TorchEasyRec's ExprFeature is a RawFeature: value_dim as configured, else 1.
  fill_dense_embedding(c, c.has_value_dim() ? c.value_dim() : 1, SequenceDenseEmbedding::kIgnored, path, &info_);

  if (reads_encoded_column(fg_mode_)) {
    own_encoded_.init(c, bucketizer_, width_, path, type, ctx, sequence, sequence_delim_, &info_);
    return;
  }

  if (c.expression().empty()) {
    throw ConfigError(path + ".expression: must be set to a math expression over the variables, e.g. \"a - b\"");
  }
  if (c.separator().empty()) throw ConfigError(path + ".separator: must not be empty");
  std::vector<std::string> names;
  for (int i = 0; i < c.variables_size(); ++i) {
    const std::string field = fmt::format("{}.variables[{}]", path, i);
    inputs_.push_back(make_fg_input(c.variables(i), field, ctx, sequence, c.sequence_fields(), c.separator()));
    const std::string& name = inputs_.back().name;
    for (size_t j = 0; j < names.size(); ++j) {
      if (names[j] == name) {
        throw ConfigError(fmt::format("{}: variable '{}' is declared twice (also variables[{}]); remove one", field,
                                      name, j));
      }
    }
    names.push_back(name);
  }
  if (sequence) check_sequence_inputs(inputs_, c.sequence_fields(), path);
  expression_ = c.expression();
  try {
    program_ = ExprProgram(expression_, names,
                           c.has_fill_missing() ? c.fill_missing() : std::numeric_limits<double>::quiet_NaN());
  } catch (const ExprSyntaxError& e) {
    throw ConfigError(fmt::format("{}.expression: {} at character {} of \"{}\"{}", path, e.what(), e.position() + 1,
                                  expression_, e.hint().empty() ? "" : "; " + e.hint()));
  }
  if (!default_value_.empty()) {
    for_each_token(default_value_, c.separator(), [&](std::string_view tok) {
      double x = 0;
      if (!parse_double(tok, &x)) {
        throw ConfigError(fmt::format(
            "{}.default_value: '{}' is not a number; rows where a variable is empty take it (numbers separated by "
            "separator)",
            path, std::string(tok)));
      }
      default_numbers_.push_back(x);
    });
  }
  if (!info_.is_sparse && !default_numbers_.empty() && default_numbers_.size() != 1 &&
      static_cast<int64_t>(default_numbers_.size()) != width_) {
    throw ConfigError(fmt::format("{}.default_value: {} numbers for value_dim {}; give one number or value_dim of them",
                                  path, default_numbers_.size(), width_));
  }
  name_seed_ = fnv1a64(info_.name);
}

void ExprFeature::values_of(const MultiInputCells& cells, const data::RecordBatch& batch, int64_t r, int64_t k,
                            Scratch* s) const {
  bool missing = false;
  for (size_t i = 0; i < inputs_.size() && !missing; ++i) {
    if (!program_.uses(i)) continue;
    std::vector<double>& v = s->values[i];
    v.clear();
    cells.for_each_value(i, r, k, [&](const CellValue& x) {
      if (x.kind == CellValue::Kind::kText && x.text.empty()) return;
      double d = 0;
      if (!as_double(x, &d)) {
        throw DataError(fmt::format(
            "{}: value '{}' of variable {} of expr feature {} is not a number; fix the data (several values are "
            "separated by {}.separator)",
            cells.where(i, r), display(x), inputs_[i].name, info_.name, field_path_));
      }
      v.push_back(d);
    });
    missing = v.empty();
    s->args[i] = ExprArg{v.data(), v.size()};
  }
  s->from_default = missing;
  if (missing) {
    s->result = default_numbers_;
    return;
  }
  uint64_t seed = 0;
  if (program_.uses_random()) {
    seed = splitmix64(name_seed_ ^ data::row_key(batch, r)) ^ (static_cast<uint64_t>(k) * kGolden64);
  }
  program_.evaluate(s->args.data(), &s->program, &s->result, seed);
  for (double x : s->result) {
    if (std::isnan(x)) {
      throw DataError(fmt::format(
          "{}: expr feature {} evaluates \"{}\" to NaN; guard the expression (e.g. isnan(x) ? 0 : x, or a domain "
          "check before log / sqrt){}",
          inputs_.empty() ? batch.describe_row(r) : cells.where(0, r), info_.name, expression_,
          s->result.size() > 1 || inputs_.size() > 1 ? ", or set fill_missing for vectors of different lengths"
                                                      : ""));
    }
  }
}

int64_t ExprFeature::push_ids(const Scratch& s, const ParseOutput& out) const {
  int64_t n = static_cast<int64_t>(s.result.size());
  if (max_ids_ > 0 && n > max_ids_) n = max_ids_;
  for (int64_t j = 0; j < n; ++j) out.sparse->push(bucketizer_.bucket(s.result[static_cast<size_t>(j)]), 1.0f);
  return n;
}

void ExprFeature::write_dense(const Scratch& s, const MultiInputCells& cells, const data::RecordBatch& batch,
                              int64_t r, float* dense) const {
  const auto n = static_cast<int64_t>(s.result.size());
  if (n == width_) {
    for (int64_t j = 0; j < n; ++j) dense[j] = static_cast<float>(s.result[static_cast<size_t>(j)]);
    return;
  }
  if (s.from_default && n == 1) {
    for (int64_t j = 0; j < width_; ++j) dense[j] = static_cast<float>(s.result[0]);
    return;
  }
  const std::string where = inputs_.empty() ? batch.describe_row(r) : cells.where(0, r);
  if (n == 0) {
    throw DataError(fmt::format("{}: a variable of expr feature {} is empty and default_value is empty; set {}.default_value "
                                "or fill the column",
                                where, info_.name, field_path_));
  }
  throw DataError(fmt::format("{}: expr feature {} gives {} values{}, expected value_dim {}; fix the data or {}.value_dim",
                              where, info_.name, n, s.from_default ? " (default_value)" : "", width_, field_path_));
}

void ExprFeature::parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const {
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : 0;
  MultiInputCells cells(batch, inputs_, "feature " + info_.name, sequence_delim_, max_items);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (cells.cells(i).is_map()) {
      throw DataError(fmt::format("column {} is a {}; expr feature {} reads numbers or lists of numbers",
                                  cells.cells(i).name(), cells.cells(i).describe_type(), info_.name));
    }
  }
  Scratch s;
  s.values.resize(inputs_.size());
  s.args.resize(inputs_.size());
  if (!info_.is_sequence) {
    for (int64_t r = 0; r < out.rows; ++r) {
      values_of(cells, batch, r, 0, &s);
      if (info_.is_sparse) {
        out.sparse->lengths.push_back(push_ids(s, out));
      } else {
        write_dense(s, cells, batch, r, out.dense + r * out.dense_stride + out.dense_offset);
      }
    }
    return;
  }
  std::vector<int64_t> ids_per_item;
  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t items = cells.begin_row(r);
    ids_per_item.clear();
    for (int64_t k = 0; k < items; ++k) {
      values_of(cells, batch, r, k, &s);
      if (info_.is_sparse) {
        ids_per_item.push_back(push_ids(s, out));
        continue;
      }
      const size_t at = out.sequence_dense->size();
      out.sequence_dense->resize(at + static_cast<size_t>(width_));
      write_dense(s, cells, batch, r, out.sequence_dense->data() + at);
    }
    if (info_.is_sparse) {
      end_sequence_row(ids_per_item, max_ids_ == 1, out);
    } else {
      out.sequence_lengths->push_back(items);
    }
  }
}

std::vector<nlohmann::ordered_json> ExprFeature::fg_json_entries() const {
  const protos::ExprFeature& c = config_;
  nlohmann::ordered_json e;
  e["feature_type"] = "expr_feature";
  e["feature_name"] = c.feature_name();
  e["default_value"] = fg_default_value(c.default_value(), info_.is_sequence);
  e["expression"] = c.expression();
  nlohmann::ordered_json vars = nlohmann::ordered_json::array();
  for (const std::string& v : c.variables()) vars.push_back(v);
  e["variables"] = std::move(vars);
  e["value_type"] = "float";
  if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
  if (c.has_fill_missing()) e["fill_missing"] = fg_float(c.fill_missing(), field_path_ + ".fill_missing");
  if (c.boundaries_size() > 0) e["boundaries"] = fg_float_list(c.boundaries(), field_path_ + ".boundaries");
  if (c.has_value_dim()) e["value_dim"] = c.value_dim();
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  add_fg_sequence_fields(c.sequence_fields(), info_, &e);
  return {e};
}

}  // namespace tzrec::feature
