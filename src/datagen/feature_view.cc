#include "datagen/feature_view.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "base/error.h"
#include "config/feature_util.h"
#include "config/vocab_file.h"

namespace tzrec::datagen {

namespace pb = google::protobuf;

namespace {

const pb::FieldDescriptor* find_field(const pb::Message& m, const std::string& name) {
  return m.GetDescriptor()->FindFieldByName(name);
}

// Tokens of a vocab file (config/vocab_file.h); `rows` gets the table size.
std::vector<std::string> read_vocab_file(const FeatureContext& f, int64_t* rows) {
  const config::VocabFile file = config::read_vocab_file(
      config::vocab_file_path(string_field(*f.message, "vocab_file"), has_field(*f.message, "asset_dir"),
                              string_field(*f.message, "asset_dir")),
      field_path(f, "vocab_file"));
  std::vector<std::string> tokens;
  for (const auto& [token, id] : file.tokens) tokens.push_back(token);
  *rows = file.num_embeddings;
  return tokens;
}

}  // namespace

bool has_field(const pb::Message& m, const std::string& name) {
  const auto* fd = find_field(m, name);
  if (fd == nullptr) return false;
  const auto* r = m.GetReflection();
  return fd->is_repeated() ? r->FieldSize(m, fd) > 0 : r->HasField(m, fd);
}

std::string string_field(const pb::Message& m, const std::string& name) {
  const auto* fd = find_field(m, name);
  if (fd == nullptr || fd->is_repeated() || fd->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) {
    return "";
  }
  return m.GetReflection()->GetString(m, fd);
}

uint64_t uint_field(const pb::Message& m, const std::string& name) {
  const auto* fd = find_field(m, name);
  if (fd == nullptr || fd->is_repeated()) return 0;
  const auto* r = m.GetReflection();
  switch (fd->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return r->GetUInt32(m, fd);
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return r->GetUInt64(m, fd);
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return static_cast<uint64_t>(std::max(0, r->GetInt32(m, fd)));
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return static_cast<uint64_t>(std::max<int64_t>(0, r->GetInt64(m, fd)));
    default:
      return 0;
  }
}

bool bool_field(const pb::Message& m, const std::string& name) {
  const auto* fd = find_field(m, name);
  if (fd == nullptr || fd->is_repeated() || fd->cpp_type() != pb::FieldDescriptor::CPPTYPE_BOOL) {
    return false;
  }
  return m.GetReflection()->GetBool(m, fd);
}

std::vector<std::string> strings_field(const pb::Message& m, const std::string& name) {
  std::vector<std::string> out;
  const auto* fd = find_field(m, name);
  if (fd == nullptr || fd->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) return out;
  const auto* r = m.GetReflection();
  if (fd->is_repeated()) {
    for (int i = 0; i < r->FieldSize(m, fd); ++i) out.push_back(r->GetRepeatedString(m, fd, i));
  } else if (r->HasField(m, fd)) {
    out.push_back(r->GetString(m, fd));
  }
  return out;
}

std::vector<double> floats_field(const pb::Message& m, const std::string& name) {
  std::vector<double> out;
  const auto* fd = find_field(m, name);
  if (fd == nullptr || !fd->is_repeated()) return out;
  const auto* r = m.GetReflection();
  for (int i = 0; i < r->FieldSize(m, fd); ++i) {
    if (fd->cpp_type() == pb::FieldDescriptor::CPPTYPE_FLOAT) {
      out.push_back(r->GetRepeatedFloat(m, fd, i));
    } else if (fd->cpp_type() == pb::FieldDescriptor::CPPTYPE_DOUBLE) {
      out.push_back(r->GetRepeatedDouble(m, fd, i));
    }
  }
  return out;
}

std::vector<std::pair<std::string, double>> map_field(const pb::Message& m, const std::string& name) {
  std::vector<std::pair<std::string, double>> out;
  const auto* fd = find_field(m, name);
  if (fd == nullptr || !fd->is_map()) return out;
  const auto* r = m.GetReflection();
  for (int i = 0; i < r->FieldSize(m, fd); ++i) {
    const pb::Message& entry = r->GetRepeatedMessage(m, fd, i);
    const auto* key = entry.GetDescriptor()->FindFieldByName("key");
    const auto* value = entry.GetDescriptor()->FindFieldByName("value");
    const auto* er = entry.GetReflection();
    double v = 0.0;
    switch (value->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_UINT64:
        v = static_cast<double>(er->GetUInt64(entry, value));
        break;
      case pb::FieldDescriptor::CPPTYPE_FLOAT:
        v = er->GetFloat(entry, value);
        break;
      case pb::FieldDescriptor::CPPTYPE_DOUBLE:
        v = er->GetDouble(entry, value);
        break;
      default:
        break;
    }
    out.emplace_back(er->GetString(entry, key), v);
  }
  return out;
}

std::optional<uint64_t> sub_uint_field(const pb::Message& m, const std::string& sub,
                                       const std::string& name) {
  const auto* fd = find_field(m, sub);
  if (fd == nullptr || fd->is_repeated() || fd->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE ||
      !m.GetReflection()->HasField(m, fd)) {
    return std::nullopt;
  }
  const pb::Message& child = m.GetReflection()->GetMessage(m, fd);
  if (!has_field(child, name)) return std::nullopt;
  return uint_field(child, name);
}

std::string field_path(const FeatureContext& f, const std::string& field) { return f.path + "." + field; }

FeatureInput parse_input(const std::string& text, const std::string& field) {
  const auto colon = text.find(':');
  FeatureInput in;
  in.field = field;
  if (colon != std::string::npos) {
    in.side = text.substr(0, colon);
    in.name = text.substr(colon + 1);
  }
  static const std::vector<std::string> kSides = {"user", "item", "context", "feature", "const"};
  if (colon == std::string::npos || in.name.empty() ||
      std::find(kSides.begin(), kSides.end(), in.side) == kSides.end()) {
    throw ConfigError(fmt::format("{}: '{}' is not an input of the form side:name (side one of "
                                  "user, item, context, feature, const)",
                                  field, text));
  }
  return in;
}

std::vector<FeatureInput> inputs_of(const FeatureContext& f, const std::string& field) {
  std::vector<FeatureInput> out;
  const auto texts = strings_field(*f.message, field);
  const bool repeated = find_field(*f.message, field) != nullptr && find_field(*f.message, field)->is_repeated();
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string path = repeated ? fmt::format("{}[{}]", field_path(f, field), i) : field_path(f, field);
    out.push_back(parse_input(texts[i], path));
  }
  if (out.empty()) {
    throw ConfigError(fmt::format("{}: is not set; with fg_mode {} gen_data needs the input of "
                                  "the feature to name its column",
                                  field_path(f, field), protos::FgMode_Name(f.fg_mode)));
  }
  return out;
}

