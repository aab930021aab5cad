#include "base/activation_string.h"

#include <cctype>
#include <vector>

#include "base/error.h"
#include "base/text.h"

namespace tzrec {
namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Splits "a=1, b='x,y'" on top-level commas.
std::vector<std::string> split_args(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  char quote = 0;
  int depth = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
      continue;
    }
    cur.push_back(c);
  }
  if (!trim(cur).empty() || !parts.empty()) parts.push_back(cur);
  return parts;
}

}  // namespace

std::string unquote(const std::string& value) {
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
      value.back() == value.front()) {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

ActivationString parse_activation_string(const std::string& text) {
  ActivationString out;
  const std::string s = trim(text);
  if (s.empty()) return out;
  auto cannot_parse = [&](const std::string& why) {
    return ConfigError("cannot parse activation '" + text + "' (" + why +
                       "), expected e.g. nn.ReLU or nn.LeakyReLU(negative_slope=0.1)");
  };

  std::string head = s, args;
  if (size_t open = s.find('('); open != std::string::npos) {
    if (s.back() != ')') throw cannot_parse("unbalanced parentheses");
    head = trim(s.substr(0, open));
    args = s.substr(open + 1, s.size() - open - 2);
  } else if (s.find(')') != std::string::npos) {
    throw cannot_parse("unbalanced parentheses");
  }
  if (head == "Dice") {
    out.name = head;
  } else {
    for (const char* prefix : {"torch.nn.", "nn."}) {
      const std::string p(prefix);
      if (head.compare(0, p.size(), p) == 0) {
        out.name = head.substr(p.size());
        break;
      }
    }
  }
  if (out.name.empty() || !is_identifier(out.name)) throw cannot_parse("not a torch.nn class path");

  for (const std::string& raw : split_args(args)) {
    const std::string arg = trim(raw);
    size_t eq = arg.find('=');
    if (eq == std::string::npos) throw cannot_parse("arguments must be keyword=value");
    std::string key = trim(arg.substr(0, eq));
    std::string value = trim(arg.substr(eq + 1));
    if (!is_identifier(key) || value.empty()) throw cannot_parse("bad argument '" + arg + "'");
    if (!out.kwargs.emplace(key, value).second) throw cannot_parse("argument '" + key + "' given twice");
  }
  return out;
}

}  // namespace tzrec
