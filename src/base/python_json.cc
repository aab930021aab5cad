#include "base/python_json.h"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "base/error.h"
#include "base/python_float.h"

namespace tzrec {
namespace {

void append_float(double v, std::string* out) {
  if (std::isnan(v)) {
    *out += "NaN";
  } else if (std::isinf(v)) {
    *out += v > 0 ? "Infinity" : "-Infinity";
  } else {
    *out += python_float_repr(v);
  }
}

void append_string(const std::string& s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
    uint32_t cp = len == 1 ? lead : len == 2 ? (lead & 0x1f) : len == 3 ? (lead & 0x0f) : (lead & 0x07);
    bool valid = len > 0 && i + len <= s.size();
    for (size_t j = 1; valid && j < len; ++j) {
      const auto c = static_cast<unsigned char>(s[i + j]);
      valid = (c >> 6) == 0x2;
      cp = (cp << 6) | (c & 0x3f);
    }
    const uint32_t least = len == 2 ? 0x80 : len == 3 ? 0x800 : len == 4 ? 0x10000 : 0;  // no overlong forms
    if (!valid || cp < least || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      throw DataError(fmt::format("the string \"{}\" is not valid UTF-8 (byte {})", s, i));
    }
    i += len;
    switch (cp) {
      case '"': *out += "\\\""; continue;
      case '\\': *out += "\\\\"; continue;
      case '\b': *out += "\\b"; continue;
      case '\f': *out += "\\f"; continue;
      case '\n': *out += "\\n"; continue;
      case '\r': *out += "\\r"; continue;
      case '\t': *out += "\\t"; continue;
      default: break;
    }
    if (cp >= 0x20 && cp <= 0x7e) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x10000) {
      *out += fmt::format("\\u{:04x}", cp);
    } else {
      const uint32_t v = cp - 0x10000;
      *out += fmt::format("\\u{:04x}\\u{:04x}", 0xd800 | (v >> 10), 0xdc00 | (v & 0x3ff));
    }
  }
  out->push_back('"');
}

void append_json(const nlohmann::ordered_json& v, int indent, int level, std::string* out) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
    case nlohmann::json::value_t::array: {
      const bool object = v.is_object();
      if (v.empty()) {
        *out += object ? "{}" : "[]";
        return;
      }
      out->push_back(object ? '{' : '[');
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        *out += first ? "\n" : ",\n";
        first = false;
        out->append(static_cast<size_t>(indent * (level + 1)), ' ');
        if (object) {
          append_string(it.key(), out);
          *out += ": ";
        }
        append_json(*it, indent, level + 1, out);
      }
      out->push_back('\n');
      out->append(static_cast<size_t>(indent * level), ' ');
      out->push_back(object ? '}' : ']');
      return;
    }
    case nlohmann::json::value_t::string:
      append_string(v.get_ref<const std::string&>(), out);
      return;
    case nlohmann::json::value_t::boolean:
      *out += v.get<bool>() ? "true" : "false";
      return;
    case nlohmann::json::value_t::number_integer:
      *out += std::to_string(v.get<int64_t>());
      return;
    case nlohmann::json::value_t::number_unsigned:
      *out += std::to_string(v.get<uint64_t>());
      return;
    case nlohmann::json::value_t::number_float:
      append_float(v.get<double>(), out);
      return;
    default:  // null (and discarded values, which a built document does not hold)
      *out += "null";
      return;
  }
}

}  // namespace

std::string python_json_dumps(const nlohmann::ordered_json& doc, int indent) {
  std::string out;
  append_json(doc, indent, 0, &out);
  return out;
}

}  // namespace tzrec
