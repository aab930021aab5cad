#include "data/kafka_uri.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

#include "base/error.h"

namespace tzrec::data {
namespace {

constexpr const char* kScheme = "kafka://";

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded decoding; a '%' not followed by two hex digits is kept.
std::string form_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool is_kafka_uri(const std::string& input_path) { return input_path.rfind(kScheme, 0) == 0; }

KafkaUri parse_kafka_uri(const std::string& input_path, const std::string& field) {
  auto bad = [&](const std::string& what) {
    return ConfigError(fmt::format("{}: '{}': {}; expected kafka://broker:9092/topic?group.id=g[&...]",
                                   field, input_path, what));
  };
  if (!is_kafka_uri(input_path)) throw bad("not a kafka:// URI");
  KafkaUri out;
  out.uri = input_path;
  std::string rest = input_path.substr(std::string(kScheme).size());
  std::string query;
  if (const size_t q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (const size_t hash = query.find('#'); hash != std::string::npos) query.resize(hash);
  const size_t slash = rest.find('/');
  out.brokers = rest.substr(0, slash);
  if (out.brokers.empty()) throw bad("no broker");
  out.topic = slash == std::string::npos ? "" : rest.substr(slash + 1);
  while (!out.topic.empty() && out.topic.front() == '/') out.topic.erase(0, 1);
  if (out.topic.empty()) throw bad("no topic");

  size_t start = 0;
  while (start <= query.size() && !query.empty()) {
    size_t amp = query.find('&', start);
    if (amp == std::string::npos) amp = query.size();
    const std::string item = query.substr(start, amp - start);
    start = amp + 1;
    if (!item.empty()) {
      const size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw bad(fmt::format("query item '{}' is not name=value", item));
      }
      out.params[form_decode(item.substr(0, eq))] = form_decode(item.substr(eq + 1));
    }
    if (amp == query.size()) break;
  }
  if (out.params.count("group.id") == 0 || out.params["group.id"].empty()) {
    throw bad("no consumer group (add ?group.id=<group>)");
  }
  if (auto it = out.params.find("start.timestamp.ms"); it != out.params.end()) {
    const std::string& v = it->second;
    char* end = nullptr;
    errno = 0;
    const long long ms = v.empty() ? -1 : std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || errno != 0 || *end != '\0' || ms < 0) {
      throw bad(fmt::format("start.timestamp.ms must be a non-negative integer (milliseconds since "
                            "the Unix epoch), got '{}'",
                            v));
    }
    out.start_timestamp_ms = ms;
    out.params.erase(it);
  }
  if (auto it = out.params.find("malformed.messages"); it != out.params.end()) {
    if (it->second != "fail" && it->second != "skip") {
      throw bad(fmt::format("malformed.messages must be 'fail' or 'skip', got '{}'", it->second));
    }
    out.skip_malformed = it->second == "skip";
    out.params.erase(it);
  }
  if (out.params.count("enable.auto.commit") == 0) out.params["enable.auto.commit"] = "false";
  if (out.params.count("bootstrap.servers") != 0) {
    throw bad("bootstrap.servers is given by the URI's host part, not as a parameter");
  }
  out.params["bootstrap.servers"] = out.brokers;
  return out;
}

}  // namespace tzrec::data
