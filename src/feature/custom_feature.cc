#include "feature/custom_feature.h"

#include <nlohmann/json.hpp>

#include "feature/builtin_operators.h"

#include <google/protobuf/util/json_util.h>

#include "feature/dense_embedding_settings.h"
#include "feature/fg_json_entry.h"
#include "feature/dynamicemb_settings.h"
#include "feature/zch_settings.h"

namespace tzrec::feature {
namespace {

// operator_params as a JSON object text ("{}" when unset).
std::string params_json(const protos::CustomFeature& c, const std::string& path) {
  if (!c.has_operator_params()) return "{}";
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  const auto status = google::protobuf::util::MessageToJsonString(c.operator_params(), &out, options);
  if (!status.ok()) throw ConfigError(fmt::format("{}.operator_params: {}", path, status.ToString()));
  return out;
}

}  // namespace

CustomFeature::CustomFeature(const protos::CustomFeature& c, const std::string& path, const std::string& type,
                             const BuildContext& ctx, bool sequence)
    : MultiInputFeature(c.feature_name(), path, type, ctx), config_(c) {
  // dynamicemb, use_mask: refused when the config is loaded (config/field_registry.cc).
  const int64_t value_dim = c.has_value_dim() ? c.value_dim() : 1;
  sequence_delim_ = item_delimiter(c, ctx, sequence, path, &info_);
  operator_lib_file_ = c.operator_lib_file();
  if (c.has_asset_dir() && !CustomOperator::is_official_library(operator_lib_file_)) {
    operator_lib_file_ = config::vocab_file_path(operator_lib_file_, true, c.asset_dir());
  }
  const std::string default_value = sequence && c.default_value().empty() ? "0" : c.default_value();
  Bucketizer bucketizer(Bucketizer::fields_of(c), default_value, path, info_.name);
  info_.is_sparse = bucketizer.kind() != Bucketizer::Kind::kNone;
  const bool numeric = !bucketizer.is_text();
  if (info_.is_sparse) {
    fill_table_info(c, path, &info_);
    info_.num_embeddings = bucketizer.num_embeddings();
    fill_zch_info_of(c, path, &info_);  // raw ids (FG_NONE reads them as they are)
    fill_dynamicemb_info_of(c, path, &info_);
    // A row's ids are pooled; a sequence item keeps its first id (value_dim 1) or all (0).
    info_.value_dim = !sequence ? 0 : value_dim;
    if (sequence && value_dim > 1) {
      throw ConfigError(fmt::format("{}.value_dim: {} for a sparse sequence custom feature; use 1 (one id per item) "
                                    "or 0 (any number of ids per item)",
                                    path, value_dim));
    }
  } else {
    info_.embedding_dim = c.embedding_dim();
    info_.value_dim = std::max<int64_t>(value_dim, 1);
  }
  fill_dense_embedding(c, value_dim, SequenceDenseEmbedding::kRefused, path, &info_);
  if (c.operator_name().empty()) throw ConfigError(path + ".operator_name: must not be empty");
  if (operator_lib_file_.empty()) throw ConfigError(path + ".operator_lib_file: must not be empty");

  values_.feature = info_.name;
  values_.field_path = path;
  values_.default_value = default_value;
  values_.width = info_.value_dim;
  if (reads_encoded_column(fg_mode_)) {
    if (c.has_normalizer()) warn_normalizer_not_applied(path);  // the data is FG output
    own_encoded_.init(c, bucketizer, info_.value_dim, path, type, ctx, sequence, sequence_delim_, &info_);
    return;
  }

  if (c.separator().empty()) throw ConfigError(path + ".separator: must not be empty");
  if (c.expression_size() == 0) throw ConfigError(path + ".expression: name the operator's inputs, e.g. user:query");
  for (int i = 0; i < c.expression_size(); ++i) {
    inputs_.push_back(make_fg_input(c.expression(i), fmt::format("{}.expression[{}]", path, i), ctx, sequence,
                                    c.sequence_fields(), c.separator()));
  }
  if (sequence) check_sequence_inputs(inputs_, c.sequence_fields(), path);
  if (c.has_normalizer()) {
    if (!numeric) {
      throw NotSupportedError(fmt::format("{}.normalizer with a {} bucketizer (the values are discrete)", path,
                                          bucketizer.table_size_field()));
    }
    values_.normalizer = Normalizer::parse(c.normalizer(), path + ".normalizer");
  }
  values_.combiner = Combiner::kNone;  // each value the operator adds is a value of the row
  values_.bucketizer = bucketizer;
  if (numeric) {
    check_numeric_default(values_);
  } else {
    check_text_default(default_value, bucketizer, path);
  }
  std::string params = params_json(c, path);
  if (CustomOperator::is_official_library(operator_lib_file_)) {
    // Built-in operators also get the names of their inputs (SeqExpr's formula uses them).
    nlohmann::json p = nlohmann::json::parse(params);
    auto& names = p[kBuiltinInputNamesKey] = nlohmann::json::array();
    for (const std::string& e : c.expression()) names.push_back(e.substr(e.find(':') + 1));
    params = p.dump();
  }
  operator_ = std::make_shared<const CustomOperator>(operator_lib_file_, c.operator_name(), params,
                                                     c.is_op_thread_safe(), path);
}

std::vector<FeatureAsset> CustomFeature::assets() const {
  std::vector<FeatureAsset> out = vocab_file_assets(config_);
  // Built-in operators have no file to carry.
  if (!CustomOperator::is_official_library(operator_lib_file_)) out.push_back({"operator_lib_file", operator_lib_file_});
  return out;
}

void CustomFeature::parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const {
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : 0;
  MultiInputCells cells(batch, inputs_, "feature " + info_.name, sequence_delim_, max_items);
  // Text values are passed as views of the batch; other values as their text kept in `texts`.
  std::vector<ValueTexts> texts(inputs_.size());
  std::vector<std::vector<std::string_view>> args(inputs_.size());
  std::vector<CustomOperator::Value> results;
  std::string buf, error;
  const bool text = values_.bucketizer.is_text();
  emit_lookup_rows(
      info_, values_, &cells, /*map_per_item=*/false, out, [](int64_t, int64_t) {},
      [&](int64_t r, int64_t k, LookupValues* values) {
        for (size_t i = 0; i < inputs_.size(); ++i) {
          texts[i].clear();
          args[i].clear();
          cells.for_each_value(i, r, k, [&](const CellValue& v) { texts[i].append(v, &args[i]); });
        }
        results.clear();
        if (!operator_->evaluate(args, &results, &error)) {
          throw DataError(fmt::format("{}: operator {} of feature {} failed: {}", cells.where(0, r),
                                      config_.operator_name(), info_.name, error));
        }
        for (const CustomOperator::Value& v : results) {
          CellValue cell;
          if (v.is_text) {
            cell.text = v.text;
          } else {
            cell.kind = CellValue::Kind::kFloat;
            cell.d = v.number;
          }
          if (text) {
            values->add_text(as_text(cell, &buf), out.hash_kind, cells.cells(0), r);
          } else {
            values->add_number(cell, cells.cells(0), r);
          }
        }
      });
}

// TorchEasyRec's CustomFeature.fg_json (docs/tzrec-compatibility.md §5.3), which replaces
// BaseFeature.fg_json: operator_params merged into the entry (as MessageToDict), the bucketizer
// making the values "string" (zch with hash_bucket_size 2^63 - 1, hash, vocab) or "int64"
// (num_buckets), value_dim always, and for sequences feature_type kept, is_sequence, and
// (stand-alone) sequence_delim / sequence_length.
std::vector<nlohmann::ordered_json> CustomFeature::fg_json() const {
  const protos::CustomFeature& c = config_;
  nlohmann::ordered_json e;
  e["feature_type"] = "custom_feature";
  e["feature_name"] = c.feature_name();
  e["default_value"] = fg_default_value(c.default_value(), info_.is_sequence);
  e["operator_name"] = c.operator_name();
  e["operator_lib_file"] = operator_lib_file_;
  e["is_op_thread_safe"] = c.is_op_thread_safe();
  nlohmann::ordered_json expressions = nlohmann::ordered_json::array();
  for (const std::string& x : c.expression()) expressions.push_back(x);
  e["expression"] = std::move(expressions);
  e["value_type"] = "float";
  if (c.has_operator_params()) {
    const auto params = nlohmann::ordered_json::parse(params_json(c, field_path_));
    for (const auto& [key, value] : params.items()) e[key] = value;
  }
  if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
  if (c.has_normalizer()) e["normalizer"] = c.normalizer();
  const std::string default_value = e["default_value"];
  if (c.has_zch() || c.has_dynamicemb()) {
    e["hash_bucket_size"] = kZchHashBucketSize;
    e["value_type"] = "string";
  } else if (c.has_hash_bucket_size()) {
    e["hash_bucket_size"] = c.hash_bucket_size();
    e["value_type"] = "string";
  } else if (c.has_num_buckets()) {
    e["num_buckets"] = c.num_buckets();
    e["value_type"] = "int64";
  } else if (add_fg_vocab(c, default_value, &e)) {
    e["value_type"] = "string";
  } else if (c.boundaries_size() > 0) {
    e["boundaries"] = fg_float_list(c.boundaries(), field_path_ + ".boundaries");
  }
  e["value_dim"] = c.has_value_dim() ? c.value_dim() : 1u;
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  if (info_.is_sequence) {
    if (!info_.sequence_name.empty()) {
      add_fg_sequence_fields(c.sequence_fields(), info_, &e);
    } else {
      e["sequence_delim"] = sequence_delim_;
      e["sequence_length"] = info_.sequence_length;
    }
    e["is_sequence"] = true;
  }
  return {e};
}

}  // namespace tzrec::feature
