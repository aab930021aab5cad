#include "embedding/embedding_config.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"

namespace tzrec::embedding {
namespace {

// One parsed "key=value" (or positional) argument of an init_fn string.
struct InitArg {
  std::string key;  // "" for a positional argument
  std::string text;
};

// Splits "f,a=1,b='x'" at top-level commas (commas inside quotes are kept).
std::vector<std::string> split_args(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  char quote = 0;
  for (char c : s) {
    if (quote != 0) {
      if (c == quote) quote = 0;
      cur.push_back(c);
    } else if (c == '\'' || c == '"') {
      quote = c;
      cur.push_back(c);
    } else if (c == ',') {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  parts.push_back(trim(cur));
  return parts;
}

// Parameters of one torch.nn.init function, in positional order after the tensor.
struct InitSpec {
  std::vector<std::string> params;
  std::map<std::string, std::string> defaults;  // param → default value text ("" = required)
};

const std::map<std::string, InitSpec>& init_specs() {
  static const std::map<std::string, InitSpec> specs = {
      {"uniform_", {{"a", "b"}, {{"a", "0"}, {"b", "1"}}}},
      {"normal_", {{"mean", "std"}, {{"mean", "0"}, {"std", "1"}}}},
      {"trunc_normal_", {{"mean", "std", "a", "b"}, {{"mean", "0"}, {"std", "1"}, {"a", "-2"}, {"b", "2"}}}},
      {"constant_", {{"val"}, {{"val", ""}}}},
      {"zeros_", {{}, {}}},
      {"ones_", {{}, {}}},
      {"xavier_uniform_", {{"gain"}, {{"gain", "1"}}}},
      {"xavier_normal_", {{"gain"}, {{"gain", "1"}}}},
      {"kaiming_uniform_",
       {{"a", "mode", "nonlinearity"}, {{"a", "0"}, {"mode", "'fan_in'"}, {"nonlinearity", "'leaky_relu'"}}}},
      {"kaiming_normal_",
       {{"a", "mode", "nonlinearity"}, {{"a", "0"}, {"mode", "'fan_in'"}, {"nonlinearity", "'leaky_relu'"}}}},
  };
  return specs;
}

class InitFnParser {
 public:
  InitFnParser(const TableConfig& table) : table_(table) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw ConfigError(fmt::format(
        "embedding table '{}': bad init_fn \"{}\": {}; use e.g. \"nn.init.uniform_,a=-0.01,b=0.01\", "
        "\"nn.init.normal_,mean=0,std=0.01\", \"nn.init.xavier_uniform_\", \"nn.init.zeros_\" or "
        "\"nn.init.constant_,val=0.1\"",
        table_.name, table_.init_fn, why));
  }

  // Returns the function name (e.g. "uniform_") and fills values_ with every parameter's text.
  std::string parse() {
    std::vector<std::string> parts = split_args(table_.init_fn);
    std::string fn = parts[0];
    if (fn.rfind("torch.", 0) == 0) fn = fn.substr(6);
    if (fn.rfind("nn.init.", 0) != 0) fail("the function must be one of torch.nn.init.*");
    fn = fn.substr(8);
    auto it = init_specs().find(fn);
    if (it == init_specs().end()) fail("unknown function nn.init." + fn);
    const InitSpec& spec = it->second;
    values_ = spec.defaults;
    size_t positional = 0;
    for (size_t i = 1; i < parts.size(); ++i) {
      const std::string& part = parts[i];
      if (part.empty()) {
        if (i + 1 == parts.size()) continue;  // trailing comma
        fail("empty argument");
      }
      size_t eq = part.find('=');
      std::string key;
      std::string value;
      if (eq == std::string::npos) {
        if (positional >= spec.params.size()) fail("too many positional arguments");
        key = spec.params[positional++];
        value = part;
      } else {
        key = trim(part.substr(0, eq));
        value = trim(part.substr(eq + 1));
        if (spec.defaults.count(key) == 0) fail("nn.init." + fn + " has no argument '" + key + "'");
      }
      if (value.empty()) fail("argument '" + key + "' has no value");
      values_[key] = value;
    }
    for (const auto& [key, value] : values_) {
      if (value.empty()) fail("argument '" + key + "' is required");
    }
    return fn;
  }

  double number(const std::string& key) const {
    const std::string& text = values_.at(key);
    try {
      size_t used = 0;
      double v = std::stod(text, &used);
      if (used == text.size()) return v;
    } catch (const std::exception&) {
    }
    fail("argument '" + key + "' must be a number, got " + text);
  }

  std::string str(const std::string& key) const {
    const std::string& text = values_.at(key);
    if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') && text.back() == text.front()) {
      return text.substr(1, text.size() - 2);
    }
    fail("argument '" + key + "' must be a quoted string, got " + text);
  }

 private:
  const TableConfig& table_;
  std::map<std::string, std::string> values_;
};

// torch.nn.init.calculate_gain for the nonlinearities kaiming_* accepts.
double calculate_gain(const InitFnParser& p, const std::string& nonlinearity, double a) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid" || nonlinearity.rfind("conv", 0) == 0) {
    return 1.0;
  }
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + a * a));
  if (nonlinearity == "selu") return 3.0 / 4.0;
  p.fail("unsupported nonlinearity '" + nonlinearity + "'");
}

}  // namespace

