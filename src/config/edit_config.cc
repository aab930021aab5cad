// --edit_config_json: TorchEasyRec's config_util.edit_config semantics, reimplemented on
// protobuf reflection.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"
#include "config/pipeline_config.h"

namespace tzrec::config {

namespace {

namespace pb = google::protobuf;
using FD = pb::FieldDescriptor;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.push_back(trim(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start)));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

// Python repr of a string: single quotes unless the text contains one and no double quote.
std::string python_repr(const std::string& s) {
  const char q = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == q || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back(q);
  return out;
}

// Python str() of a JSON value (TorchEasyRec stringifies every value before using it).
std::string python_str(const nlohmann::ordered_json& v, bool nested = false) {
  switch (v.type()) {
    case nlohmann::json::value_t::string:
      return nested ? python_repr(v.get<std::string>()) : v.get<std::string>();
    case nlohmann::json::value_t::boolean:
      return v.get<bool>() ? "True" : "False";
    case nlohmann::json::value_t::null:
      return "None";
    case nlohmann::json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + python_str(v[i], true);
      return out + "]";
    }
    case nlohmann::json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        out += (first ? "" : ", ") + python_repr(key) + ": " + python_str(value, true);
        first = false;
      }
      return out + "}";
    }
    default:
      return v.dump();  // numbers: shortest round-trip form, like Python
  }
}

