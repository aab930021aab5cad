// Columns of the text features: tokenize_feature (text split by a tokenizer), overlap_feature
// (query and title terms), kv_dot_product (two "key:value" lists) and custom_feature (the inputs
// of the operators whose inputs are known: texts for EditDistance and RegexReplace, numbers for
// SeqExpr).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "datagen/feature_columns.h"
#include "datagen/feature_view.h"

namespace tzrec::datagen {
namespace {

// Lexicon sizes of generated text: small, so that terms overlap between inputs and rows.
constexpr int64_t kTextWords = 200;
constexpr int64_t kTermWords = 40;

// Pieces of a SentencePiece model: the repeated field 1 (`pieces`) of its ModelProto, counted in
// the protobuf wire format; -1 when the bytes are not such a message.
int64_t sentencepiece_pieces(const std::string& bytes) {
  size_t i = 0;
  auto varint = [&](uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64 && i < bytes.size(); shift += 7) {
      const auto b = static_cast<unsigned char>(bytes[i++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  };
  int64_t pieces = 0;
  while (i < bytes.size()) {
    uint64_t tag = 0, len = 0;
    if (!varint(&tag)) return -1;
    switch (tag & 7) {
      case 0:
        if (!varint(&len)) return -1;
        break;
      case 1:
        i += 8;
        break;
      case 2:
        if (!varint(&len) || len > bytes.size() - i) return -1;
        i += len;
        if ((tag >> 3) == 1) ++pieces;
        break;
      case 5:
        i += 4;
        break;
      default:
        return -1;
    }
  }
  return i == bytes.size() ? pieces : -1;
}

// Vocabulary size of a tokenizer: a tokenizer JSON (a tokenizers "model.vocab" object or list,
// plus "added_tokens") or, for tokenizer_type "sentencepiece", a SentencePiece model (its pieces):
// the token ids of FG_NONE data are below it.
int64_t tokenizer_vocab_size(const FeatureContext& f) {
  std::string path = string_field(*f.message, "vocab_file");
  const std::string asset_dir = string_field(*f.message, "asset_dir");
  if (!asset_dir.empty()) path = (std::filesystem::path(asset_dir) / path).string();
  const std::string where = field_path(f, "vocab_file");
  if (string_field(*f.message, "tokenizer_type") == "sentencepiece") {
    std::ifstream model(path, std::ios::binary);
    if (path.empty() || !model) {
      throw ConfigError(fmt::format("{}: cannot read SentencePiece model '{}'; gen_data needs its vocabulary "
                                    "size for the token ids of fg_mode FG_NONE",
                                    where, path));
    }
    std::ostringstream bytes;
    bytes << model.rdbuf();
    const int64_t pieces = sentencepiece_pieces(bytes.str());
    if (pieces <= 0) {
      throw ConfigError(fmt::format("{}: '{}' is not a SentencePiece model with pieces", where, path));
    }
    return pieces;
  }
  std::ifstream in(path);
  if (path.empty() || !in) {
    throw ConfigError(fmt::format("{}: cannot read tokenizer '{}'; gen_data needs its vocabulary "
                                  "size for the token ids of fg_mode FG_NONE",
                                  where, path));
  }
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception&) {
    throw ConfigError(fmt::format("{}: '{}' is not a tokenizer JSON file; gen_data reads the "
                                  "vocabulary size of FG_NONE token ids from one",
                                  where, path));
  }
  int64_t size = 0;
  if (j.contains("model") && j["model"].contains("vocab")) {
    const auto& vocab = j["model"]["vocab"];
    if (vocab.is_object()) {
      for (const auto& item : vocab.items()) {
        if (item.value().is_number_integer()) size = std::max<int64_t>(size, item.value().get<int64_t>() + 1);
      }
    } else if (vocab.is_array()) {
      size = static_cast<int64_t>(vocab.size());
    }
  }
  if (j.contains("added_tokens") && j["added_tokens"].is_array()) {
    for (const auto& token : j["added_tokens"]) {
      if (token.contains("id") && token["id"].is_number_integer()) {
        size = std::max<int64_t>(size, token["id"].get<int64_t>() + 1);
      }
    }
  }
  if (size <= 0) {
    throw ConfigError(fmt::format("{}: tokenizer '{}' has no model.vocab", where, path));
  }
  return size;
}

ColumnSpec text_column(const FeatureContext& f, ColumnSpec spec, Layout layout, int64_t words,
                       const std::string& delim, int min_values, int max_values) {
  spec.domain = Domain::words(words);
  spec.layout = layout;
  spec.delim = delim;
  spec.min_values = min_values;
  spec.max_values = max_values;
  return spec;
}

class TokenizeFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& given, ColumnSink* out) const override {
    FeatureContext f = given;
    if (!f.sequence && bool_field(*f.message, "tokens_as_sequence")) {
      // Tokens of one text as a sequence (in FG_NONE the column holds the token-id sequence).
      f.sequence = reads_fg_output(f);
      f.sequence_length = static_cast<int>(uint_field(*f.message, "sequence_length"));
      f.sequence_delim = string_field(*f.message, "sequence_delim");
    }
    if (reads_fg_output(f)) {
      out->add(fg_encoded_sparse_column(f, tokenizer_vocab_size(f), /*multi_value=*/true));
      return;
    }
    for (const auto& input : inputs_of(f, "expression")) {
      auto spec = input_column(f, input, /*single_input_type=*/true);
      if (!spec) continue;
      out->add(text_column(f, std::move(*spec), Layout::kJoined, kTextWords, " ", 2, 10));
    }
  }
};

// overlap_feature (query and title terms) and kv_dot_product (query and document "key:value"
// lists): FG output, or two lists of terms from a small lexicon so that they overlap.
class TermPairColumns : public FeatureColumns {
 public:
  TermPairColumns(const char* second_field, Layout layout, int max_terms)
      : second_field_(second_field), layout_(layout), max_terms_(max_terms) {}

  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    if (reads_fg_output(f)) {
      out->add(has_field(*f.message, "boundaries")
                   ? fg_encoded_sparse_column(f, require_bucketizer_rows(f), false)
                   : fg_encoded_dense_column(f, 1));
      return;
    }
    for (const std::string field : {"query", second_field_}) {
      for (const auto& input : inputs_of(f, field)) {
        auto spec = input_column(f, input, /*single_input_type=*/false);
        if (!spec) continue;
        out->add(text_column(f, std::move(*spec), layout_, kTermWords, separator_of(f), 1, max_terms_));
      }
    }
  }