bool is_multi_value(const FeatureContext& f) {
  if (f.sequence) return false;
  if (has_field(*f.message, "value_dim")) return uint_field(*f.message, "value_dim") == 0;
  return has_field(*f.message, "pooling") || has_field(*f.message, "separator");
}

int value_dim_or(const FeatureContext& f, int default_value) {
  if (!has_field(*f.message, "value_dim")) return default_value;
  return static_cast<int>(uint_field(*f.message, "value_dim"));
}

bool reads_fg_output(const FeatureContext& f) {
  return f.fg_mode == protos::FG_NONE || f.fg_mode == protos::FG_BUCKETIZE;
}

std::string fg_encoded_column(const FeatureContext& f) {
  const std::string name = string_field(*f.message, "feature_name");
  if (name.empty()) {
    throw ConfigError(fmt::format("{}: is not set; it names the column of the feature",
                                  field_path(f, "feature_name")));
  }
  return config::grouped_sequence_name(f.sequence_name, name);
}

bool is_sequence_input(const FeatureContext& f, const FeatureInput& input, bool single_input_type) {
  if (!f.sequence) return false;
  const auto fields = strings_field(*f.message, "sequence_fields");
  if (!fields.empty()) return std::find(fields.begin(), fields.end(), input.name) != fields.end();
  if (single_input_type) return input.side != "feature";
  return input.side == "item";
}