// Splits a dotted path, keeping dots inside [...] (selectors may contain dotted paths).
std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> tokens;
  std::string cur;
  int depth = 0;
  for (char c : path) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == '.' && depth == 0) {
      if (!trim(cur).empty()) tokens.push_back(trim(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!trim(cur).empty()) tokens.push_back(trim(cur));
  return tokens;
}

class Editor {
 public:
  explicit Editor(std::string key) : key_(std::move(key)) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw ConfigError("edit_config_json '" + key_ + "': " + message);
  }

  bool parse_int(const std::string& s, long long* out) const {
    if (s.empty()) return false;
    errno = 0;
    char* end = nullptr;
    *out = std::strtoll(s.c_str(), &end, 10);
    return errno == 0 && *end == '\0';
  }

  bool parse_double(const std::string& s, double* out) const {
    if (s.empty()) return false;
    char* end = nullptr;
    *out = std::strtod(s.c_str(), &end);
    return *end == '\0';
  }

  const FD* find_field(const pb::Message& msg, const std::string& name) const {
    const FD* field = msg.GetDescriptor()->FindFieldByName(name);
    if (!field) fail(msg.GetDescriptor()->name() + " has no field '" + name + "'");
    return field;
  }

  // Field and index named by a selector's key path, read-only (nothing gets created).
  void resolve_const(const pb::Message& root, const std::string& path, const pb::Message** holder,
                     const FD** field, int* index) const {
    const auto tokens = split_path(path);
    if (tokens.empty()) fail("empty selector path");
    const pb::Message* msg = &root;
    for (size_t k = 0; k < tokens.size(); ++k) {
      std::string name = tokens[k];
      int idx = -1;
      bool has_index = false;
      if (size_t br = name.find('['); br != std::string::npos) {
        long long v;
        if (name.back() != ']' || !parse_int(trim(name.substr(br + 1, name.size() - br - 2)), &v)) {
          fail("bad selector path '" + path + "'");
        }
        idx = static_cast<int>(v);
        has_index = true;
        name = trim(name.substr(0, br));
      }
      const FD* fd = find_field(*msg, name);
      const auto* refl = msg->GetReflection();
      if (has_index) {
        if (!fd->is_repeated()) fail("'" + name + "' is not a repeated field");
        const int size = refl->FieldSize(*msg, fd);
        if (idx < 0) idx += size;
        if (idx < 0 || idx >= size) {
          *holder = nullptr;  // out of range: no value, never matches
          return;
        }
      } else if (fd->is_repeated()) {
        fail("selector path '" + path + "' needs an index for repeated field '" + name + "'");
      }
      if (k + 1 == tokens.size()) {
        if (fd->cpp_type() == FD::CPPTYPE_MESSAGE) fail("selector '" + path + "' names a message");
        *holder = msg;
        *field = fd;
        *index = idx;
        return;
      }
      if (fd->cpp_type() != FD::CPPTYPE_MESSAGE) fail("'" + name + "' is not a message field");
      msg = idx >= 0 ? &refl->GetRepeatedMessage(*msg, fd, idx) : &refl->GetMessage(*msg, fd);
    }
  }

  // Does element `elem` satisfy "<path><op><value>"?
  bool matches(const pb::Message& elem, const std::string& cond) const {
    static const char* kOps[] = {">=", "<=", ">", "<", "="};
    for (const char* op : kOps) {
      size_t pos = cond.rfind(op);
      if (pos == std::string::npos) continue;
      const std::string path = trim(cond.substr(0, pos));
      const std::string want = trim(cond.substr(pos + std::string(op).size()));
      const pb::Message* holder = nullptr;
      const FD* fd = nullptr;
      int idx = -1;
      resolve_const(elem, path, &holder, &fd, &idx);
      if (!holder) return false;
      int c = compare(*holder, fd, idx, want);
      const std::string o(op);
      if (o == ">=") return c >= 0;
      if (o == "<=") return c <= 0;
      if (o == ">") return c > 0;
      if (o == "<") return c < 0;
      return c == 0;
    }
    fail("invalid selector '" + cond + "'");
  }

  // Three-way comparison of a field value with `want` converted to the field type.
  int compare(const pb::Message& msg, const FD* fd, int idx, const std::string& want) const {
    const auto* refl = msg.GetReflection();
    const bool rep = idx >= 0;
    auto sign = [](auto a, auto b) { return a < b ? -1 : (b < a ? 1 : 0); };
    switch (fd->cpp_type()) {
      case FD::CPPTYPE_STRING: {
        std::string have = rep ? refl->GetRepeatedString(msg, fd, idx) : refl->GetString(msg, fd);
        return sign(have, want);
      }
      case FD::CPPTYPE_BOOL: {
        bool have = rep ? refl->GetRepeatedBool(msg, fd, idx) : refl->GetBool(msg, fd);
        return sign(have, to_bool(want));
      }
      case FD::CPPTYPE_ENUM: {
        int have = rep ? refl->GetRepeatedEnumValue(msg, fd, idx) : refl->GetEnumValue(msg, fd);
        return sign(have, to_enum(fd, want));
      }
      default: {
        long double have = 0;
        switch (fd->cpp_type()) {
          case FD::CPPTYPE_INT32: have = rep ? refl->GetRepeatedInt32(msg, fd, idx) : refl->GetInt32(msg, fd); break;
          case FD::CPPTYPE_INT64: have = rep ? refl->GetRepeatedInt64(msg, fd, idx) : refl->GetInt64(msg, fd); break;
          case FD::CPPTYPE_UINT32: have = rep ? refl->GetRepeatedUInt32(msg, fd, idx) : refl->GetUInt32(msg, fd); break;
          case FD::CPPTYPE_UINT64: have = rep ? refl->GetRepeatedUInt64(msg, fd, idx) : refl->GetUInt64(msg, fd); break;
          case FD::CPPTYPE_FLOAT: have = rep ? refl->GetRepeatedFloat(msg, fd, idx) : refl->GetFloat(msg, fd); break;
          default: have = rep ? refl->GetRepeatedDouble(msg, fd, idx) : refl->GetDouble(msg, fd); break;
        }
        double w = 0;
        long long wi = 0;
        const bool is_float = fd->cpp_type() == FD::CPPTYPE_FLOAT || fd->cpp_type() == FD::CPPTYPE_DOUBLE;
        if (is_float ? !parse_double(want, &w) : !parse_int(want, &wi)) {
          fail("cannot compare field '" + fd->name() + "' with '" + want + "'");
        }
        // Floats are compared in the field's own precision (0.1f == "0.1").
        if (fd->cpp_type() == FD::CPPTYPE_FLOAT) return sign(static_cast<float>(have), static_cast<float>(w));
        return sign(have, is_float ? static_cast<long double>(w) : static_cast<long double>(wi));
      }
    }
  }

  bool to_bool(const std::string& v) const {
    if (v == "True" || v == "true") return true;
    if (v == "False" || v == "false") return false;
    fail("'" + v + "' is not a bool (True, true, False, false)");
  }

  int to_enum(const FD* fd, const std::string& v) const {
    if (const auto* ev = fd->enum_type()->FindValueByName(v)) return ev->number();
    long long n;
    if (parse_int(v, &n) && fd->enum_type()->FindValueByNumber(static_cast<int>(n))) {
      return static_cast<int>(n);
    }
    fail("'" + v + "' is not a value of enum " + fd->enum_type()->name());
  }

  template <typename T>
  T to_int(const FD* fd, const std::string& v) const {
    long long n;
    bool ok = parse_int(v, &n);
    if (ok && std::is_unsigned<T>::value && n < 0) ok = false;
    if (ok && (static_cast<long double>(n) > static_cast<long double>(std::numeric_limits<T>::max()) ||
               static_cast<long double>(n) < static_cast<long double>(std::numeric_limits<T>::lowest()))) {
      ok = false;
    }
    if (!ok) fail("'" + v + "' is not a valid value for " + fd->type_name() + " field '" + fd->name() + "'");
    return static_cast<T>(n);
  }

  double to_double(const FD* fd, const std::string& v) const {
    double d;
    if (!parse_double(v, &d)) fail("'" + v + "' is not a number for field '" + fd->name() + "'");
    return d;
  }

  // Sets one scalar (a singular field, or element `idx` of a repeated one).
  void set_scalar(pb::Message* msg, const FD* fd, int idx, const std::string& v) const {
    const auto* r = msg->GetReflection();
    const bool rep = idx >= 0;
    switch (fd->cpp_type()) {
      case FD::CPPTYPE_STRING: rep ? r->SetRepeatedString(msg, fd, idx, v) : r->SetString(msg, fd, v); break;
      case FD::CPPTYPE_BOOL: rep ? r->SetRepeatedBool(msg, fd, idx, to_bool(v)) : r->SetBool(msg, fd, to_bool(v)); break;
      case FD::CPPTYPE_ENUM: rep ? r->SetRepeatedEnumValue(msg, fd, idx, to_enum(fd, v)) : r->SetEnumValue(msg, fd, to_enum(fd, v)); break;
      case FD::CPPTYPE_INT32: rep ? r->SetRepeatedInt32(msg, fd, idx, to_int<int32_t>(fd, v)) : r->SetInt32(msg, fd, to_int<int32_t>(fd, v)); break;
      case FD::CPPTYPE_INT64: rep ? r->SetRepeatedInt64(msg, fd, idx, to_int<int64_t>(fd, v)) : r->SetInt64(msg, fd, to_int<int64_t>(fd, v)); break;
      case FD::CPPTYPE_UINT32: rep ? r->SetRepeatedUInt32(msg, fd, idx, to_int<uint32_t>(fd, v)) : r->SetUInt32(msg, fd, to_int<uint32_t>(fd, v)); break;
      case FD::CPPTYPE_UINT64: rep ? r->SetRepeatedUInt64(msg, fd, idx, to_int<uint64_t>(fd, v)) : r->SetUInt64(msg, fd, to_int<uint64_t>(fd, v)); break;
      case FD::CPPTYPE_FLOAT: rep ? r->SetRepeatedFloat(msg, fd, idx, static_cast<float>(to_double(fd, v))) : r->SetFloat(msg, fd, static_cast<float>(to_double(fd, v))); break;
      case FD::CPPTYPE_DOUBLE: rep ? r->SetRepeatedDouble(msg, fd, idx, to_double(fd, v)) : r->SetDouble(msg, fd, to_double(fd, v)); break;
      case FD::CPPTYPE_MESSAGE: break;
    }
  }

  // Merges text-format `text` into `msg` (fields already cleared by the caller).
  void parse_into(pb::Message* msg, const std::string& text) const {
    class Collector : public pb::io::ErrorCollector {
     public:
      void AddError(int line, pb::io::ColumnNumber col, const std::string& m) override {
        if (error.empty()) error = std::to_string(line + 1) + ":" + std::to_string(col + 1) + ": " + m;
      }
      std::string error;
    } errors;
    pb::TextFormat::Parser parser;
    parser.AllowPartialMessage(true);
    parser.RecordErrorsTo(&errors);
    if (!parser.MergeFromString(text, msg)) {
      fail("cannot parse '" + text + "' as text format for " + msg->GetDescriptor()->name() + ": " +
           errors.error);
    }
  }

  void assign(pb::Message* msg, const FD* fd, int idx, const std::string& value) const {
    const auto* r = msg->GetReflection();
    if (fd->cpp_type() != FD::CPPTYPE_MESSAGE) {
      if (fd->is_repeated() && idx < 0) {
        r->ClearField(msg, fd);
        parse_into(msg, fd->name() + ": " + value);
      } else {
        set_scalar(msg, fd, idx, value);
      }
      return;
    }
    if (fd->is_repeated() && idx < 0) {
      r->ClearField(msg, fd);
      const std::string v = trim(value);
      if (!v.empty() && v.front() == '[') {
        parse_into(msg, fd->name() + ": " + v);
      } else if (!v.empty() && v.front() == '{') {
        parse_into(msg, fd->name() + " " + v);
      } else {
        parse_into(msg, fd->name() + " {" + v + "}");
      }
      return;
    }
    pb::Message* sub = idx >= 0 ? r->MutableRepeatedMessage(msg, fd, idx) : r->MutableMessage(msg, fd);
    sub->Clear();
    std::string v = trim(value);
    if (v.size() >= 2 && v.front() == '{' && v.back() == '}') v = v.substr(1, v.size() - 2);
    parse_into(sub, v);
  }

  // Indices of repeated `fd` in `msg` selected by `cond` (":", "a:b", "i" or a selector).
  std::vector<int> select(const pb::Message& msg, const FD* fd, const std::string& cond) const {
    const int size = msg.GetReflection()->FieldSize(msg, fd);
    std::vector<int> out;
    long long n;
    if (cond.find(':') != std::string::npos &&
        cond.find_first_of("=<>") == std::string::npos) {
      const size_t colon = cond.find(':');
      const std::string a = trim(cond.substr(0, colon)), b = trim(cond.substr(colon + 1));
      long long lo = 0, hi = size;
      if (!a.empty() && !parse_int(a, &lo)) fail("bad slice '[" + cond + "]'");
      if (!b.empty() && !parse_int(b, &hi)) fail("bad slice '[" + cond + "]'");
      auto clamp = [size](long long x) { return std::max(0LL, std::min<long long>(size, x < 0 ? x + size : x)); };
      for (long long i = clamp(lo); i < clamp(hi); ++i) out.push_back(static_cast<int>(i));
    } else if (parse_int(trim(cond), &n)) {
      if (n < 0) n += size;
      if (n < 0 || n >= size) {
        fail("index [" + cond + "] out of range, '" + fd->name() + "' has " + std::to_string(size) + " entries");
      }
      out.push_back(static_cast<int>(n));
    } else {
      if (fd->cpp_type() != FD::CPPTYPE_MESSAGE) fail("selector [" + cond + "] needs a repeated message field");
      for (int i = 0; i < size; ++i) {
        if (matches(msg.GetReflection()->GetRepeatedMessage(msg, fd, i), cond)) out.push_back(i);
      }
      if (out.empty()) log::warning("edit_config_json '{}': [{}] matched no entry", key_, cond);
    }
    return out;
  }

  void apply(pb::Message* root, const std::string& value) const {
    const auto tokens = split_path(key_);
    if (tokens.empty()) fail("empty path");
    std::vector<pb::Message*> current = {root};
    for (size_t k = 0; k < tokens.size(); ++k) {
      const bool last = k + 1 == tokens.size();
      std::string name = tokens[k];
      std::string cond;
      bool has_cond = false;
      if (size_t br = name.find('['); br != std::string::npos) {
        if (name.back() != ']') fail("missing ']' in '" + name + "'");
        cond = name.substr(br + 1, name.size() - br - 2);
        name = trim(name.substr(0, br));
        has_cond = true;
      }
      std::vector<pb::Message*> next;
      for (pb::Message* msg : current) {
        const FD* fd = find_field(*msg, name);
        const auto* r = msg->GetReflection();
        if (!has_cond) {
          if (last) {
            assign(msg, fd, -1, value);
          } else if (fd->cpp_type() == FD::CPPTYPE_MESSAGE && !fd->is_repeated()) {
            next.push_back(r->MutableMessage(msg, fd));
          } else {
            fail("'" + name + "' is not a message field" +
                 (fd->is_repeated() ? " (select entries with [i], [:] or [a:b])" : ""));
          }
          continue;
        }
        if (!fd->is_repeated()) fail("'" + name + "' is not a repeated field");
        for (int i : select(*msg, fd, cond)) {
          if (last) {
            assign(msg, fd, i, value);
          } else if (fd->cpp_type() == FD::CPPTYPE_MESSAGE) {
            next.push_back(r->MutableRepeatedMessage(msg, fd, i));
          } else {
            fail("'" + name + "' is not a message field");
          }
        }
      }
      current = std::move(next);
    }
  }

 private:
  std::string key_;
};

}  // namespace

void edit_config(protos::EasyRecConfig* config, const std::string& edit_json) {
  nlohmann::ordered_json edits;
  try {
    edits = nlohmann::ordered_json::parse(edit_json);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(std::string("edit_config_json: invalid JSON: ") + e.what());
  }
  if (!edits.is_object()) {
    throw ConfigError("edit_config_json must be a JSON object of \"path\": value");
  }
  for (const auto& [joined_keys, raw_value] : edits.items()) {
    // Keys and values may each hold several ';'-joined entries, used pairwise.
    const auto keys = split(joined_keys, ';');
    const auto values = split(python_str(raw_value), ';');
    if (keys.size() != values.size()) {
      log::warning("edit_config_json '{}': {} keys but {} values, using the first {}", joined_keys,
                   keys.size(), values.size(), std::min(keys.size(), values.size()));
    }
    for (size_t i = 0; i < std::min(keys.size(), values.size()); ++i) {
      Editor(keys[i]).apply(config, values[i]);
    }
  }
}

}  // namespace tzrec::config