 private:
  const char* second_field_;
  Layout layout_;
  int max_terms_;
};

class CustomFeatureColumns : public FeatureColumns {
 public:
  void add_columns(const FeatureContext& f, ColumnSink* out) const override {
    if (reads_fg_output(f)) {
      const int value_dim = value_dim_or(f, 1);
      if (bucketizer_rows(f)) {
        out->add(fg_encoded_sparse_column(f, require_bucketizer_rows(f), value_dim == 0));
      } else {
        out->add(fg_encoded_dense_column(f, std::max(value_dim, 1)));
      }
      return;
    }
    const std::string op = string_field(*f.message, "operator_name");
    if (op != "EditDistance" && op != "RegexReplace" && op != "SeqExpr") {
      throw ConfigError(fmt::format(
          "{}: cannot infer the input columns of custom operator '{}' (gen_data knows "
          "EditDistance, RegexReplace and SeqExpr); use fg_mode FG_NONE or write its inputs yourself",
          field_path(f, "operator_name"), op));
    }
    for (const auto& input : inputs_of(f, "expression")) {
      auto spec = input_column(f, input, /*single_input_type=*/false);
      if (!spec) continue;
      if (op == "SeqExpr") {  // the formula's numbers (degrees for spherical_distance are fine too)
        spec->domain = Domain::floats(0.0, 1.0);
        out->add(std::move(*spec));
        continue;
      }
      out->add(text_column(f, std::move(*spec), Layout::kJoined, kTermWords, " ", 1, 4));
    }
  }
};

}  // namespace

const FeatureColumns& tokenize_feature_columns() {
  static const TokenizeFeatureColumns producer;
  return producer;
}

const FeatureColumns& overlap_feature_columns() {
  static const TermPairColumns producer("title", Layout::kJoined, 6);
  return producer;
}

const FeatureColumns& kv_dot_product_columns() {
  static const TermPairColumns producer("document", Layout::kWeighted, 5);
  return producer;
}

const FeatureColumns& custom_feature_columns() {
  static const CustomFeatureColumns producer;
  return producer;
}

}  // namespace tzrec::datagen