std::string data_type_name(torch::ScalarType dtype) { return dtype == torch::kFloat16 ? "FP16" : "FP32"; }

void init_table_weight(const TableConfig& table, torch::Tensor& weight) {
  TORCH_CHECK(weight.dim() == 2, "init_table_weight expects a 2-D weight");
  torch::NoGradGuard no_grad;
  if (weight.scalar_type() != torch::kFloat32) {
    constexpr int64_t kBlockRows = 1 << 16;
    for (int64_t r = 0; r < weight.size(0); r += kBlockRows) {
      const int64_t n = std::min(kBlockRows, weight.size(0) - r);
      torch::Tensor block = torch::empty({n, weight.size(1)}, torch::kFloat32);
      init_table_weight(table, block);
      weight.narrow(0, r, n).copy_(block);
    }
    return;
  }
  if (table.init_fn.empty()) {
    // torchrec BaseEmbeddingConfig default: uniform(-sqrt(1/num_embeddings), sqrt(1/num_embeddings)).
    double bound = std::sqrt(1.0 / static_cast<double>(table.num_embeddings));
    weight.uniform_(-bound, bound);
    return;
  }
  InitFnParser p(table);
  std::string fn = p.parse();
  // A 2-D tensor [rows, dim] has fan_in = dim, fan_out = rows (torch _calculate_fan_in_and_fan_out),
  // taken from the whole table so that a shard is drawn from the table's distribution.
  const double fan_in = static_cast<double>(table.embedding_dim);
  const double fan_out = static_cast<double>(table.num_embeddings);
  if (fn == "uniform_") {
    weight.uniform_(p.number("a"), p.number("b"));
  } else if (fn == "normal_") {
    weight.normal_(p.number("mean"), p.number("std"));
  } else if (fn == "trunc_normal_") {
    // torch.nn.init.trunc_normal_: inverse-CDF sampling of N(mean, std) truncated to [a, b].
    double mean = p.number("mean"), std = p.number("std"), a = p.number("a"), b = p.number("b");
    auto norm_cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
    double l = norm_cdf((a - mean) / std), u = norm_cdf((b - mean) / std);
    weight.uniform_(2 * l - 1, 2 * u - 1);
    weight.erfinv_();
    weight.mul_(std * std::sqrt(2.0));
    weight.add_(mean);
    weight.clamp_(a, b);
  } else if (fn == "constant_") {
    weight.fill_(p.number("val"));
  } else if (fn == "zeros_") {
    weight.zero_();
  } else if (fn == "ones_") {
    weight.fill_(1.0);
  } else if (fn == "xavier_uniform_") {
    double bound = p.number("gain") * std::sqrt(6.0 / (fan_in + fan_out));
    weight.uniform_(-bound, bound);
  } else if (fn == "xavier_normal_") {
    weight.normal_(0.0, p.number("gain") * std::sqrt(2.0 / (fan_in + fan_out)));
  } else {  // kaiming_uniform_ / kaiming_normal_
    std::string mode = p.str("mode");
    if (mode != "fan_in" && mode != "fan_out") p.fail("mode must be 'fan_in' or 'fan_out'");
    double gain = calculate_gain(p, p.str("nonlinearity"), p.number("a"));
    double std = gain / std::sqrt(mode == "fan_in" ? fan_in : fan_out);
    if (fn == "kaiming_uniform_") {
      weight.uniform_(-std::sqrt(3.0) * std, std::sqrt(3.0) * std);
    } else {
      weight.normal_(0.0, std);
    }
  }
}

void check_shared_dynamicemb(const std::string& first, bool first_dynamic, const std::string& second,
                             bool second_dynamic, const std::string& table, const std::string& where) {
  if (first_dynamic == second_dynamic) return;
  throw ConfigError(fmt::format(
      "{}features '{}' and '{}' share embedding table '{}' but only one of them has dynamicemb; give both the same "
      "dynamicemb or different embedding_name",
      where.empty() ? "" : where + ": ", first, second, table));
}

void require_embedding_dim(const FeatureSpec& f, const std::string& group) {
  if (f.embedding_dim > 0) return;
  throw ConfigError(fmt::format("{}.embedding_dim: must be > 0 for sparse feature {} (used by group '{}')",
                                f.path.empty() ? "feature '" + f.name + "'" : f.path, f.name, group));
}

void check_shared_zch(const std::string& first, const std::optional<ZchOptions>& a, const std::string& second,
                      const std::optional<ZchOptions>& b, const std::string& table, const std::string& where) {
  const bool differ = a.has_value() != b.has_value() ||
                      (a && (a->zch_size != b->zch_size || a->eviction_interval != b->eviction_interval ||
                             a->eviction != b->eviction || a->decay_exponent != b->decay_exponent ||
                             a->threshold_filtering_func != b->threshold_filtering_func));
  if (differ) {
    throw ConfigError(fmt::format(
        "{}features '{}' and '{}' share embedding table '{}' but disagree on its zch settings (zch or not, zch_size, "
        "eviction_interval, eviction policy, threshold_filtering_func); give them the same zch or different "
        "embedding_name",
        where.empty() ? "" : where + ": ", first, second, table));
  }
}

}  // namespace tzrec::embedding
