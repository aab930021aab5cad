#include "feature/builtin_operators.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <tzrec/custom_operator.h>

#include "feature/expr_parser.h"
#include "feature/expr_program.h"
#include "feature/text_values.h"

namespace tzrec::feature {
namespace {

void write_error(char* error, size_t error_size, const std::string& message) {
  if (error_size == 0) return;
  std::snprintf(error, error_size, "%s", message.c_str());
}

// The operator_params JSON object into *params; false with a message for anything else.
bool parse_params(const char* params_json, nlohmann::json* params, char* error, size_t error_size) {
  try {
    *params = nlohmann::json::parse(params_json);
  } catch (const nlohmann::json::exception& e) {
    write_error(error, error_size, std::string("operator_params is not JSON: ") + e.what());
    return false;
  }
  if (!params->is_object()) {
    write_error(error, error_size, "operator_params is not a JSON object");
    return false;
  }
  return true;
}

// ---- EditDistance (pyfg/lib/libedit_distance.so) --------------------------------------------------
// The Levenshtein distance (insertions, deletions and substitutions of cost 1) between the texts
// of its two inputs; an input's text is its values joined by "\x1d" (the default separator, so a
// text cell reads back as it is). operator_params "encoding": "latin" (the default: bytes) or
// "utf-8" (code points; invalid UTF-8 bytes count one each).

struct EditDistanceState {
  bool utf8 = false;
};

// The characters of s (bytes, or UTF-8 code points) into *out.
void code_points(std::string_view s, bool utf8, std::vector<uint32_t>* points) {
  std::vector<uint32_t>& out = *points;
  out.clear();
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 1;
    uint32_t cp = c;
    if (utf8 && c >= 0xC0) {
      n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      if (i + n > s.size()) {
        n = 1;
      } else {
        cp = c & (0x3F >> (n - 1));
        for (size_t j = 1; j < n; ++j) {
          const auto cont = static_cast<unsigned char>(s[i + j]);
          if ((cont & 0xC0) != 0x80) {
            n = 1;
            cp = c;
            break;
          }
          cp = (cp << 6) | (cont & 0x3F);
        }
      }
    }
    out.push_back(cp);
    i += n;
  }
}

size_t levenshtein(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  thread_local std::vector<size_t> prev, cur;  // two rows of the distance table, reused per thread
  prev.resize(b.size() + 1);
  cur.resize(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The input's values joined by "\x1d" into *out.
void joined(const tzrec_operator_input& in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.num_values; ++i) {
    if (i > 0) out->push_back('\x1d');
    out->append(in.values[i].data, in.values[i].size);
  }
}

void* edit_distance_create(const char* params_json, char* error, size_t error_size) {
  auto state = std::make_unique<EditDistanceState>();
  nlohmann::json params;
  if (!parse_params(params_json, &params, error, error_size)) return nullptr;
  if (params.contains("encoding")) {
    const auto& enc = params["encoding"];
    const std::string value = enc.is_string() ? enc.get<std::string>() : enc.dump();
    if (value == "utf-8" || value == "utf8") {
      state->utf8 = true;
    } else if (value != "latin") {
      write_error(error, error_size, "encoding \"" + value + "\": use \"utf-8\" or \"latin\"");
      return nullptr;
    }
  }
  for (const auto& item : params.items()) {
    if (item.key() != "encoding" && item.key() != kBuiltinInputNamesKey) {
      write_error(error, error_size, "unknown parameter \"" + item.key() + "\" (EditDistance takes \"encoding\")");
      return nullptr;
    }
  }
  return state.release();
}

int edit_distance_evaluate(void* state, const tzrec_operator_input* inputs, size_t num_inputs,
                           tzrec_operator_output* out, const tzrec_operator_output_api* api, char* error,
                           size_t error_size) {
  if (num_inputs != 2) {
    write_error(error, error_size, "EditDistance takes two inputs, got " + std::to_string(num_inputs));
    return 1;
  }
  const bool utf8 = static_cast<EditDistanceState*>(state)->utf8;
  // Per-thread scratch: the operator is called once per row.
  thread_local std::string text;
  thread_local std::vector<uint32_t> a, b;
  joined(inputs[0], &text);
  code_points(text, utf8, &a);
  joined(inputs[1], &text);
  code_points(text, utf8, &b);
  const size_t d = levenshtein(a, b);
  api->add_number(out, static_cast<double>(d));
  return 0;
}

void edit_distance_destroy(void* state) { delete static_cast<EditDistanceState*>(state); }

const tzrec_custom_operator kEditDistance = {TZREC_CUSTOM_OPERATOR_ABI_VERSION, /*thread_safe=*/1,
                                             &edit_distance_create, &edit_distance_evaluate, &edit_distance_destroy};

// ---- RegexReplace (pyfg/lib/libregex_replace.so) ------------------------------------------------
// Each value of its one input with every match of operator_params "regex_patten" (pyfg's
// spelling; "regex_pattern" is read too) replaced by "replacement" (default ""; $1 .. $9 and $&
// refer to the match's groups). The pattern is an ECMAScript regular expression (std::regex; pyfg's
// regex dialect is not documented — this engine's choice). Outputs one text per input value.

struct RegexReplaceState {
  std::regex pattern;
  std::string replacement;
};

void* regex_replace_create(const char* params_json, char* error, size_t error_size) {
  nlohmann::json params;
  if (!parse_params(params_json, &params, error, error_size)) return nullptr;
  std::string pattern_key;
  for (const auto& item : params.items()) {
    if (item.key() == "regex_patten" || item.key() == "regex_pattern") {
      if (!pattern_key.empty()) {
        write_error(error, error_size, "set one of \"regex_patten\" and \"regex_pattern\", not both");
        return nullptr;
      }
      pattern_key = item.key();
    } else if (item.key() == kBuiltinInputNamesKey) {
      continue;
    } else if (item.key() != "replacement") {
      write_error(error, error_size,
                  "unknown parameter \"" + item.key() + "\" (RegexReplace takes \"regex_patten\" and \"replacement\")");
      return nullptr;
    }
    if (!item.value().is_string()) {
      write_error(error, error_size, "parameter \"" + item.key() + "\" must be a string_value");
      return nullptr;
    }
  }
  if (pattern_key.empty()) {
    write_error(error, error_size, "parameter \"regex_patten\" (the regular expression) is required");
    return nullptr;
  }
  auto state = std::make_unique<RegexReplaceState>();
  const std::string pattern = params[pattern_key].get<std::string>();
  try {
    state->pattern = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    write_error(error, error_size, "\"" + pattern_key + "\" \"" + pattern + "\" is not a regular expression: " + e.what());
    return nullptr;
  }
  if (params.contains("replacement")) state->replacement = params["replacement"].get<std::string>();
  return state.release();
}

int regex_replace_evaluate(void* state, const tzrec_operator_input* inputs, size_t num_inputs,
                           tzrec_operator_output* out, const tzrec_operator_output_api* api, char* error,
                           size_t error_size) {
  if (num_inputs != 1) {
    write_error(error, error_size, "RegexReplace takes one input, got " + std::to_string(num_inputs));
    return 1;
  }
  const auto& st = *static_cast<RegexReplaceState*>(state);
  std::string replaced;
  for (size_t i = 0; i < inputs[0].num_values; ++i) {
    const tzrec_string_view& v = inputs[0].values[i];
    replaced.clear();
    std::regex_replace(std::back_inserter(replaced), v.data, v.data + v.size, st.pattern, st.replacement);
    api->add_text(out, replaced.data(), replaced.size());
  }
  return 0;
}

void regex_replace_destroy(void* state) { delete static_cast<RegexReplaceState*>(state); }

const tzrec_custom_operator kRegexReplace = {TZREC_CUSTOM_OPERATOR_ABI_VERSION, /*thread_safe=*/1,
                                             &regex_replace_create, &regex_replace_evaluate, &regex_replace_destroy};

// ---- SeqExpr (pyfg/lib/libseq_expr.so) ---------------------------------------------------------
// operator_params "formula": an expression of the expr_feature language (feature/expr_program.h)
// over the inputs' names (TorchEasyRec's example "cur_time-clk_time_seq" with expression
// ["user:cur_time", "item:clk_time_seq"]), evaluated per row — per item in a sequence, where a
// sequence input gives the item's value and a plain one the row's; its value(s) are the output.
// "spherical_distance" with four inputs (lng1, lat1, lng2, lat2) is the great-circle distance in
// km, sphere_dist of the expr language (this engine's reading: pyfg documents the name only). An
// input value that is not a number is NaN (pyfg's expression inputs are numbers).

struct SeqExprState {
  ExprProgram program;
  size_t num_inputs = 0;
};

void* seq_expr_create(const char* params_json, char* error, size_t error_size) {
  nlohmann::json params;
  if (!parse_params(params_json, &params, error, error_size)) return nullptr;
  for (const auto& item : params.items()) {
    if (item.key() != "formula" && item.key() != kBuiltinInputNamesKey) {
      write_error(error, error_size, "unknown parameter \"" + item.key() + "\" (SeqExpr takes \"formula\")");
      return nullptr;
    }
  }
  if (!params.contains("formula") || !params["formula"].is_string()) {
    write_error(error, error_size, "parameter \"formula\" (a string_value expression over the inputs) is required");
    return nullptr;
  }
  std::vector<std::string> names;
  if (params.contains(kBuiltinInputNamesKey)) names = params[kBuiltinInputNamesKey].get<std::vector<std::string>>();
  std::string formula = params["formula"].get<std::string>();
  if (formula == "spherical_distance") {
    if (names.size() != 4) {
      write_error(error, error_size,
                  "formula spherical_distance takes four inputs (lng1, lat1, lng2, lat2), got " + std::to_string(names.size()));
      return nullptr;
    }
    formula = "sphere_dist(" + names[0] + ", " + names[1] + ", " + names[2] + ", " + names[3] + ")";
  }
  auto state = std::make_unique<SeqExprState>();
  try {
    state->program = ExprProgram(formula, names);
  } catch (const ExprSyntaxError& e) {
    write_error(error, error_size,
                "formula \"" + formula + "\" at position " + std::to_string(e.position()) + ": " + e.what() +
                    (e.hint().empty() ? std::string() : "; " + e.hint()));
    return nullptr;
  }
  state->num_inputs = names.size();
  return state.release();
}

int seq_expr_evaluate(void* state, const tzrec_operator_input* inputs, size_t num_inputs, tzrec_operator_output* out,
                      const tzrec_operator_output_api* api, char* error, size_t error_size) {
  const auto& st = *static_cast<SeqExprState*>(state);
  if (num_inputs != st.num_inputs) {
    write_error(error, error_size,
                "SeqExpr got " + std::to_string(num_inputs) + " inputs for " + std::to_string(st.num_inputs) + " names");
    return 1;
  }
  thread_local std::vector<std::vector<double>> values;
  thread_local std::vector<ExprArg> args;
  thread_local ExprProgram::Scratch scratch;
  thread_local std::vector<double> result;
  values.resize(num_inputs);
  args.resize(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    values[i].clear();
    for (size_t j = 0; j < inputs[i].num_values; ++j) {
      double x = std::numeric_limits<double>::quiet_NaN();
      parse_double(std::string_view(inputs[i].values[j].data, inputs[i].values[j].size), &x);
      values[i].push_back(x);
    }
    if (values[i].empty()) values[i].push_back(std::numeric_limits<double>::quiet_NaN());
    args[i] = ExprArg{values[i].data(), values[i].size()};
  }
  result.clear();
  st.program.evaluate(args.data(), &scratch, &result);
  for (double v : result) api->add_number(out, v);
  return 0;
}

void seq_expr_destroy(void* state) { delete static_cast<SeqExprState*>(state); }

const tzrec_custom_operator kSeqExpr = {TZREC_CUSTOM_OPERATOR_ABI_VERSION, /*thread_safe=*/1, &seq_expr_create,
                                        &seq_expr_evaluate, &seq_expr_destroy};

struct Builtin {
  const char* lib_file;
  const char* name;
  const tzrec_custom_operator* op;
};

const Builtin kBuiltins[] = {
    {"pyfg/lib/libedit_distance.so", "EditDistance", &kEditDistance},
    {"pyfg/lib/libregex_replace.so", "RegexReplace", &kRegexReplace},
    {"pyfg/lib/libseq_expr.so", "SeqExpr", &kSeqExpr},
};

}  // namespace

const tzrec_custom_operator* builtin_custom_operator(const std::string& lib_file, const std::string& operator_name) {
  for (const Builtin& b : kBuiltins) {
    if (lib_file == b.lib_file && operator_name == b.name) return b.op;
  }
  return nullptr;
}

std::vector<std::string> builtin_custom_operator_names() {
  std::vector<std::string> out;
  for (const Builtin& b : kBuiltins) out.push_back(std::string(b.name) + " (" + b.lib_file + ")");
  return out;
}

}  // namespace tzrec::feature
