#include "data/input_fields.h"

#include <cctype>
#include <map>

#include "base/error.h"
#include "base/text.h"

namespace tzrec::data {
namespace {

// "ARRAY_ARRAY_INT64" → "ARRAY<ARRAY<INT64>>", "MAP_STRING_FLOAT" → "MAP<STRING,FLOAT>": the text
// form of every FieldType value.
std::string text_form(const std::string& enum_name) {
  if (enum_name.rfind("ARRAY_", 0) == 0) return "ARRAY<" + text_form(enum_name.substr(6)) + ">";
  if (enum_name.rfind("MAP_", 0) == 0) {
    const std::string kv = enum_name.substr(4);
    const size_t sep = kv.find('_');
    return "MAP<" + kv.substr(0, sep) + "," + kv.substr(sep + 1) + ">";
  }
  return enum_name;
}

const std::map<std::string, std::string>& field_types_by_text() {
  static const std::map<std::string, std::string> types = [] {
    std::map<std::string, std::string> out;
    const auto* d = protos::FieldType_descriptor();
    for (int i = 0; i < d->value_count(); ++i) out.emplace(text_form(d->value(i)->name()), d->value(i)->name());
    return out;
  }();
  return types;
}

std::string supported_types() {
  std::string out;
  for (const auto& [text, name] : field_types_by_text()) out += (out.empty() ? "" : ", ") + text;
  return out;
}

}  // namespace

std::string field_type_of(const std::string& type_text) {
  // Upper case without spaces; then the whole words BIGINT and INT renamed.
  std::string upper;
  for (char c : type_text) {
    if (!std::isspace(static_cast<unsigned char>(c))) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  std::string normalized;
  for (size_t i = 0; i < upper.size();) {
    size_t j = i;
    while (j < upper.size() && (std::isalnum(static_cast<unsigned char>(upper[j])) || upper[j] == '_')) ++j;
    if (j == i) {
      normalized += upper[i++];
      continue;
    }
    const std::string word = upper.substr(i, j - i);
    normalized += word == "BIGINT" ? "INT64" : word == "INT" ? "INT32" : word;
    i = j;
  }
  const auto& types = field_types_by_text();
  const auto it = types.find(normalized);
  return it == types.end() ? std::string() : it->second;
}

std::vector<InputField> input_fields(const protos::DataConfig& dc) {
  std::vector<InputField> out;
  if (dc.has_input_fields_str() && !dc.input_fields_str().empty()) {
    const std::string& s = dc.input_fields_str();
    size_t start = 0;
    while (start < s.size()) {
      size_t semi = s.find(';', start);
      if (semi == std::string::npos) semi = s.size();
      const std::string item = trim(s.substr(start, semi - start));
      start = semi + 1;
      if (item.empty()) continue;
      const std::string where = fmt::format("data_config.input_fields_str: '{}'", item);
      const size_t colon = item.find(':');
      if (colon == std::string::npos) {
        throw ConfigError(where + ": expected 'field_name:field_type' (items are joined by ';')");
      }
      InputField f{trim(item.substr(0, colon)), trim(item.substr(colon + 1))};
      if (f.name.empty()) throw ConfigError(where + ": empty field name");
      if (f.type.empty()) throw ConfigError(where + ": empty field type");
      const std::string type = field_type_of(f.type);
      if (type.empty()) {
        throw ConfigError(fmt::format("{}: unknown field type '{}'; the types are {} (BIGINT for INT64 and INT "
                                      "for INT32 too, in any case)",
                                      where, f.type, supported_types()));
      }
      f.type = type;
      out.push_back(std::move(f));
    }
    return out;
  }
  for (const auto& f : dc.input_fields()) {
    out.push_back(InputField{f.input_name(), f.has_input_type() ? protos::FieldType_Name(f.input_type()) : ""});
  }
  return out;
}

}  // namespace tzrec::data