namespace {

void apply_sequence(const FeatureContext& f, ColumnSpec* spec) {
  spec->sequence = true;
  spec->sequence_group = f.grouped ? f.sequence_name : f.path;
  spec->sequence_length = f.sequence_length;
  spec->sequence_delim = f.sequence_delim;
}

}  // namespace

std::optional<ColumnSpec> input_column(const FeatureContext& f, const FeatureInput& input,
                                       bool single_input_type) {
  if (f.fg_mode == protos::FG_DAG && (input.side == "feature" || input.side == "const")) {
    return std::nullopt;
  }
  ColumnSpec spec;
  spec.sources.push_back(input.field);
  if (is_sequence_input(f, input, single_input_type)) {
    spec.name = config::grouped_sequence_name(f.sequence_name, input.name);
    apply_sequence(f, &spec);
  } else {
    spec.name = input.name;
  }
  return spec;
}

ColumnSpec fg_encoded_sparse_column(const FeatureContext& f, int64_t num_ids, bool multi_value,
                                    bool weighted) {
  ColumnSpec spec;
  spec.name = fg_encoded_column(f);
  spec.sources.push_back(field_path(f, "feature_name"));
  spec.domain = Domain::ids(num_ids);
  if (f.fg_mode == protos::FG_BUCKETIZE && f.message->GetDescriptor()->name() != "TokenizeFeature") {
    // The values before bucketization: the tokens of a text bucketizer, numbers around the
    // boundaries (a tokenize feature's token ids are its FG output: no bucketizer).
    if (auto domain = raw_id_domain(f)) {
      spec.domain = *domain;
    } else if (has_field(*f.message, "boundaries")) {
      const auto b = floats_field(*f.message, "boundaries");
      const double span = b.back() - b.front();
      const double pad = span > 0 ? span / static_cast<double>(b.size()) : 1.0;
      spec.domain = Domain::floats(b.front() - pad, b.back() + pad);
    }
  }
  if (f.sequence) {
    apply_sequence(f, &spec);
    spec.layout = Layout::kScalar;
  } else if (weighted) {
    spec.layout = Layout::kWeighted;
    spec.delim = f.multival_sep;
    spec.min_values = 1;
    spec.max_values = 3;
  } else if (multi_value) {
    spec.layout = Layout::kList;
    spec.min_values = 1;
    spec.max_values = 3;
  }
  return spec;
}

ColumnSpec fg_encoded_dense_column(const FeatureContext& f, int dense_dim) {
  ColumnSpec spec;
  spec.name = fg_encoded_column(f);
  spec.sources.push_back(field_path(f, "feature_name"));
  spec.domain = Domain::floats(0.0, 1.0);
  dense_dim = std::max(dense_dim, 1);
  if (f.sequence) {
    apply_sequence(f, &spec);
    if (dense_dim > 1) {
      spec.layout = Layout::kJoined;
      spec.delim = f.multival_sep;
    }
  } else if (dense_dim > 1) {
    spec.layout = Layout::kList;
  }
  spec.min_values = spec.max_values = dense_dim;
  if (spec.layout == Layout::kScalar) spec.min_values = spec.max_values = 1;
  return spec;
}

std::optional<int64_t> bucketizer_rows(const FeatureContext& f) {
  const auto& m = *f.message;
  if (auto zch = sub_uint_field(m, "zch", "zch_size")) return static_cast<int64_t>(*zch);
  if (auto cap = sub_uint_field(m, "dynamicemb", "max_capacity")) return static_cast<int64_t>(*cap);
  if (has_field(m, "hash_bucket_size")) return static_cast<int64_t>(uint_field(m, "hash_bucket_size"));
  if (has_field(m, "num_buckets")) return static_cast<int64_t>(uint_field(m, "num_buckets"));
  if (has_field(m, "vocab_list")) {
    const int64_t n = static_cast<int64_t>(strings_field(m, "vocab_list").size());
    return has_field(m, "default_bucketize_value") ? n : n + 2;
  }
  if (has_field(m, "vocab_dict")) {
    double max_id = 0;
    for (const auto& [k, v] : map_field(m, "vocab_dict")) max_id = std::max(max_id, v);
    return static_cast<int64_t>(max_id) + 1;
  }
  if (has_field(m, "vocab_file")) {
    int64_t rows = 0;
    read_vocab_file(f, &rows);
    return rows;
  }
  if (has_field(m, "boundaries")) return static_cast<int64_t>(floats_field(m, "boundaries").size()) + 1;
  return std::nullopt;
}

