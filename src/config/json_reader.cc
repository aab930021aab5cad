#include "config/json_reader.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace tzrec::config::detail {

namespace {

namespace pb = google::protobuf;
using FD = pb::FieldDescriptor;
using Json = nlohmann::json;

// 1-based line:column of byte `offset`.
std::string line_column(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

class Reader {
 public:
  Reader(const std::string& text, const std::string& source) : text_(text), source_(source) {}

  [[noreturn]] void fail(const std::vector<std::string>& keys, const std::string& path,
                         const std::string& message) const {
    // Locate the offending key: follow the object keys of the path in document order.
    size_t pos = 0;
    bool found = !keys.empty();
    for (const auto& key : keys) {
      size_t next = text_.find("\"" + key + "\"", pos);
      if (next == std::string::npos) {
        found = false;
        break;
      }
      pos = next;
    }
    const std::string where = found ? ":" + line_column(text_, pos) : "";
    throw ConfigError(source_ + where + ": " + (path.empty() ? "" : path + ": ") + message);
  }

  void read_message(const Json& j, pb::Message* msg, std::vector<std::string>* keys,
                    const std::string& path) const {
    if (!j.is_object()) fail(*keys, path, "expected a JSON object for " + msg->GetDescriptor()->full_name());
    const auto* desc = msg->GetDescriptor();
    if (desc->well_known_type() != pb::Descriptor::WELLKNOWNTYPE_UNSPECIFIED) {
      auto status = pb::util::JsonStringToMessage(j.dump(), msg);
      if (!status.ok()) fail(*keys, path, std::string(status.message()));
      return;
    }
    for (const auto& [key, value] : j.items()) {
      keys->push_back(key);
      const std::string fpath = path.empty() ? key : path + "." + key;
      const FD* fd = desc->FindFieldByName(key);
      for (int i = 0; !fd && i < desc->field_count(); ++i) {
        if (desc->field(i)->json_name() == key) fd = desc->field(i);
      }
      if (!fd) fail(*keys, fpath, "message " + desc->full_name() + " has no field named \"" + key + "\"");
      if (!value.is_null()) {
        if (const auto* oneof = fd->containing_oneof()) {
          const FD* current = msg->GetReflection()->GetOneofFieldDescriptor(*msg, oneof);
          if (current && current != fd) {
            fail(*keys, fpath, "oneof '" + oneof->name() + "' already has field '" + current->name() + "'");
          }
        }
        read_field(value, msg, fd, keys, fpath);
      }
      keys->pop_back();
    }
  }

  void read_field(const Json& j, pb::Message* msg, const FD* fd, std::vector<std::string>* keys,
                  const std::string& path) const {
    const auto* r = msg->GetReflection();
    if (fd->is_map()) {
      if (!j.is_object()) fail(*keys, path, "expected a JSON object for map field");
      const auto* entry_desc = fd->message_type();
      for (const auto& [k, v] : j.items()) {
        pb::Message* entry = r->AddMessage(msg, fd);
        set_scalar(Json(k), entry, entry_desc->map_key(), keys, path + "[" + k + "]", /*key=*/true);
        const FD* value_fd = entry_desc->map_value();
        if (value_fd->cpp_type() == FD::CPPTYPE_MESSAGE) {
          read_message(v, entry->GetReflection()->MutableMessage(entry, value_fd), keys, path + "[" + k + "]");
        } else {
          set_scalar(v, entry, value_fd, keys, path + "[" + k + "]");
        }
      }
      return;
    }
    if (fd->is_repeated()) {
      if (!j.is_array()) fail(*keys, path, "expected a JSON array for repeated field");
      for (size_t i = 0; i < j.size(); ++i) {
        const std::string ipath = path + "[" + std::to_string(i) + "]";
        if (fd->cpp_type() == FD::CPPTYPE_MESSAGE) {
          read_message(j[i], r->AddMessage(msg, fd), keys, ipath);
        } else {
          set_scalar(j[i], msg, fd, keys, ipath);
        }
      }
      return;
    }
    if (fd->cpp_type() == FD::CPPTYPE_MESSAGE) {
      read_message(j, r->MutableMessage(msg, fd), keys, path);
    } else {
      set_scalar(j, msg, fd, keys, path);
    }
  }

  template <typename T>
  T to_int(const Json& j, const std::vector<std::string>& keys, const std::string& path) const {
    long double v = 0;
    if (j.is_number_integer() || j.is_number_unsigned()) {
      v = j.is_number_unsigned() ? static_cast<long double>(j.get<uint64_t>())
                                 : static_cast<long double>(j.get<int64_t>());
      if (j.is_number_unsigned() && std::is_same<T, uint64_t>::value) return static_cast<T>(j.get<uint64_t>());
      if (!j.is_number_unsigned() && std::is_same<T, int64_t>::value) return static_cast<T>(j.get<int64_t>());
    } else if (j.is_number_float()) {
      const double d = j.get<double>();
      if (std::trunc(d) != d) fail(keys, path, "expected an integer, got " + j.dump());
      v = d;
    } else if (j.is_string()) {
      const std::string s = j.get<std::string>();
      errno = 0;
      char* end = nullptr;
      if (std::is_unsigned<T>::value) {
        if (!s.empty() && s[0] == '-') fail(keys, path, "expected a non-negative integer, got \"" + s + "\"");
        const unsigned long long u = std::strtoull(s.c_str(), &end, 10);
        if (s.empty() || *end || errno) fail(keys, path, "expected an integer, got \"" + s + "\"");
        v = u;
        if (std::is_same<T, uint64_t>::value) return static_cast<T>(u);
      } else {
        const long long n = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || *end || errno) fail(keys, path, "expected an integer, got \"" + s + "\"");
        v = n;
        if (std::is_same<T, int64_t>::value) return static_cast<T>(n);
      }
    } else {
      fail(keys, path, "expected an integer, got " + j.dump());
    }
    if (v < static_cast<long double>(std::numeric_limits<T>::lowest()) ||
        v > static_cast<long double>(std::numeric_limits<T>::max())) {
      fail(keys, path, "integer out of range: " + j.dump());
    }
    return static_cast<T>(v);
  }

  double to_double(const Json& j, const std::vector<std::string>& keys, const std::string& path) const {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
      const std::string s = j.get<std::string>();
      if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
      if (s == "Infinity") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
      char* end = nullptr;
      const double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && !*end) return d;
    }
    fail(keys, path, "expected a number, got " + j.dump());
  }

  void set_scalar(const Json& j, pb::Message* msg, const FD* fd, const std::vector<std::string>* keys,
                  const std::string& path, bool map_key = false) const {
    const auto* r = msg->GetReflection();
    const bool rep = fd->is_repeated();
    const auto& k = *keys;
    switch (fd->cpp_type()) {
      case FD::CPPTYPE_INT32: {
        auto v = to_int<int32_t>(j, k, path);
        rep ? r->AddInt32(msg, fd, v) : r->SetInt32(msg, fd, v);
        break;
      }
      case FD::CPPTYPE_INT64: {
        auto v = to_int<int64_t>(j, k, path);
        rep ? r->AddInt64(msg, fd, v) : r->SetInt64(msg, fd, v);
        break;
      }
      case FD::CPPTYPE_UINT32: {
        auto v = to_int<uint32_t>(j, k, path);
        rep ? r->AddUInt32(msg, fd, v) : r->SetUInt32(msg, fd, v);
        break;
      }
      case FD::CPPTYPE_UINT64: {
        auto v = to_int<uint64_t>(j, k, path);
        rep ? r->AddUInt64(msg, fd, v) : r->SetUInt64(msg, fd, v);
        break;
      }
      case FD::CPPTYPE_FLOAT: {
        auto v = static_cast<float>(to_double(j, k, path));
        rep ? r->AddFloat(msg, fd, v) : r->SetFloat(msg, fd, v);
        break;
      }
      case FD::CPPTYPE_DOUBLE: {
        auto v = to_double(j, k, path);
        rep ? r->AddDouble(msg, fd, v) : r->SetDouble(msg, fd, v);
        break;
      }
      case FD::CPPTYPE_BOOL: {
        bool v;
        if (j.is_boolean()) {
          v = j.get<bool>();
        } else if (map_key && j.is_string() && (j == "true" || j == "false")) {
          v = j == "true";
        } else {
          fail(k, path, "expected true or false, got " + j.dump());
        }
        rep ? r->AddBool(msg, fd, v) : r->SetBool(msg, fd, v);
        break;
      }
      case FD::CPPTYPE_STRING: {
        if (!j.is_string()) fail(k, path, "expected a string, got " + j.dump());
        rep ? r->AddString(msg, fd, j.get<std::string>()) : r->SetString(msg, fd, j.get<std::string>());
        break;
      }
      case FD::CPPTYPE_ENUM: {
        const pb::EnumValueDescriptor* ev = nullptr;
        if (j.is_string()) {
          ev = fd->enum_type()->FindValueByName(j.get<std::string>());
        } else if (j.is_number_integer() || j.is_number_unsigned()) {
          ev = fd->enum_type()->FindValueByNumber(j.get<int>());
        }
        if (!ev) fail(k, path, "invalid value " + j.dump() + " for enum " + fd->enum_type()->full_name());
        rep ? r->AddEnum(msg, fd, ev) : r->SetEnum(msg, fd, ev);
        break;
      }
      case FD::CPPTYPE_MESSAGE:
        break;
    }
  }

 private:
  const std::string& text_;
  const std::string& source_;
};

}  // namespace

void json_to_message(const std::string& text, const std::string& source, pb::Message* out) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw ConfigError(source + ":" + line_column(text, e.byte > 0 ? e.byte - 1 : 0) +
                      ": invalid JSON: " + e.what());
  }
  std::vector<std::string> keys;
  Reader(text, source).read_message(doc, out, &keys, "");
}

}  // namespace tzrec::config::detail