int64_t require_bucketizer_rows(const FeatureContext& f) {
  auto rows = bucketizer_rows(f);
  if (!rows || *rows <= 0) {
    throw ConfigError(fmt::format(
        "{}: cannot infer the id range of the feature's column; set hash_bucket_size, "
        "num_buckets, vocab_list, vocab_dict, vocab_file or boundaries",
        f.path));
  }
  return *rows;
}

void set_value_layout(const FeatureContext& f, bool multi_value, bool weighted, ColumnSpec* spec) {
  if (spec->sequence) {
    spec->layout = Layout::kScalar;
  } else if (weighted) {
    spec->layout = Layout::kWeighted;
    spec->delim = separator_of(f);
    spec->min_values = 1;
    spec->max_values = 3;
  } else if (multi_value) {
    spec->layout = Layout::kList;
    spec->min_values = 1;
    spec->max_values = 3;
  } else {
    spec->layout = Layout::kScalar;
  }
}

std::string separator_of(const FeatureContext& f) {
  const auto* fd = find_field(*f.message, "separator");
  if (fd == nullptr) return "\x1d";
  return f.message->GetReflection()->GetString(*f.message, fd);
}

std::optional<Domain> raw_id_domain(const FeatureContext& f) {
  const auto& m = *f.message;
  if (has_field(m, "vocab_list")) return Domain::vocabulary(strings_field(m, "vocab_list"));
  if (has_field(m, "vocab_dict")) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : map_field(m, "vocab_dict")) keys.push_back(k);
    return Domain::vocabulary(std::move(keys));
  }
  if (has_field(m, "vocab_file")) {
    int64_t rows = 0;
    return Domain::vocabulary(read_vocab_file(f, &rows));
  }
  if (has_field(m, "num_buckets")) return Domain::ids(static_cast<int64_t>(uint_field(m, "num_buckets")));
  if (has_field(m, "hash_bucket_size")) {
    return Domain::ids(std::min<int64_t>(kHashedIdCardinality,
                                         static_cast<int64_t>(uint_field(m, "hash_bucket_size"))),
                       /*any_token=*/true);
  }
  if (has_field(m, "zch") || has_field(m, "dynamicemb")) {
    return Domain::ids(kHashedIdCardinality, /*any_token=*/true);
  }
  return std::nullopt;
}

namespace {

// "method=minmax,min=0,max=100" -> value of `key`, or nullopt.
std::optional<double> normalizer_param(const std::string& normalizer, const std::string& key) {
  std::istringstream in(normalizer);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || item.substr(0, eq) != key) continue;
    try {
      return std::stod(item.substr(eq + 1));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

Domain raw_number_domain(const FeatureContext& f) {
  const auto& m = *f.message;
  const auto boundaries = floats_field(m, "boundaries");
  if (!boundaries.empty()) {
    const double lo = *std::min_element(boundaries.begin(), boundaries.end());
    const double hi = *std::max_element(boundaries.begin(), boundaries.end());
    const double pad = std::max((hi - lo) * 0.15, 0.5);
    return Domain::floats(lo - pad, hi + pad);
  }
  const std::string normalizer = string_field(m, "normalizer");
  if (normalizer.find("method=minmax") != std::string::npos) {
    const double lo = normalizer_param(normalizer, "min").value_or(0.0);
    const double hi = normalizer_param(normalizer, "max").value_or(lo + 1.0);
    return Domain::floats(lo, hi > lo ? hi : lo + 1.0);
  }
  if (normalizer.find("method=log10") != std::string::npos) return Domain::positive_floats(1.0, 1.0);
  if (normalizer.find("method=zscore") != std::string::npos) {
    const double mean = normalizer_param(normalizer, "mean").value_or(0.0);
    const double sd = std::abs(normalizer_param(normalizer, "standard_deviation").value_or(1.0));
    return Domain::floats(mean - 1.7 * sd, mean + 1.7 * sd);
  }
  return Domain::floats(0.0, 1.0);
}

}  // namespace tzrec::datagen
