#include "datagen/value_generator.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace tzrec::datagen {

namespace {

constexpr double kZipfExponent = 1.1;
constexpr uint64_t kSaltToken = 0x7a0c3e11d5a40001ULL;
constexpr uint64_t kSaltNumber = 0x7a0c3e11d5a40002ULL;

std::string float_text(double v) { return fmt::format("{:.6g}", v); }

}  // namespace

int64_t zipf_rank(int64_t n, double u) {
  if (n <= 1) return 0;
  const double a = 1.0 - kZipfExponent;
  const double top = std::pow(static_cast<double>(n), a);
  const double x = std::pow((top - 1.0) * u + 1.0, 1.0 / a);  // in [1, n]
  const double rank = std::floor(x) - 1.0;
  if (!(rank >= 0.0)) return 0;
  if (rank >= static_cast<double>(n - 1)) return n - 1;
  return static_cast<int64_t>(rank);
}

ValueGenerator::ValueGenerator(const ColumnSpec& spec, uint64_t seed)
    : spec_(&spec), key_(mix(seed, kSaltToken, fnv1a64(spec.name))) {
  const uint64_t h = mix(seed, kSaltNumber, fnv1a64(spec.name));
  for (int d = 0; d < kHiddenDim; ++d) number_vector_[d] = normal_from(mix(h, d));
}

void ValueGenerator::add_token_vector(uint64_t token_hash, Contribution* acc) const {
  const uint64_t h = mix(key_, token_hash);
  for (int d = 0; d < kHiddenDim; ++d) (*acc)[d] += normal_from(mix(h, d));
}

void ValueGenerator::draw_value(const Domain& domain, Rng& rng, Token* out, Contribution* acc,
                                int* tokens) const {
  switch (domain.kind) {
    case Domain::Kind::kIds: {
      out->i = zipf_rank(domain.size, rng.unit());
      add_token_vector(splitmix64(static_cast<uint64_t>(out->i)), acc);
      break;
    }
    case Domain::Kind::kFlag: {
      out->i = static_cast<int64_t>(rng.next() & 1);
      add_token_vector(splitmix64(static_cast<uint64_t>(out->i)), acc);
      break;
    }
    case Domain::Kind::kVocab: {
      const auto n = static_cast<int64_t>(domain.vocab.size());
      out->s = n == 0 ? std::string() : domain.vocab[zipf_rank(n, rng.unit())];
      add_token_vector(fnv1a64(out->s), acc);
      break;
    }
    case Domain::Kind::kWords: {
      out->i = zipf_rank(domain.size, rng.unit());
      out->s = "w" + std::to_string(out->i);
      add_token_vector(splitmix64(static_cast<uint64_t>(out->i)), acc);
      break;
    }
    case Domain::Kind::kFloat: {
      double z;
      if (domain.log_normal) {
        z = rng.normal();
        out->f = std::exp(domain.lo + domain.hi * z);
      } else {
        const double u = rng.unit();
        out->f = domain.lo + (domain.hi - domain.lo) * u;
        z = (u - 0.5) * std::sqrt(12.0);
      }
      for (int d = 0; d < kHiddenDim; ++d) (*acc)[d] += z * number_vector_[d];
      break;
    }
  }
  ++*tokens;
}

std::string ValueGenerator::value_text(const Domain& domain, const Token& t) const {
  switch (domain.kind) {
    case Domain::Kind::kIds:
    case Domain::Kind::kFlag:
      return std::to_string(t.i);
    case Domain::Kind::kVocab:
    case Domain::Kind::kWords:
      return t.s;
    case Domain::Kind::kFloat:
      return float_text(t.f);
  }
  return "";
}

void ValueGenerator::generate(Rng& rng, int count, Cell* cell, Contribution* contribution) const {
  const ColumnSpec& s = *spec_;
  cell->clear();
  Contribution acc{};
  int tokens = 0;
  Token t;
  auto join_values = [&](int n, const std::string& delim, std::string* text) {
    for (int k = 0; k < n; ++k) {
      if (k > 0) *text += delim;
      draw_value(s.domain, rng, &t, &acc, &tokens);
      *text += value_text(s.domain, t);
    }
  };
  auto between = [&](int lo, int hi) {
    return static_cast<int>(rng.uniform_int(lo, std::max(lo, hi)));
  };
  if (s.sequence) {
    std::string text;
    for (int e = 0; e < std::max(count, 1); ++e) {
      if (e > 0) text += s.sequence_delim;
      join_values(s.layout == Layout::kJoined ? between(s.min_values, s.max_values) : 1, s.delim, &text);
    }
    cell->strings.push_back(std::move(text));
  } else {
    switch (s.layout) {
      case Layout::kScalar:
      case Layout::kList: {
        const int n = s.layout == Layout::kScalar ? 1 : std::max(count, 1);
        for (int k = 0; k < n; ++k) {
          draw_value(s.domain, rng, &t, &acc, &tokens);
          switch (s.domain.kind) {
            case Domain::Kind::kIds:
            case Domain::Kind::kFlag:
              cell->ints.push_back(t.i);
              break;
            case Domain::Kind::kFloat:
              cell->floats.push_back(static_cast<float>(t.f));
              break;
            default:
              cell->strings.push_back(t.s);
              break;
          }
        }
        break;
      }
      case Layout::kJoined: {
        std::string text;
        join_values(std::max(count, 1), s.delim, &text);
        cell->strings.push_back(std::move(text));
        break;
      }
      case Layout::kWeighted: {
        std::string text;
        for (int k = 0; k < std::max(count, 1); ++k) {
          if (k > 0) text += s.delim;
          draw_value(s.domain, rng, &t, &acc, &tokens);
          text += value_text(s.domain, t) + ":" + fmt::format("{:.3g}", 0.1 + 1.9 * rng.unit());
        }
        cell->strings.push_back(std::move(text));
        break;
      }
      case Layout::kLookupMap: {
        std::string text;
        Contribution ignored{};
        int ignored_tokens = 0;
        std::set<std::string> keys;  // distinct keys per map
        for (int k = 0; k < std::max(count, 1); ++k) {
          draw_value(s.domain, rng, &t, &acc, &tokens);
          const std::string key = value_text(s.domain, t);
          if (!keys.insert(key).second) continue;
          if (!text.empty()) text += s.delim;
          text += key + ":";
          for (int v = 0; v < std::max(s.map_value_count, 1); ++v) {
            if (v > 0) text += s.map_value_delim;
            draw_value(s.value_domain, rng, &t, &ignored, &ignored_tokens);
            text += value_text(s.value_domain, t);
          }
        }
        cell->strings.push_back(std::move(text));
        break;
      }
      case Layout::kNestedMap: {
        std::string text;
        Contribution ignored{};
        int ignored_tokens = 0;
        std::set<std::string> primaries;  // distinct keys per level
        for (int p = 0; p < std::max(count, 1); ++p) {
          draw_value(s.domain, rng, &t, &acc, &tokens);
          const std::string primary = value_text(s.domain, t);
          if (!primaries.insert(primary).second) continue;
          if (!text.empty()) text += "|";
          text += primary + "^";
          const int secondary = between(1, 3);
          std::set<std::string> secondaries;
          for (int k = 0; k < secondary; ++k) {
            draw_value(s.domain, rng, &t, &acc, &tokens);
            const std::string key = value_text(s.domain, t);
            if (!secondaries.insert(key).second) continue;
            if (!secondaries.empty() && secondaries.size() > 1) text += ",";
            text += key + ":";
            draw_value(s.value_domain, rng, &t, &ignored, &ignored_tokens);
            text += value_text(s.value_domain, t);
          }
        }
        cell->strings.push_back(std::move(text));
        break;
      }
    }
  }
  if (tokens > 0) {
    for (int d = 0; d < kHiddenDim; ++d) (*contribution)[d] += acc[d] / tokens;
  }
}

std::string ValueGenerator::cell_text(const Cell& cell, const std::string& list_sep) {
  std::string text;
  auto sep = [&]() {
    if (!text.empty()) text += list_sep;
  };
  for (int64_t v : cell.ints) {
    sep();
    text += std::to_string(v);
  }
  for (float v : cell.floats) {
    sep();
    text += float_text(v);
  }
  for (const auto& v : cell.strings) {
    sep();
    text += v;
  }
  return text;
}

}  // namespace tzrec::datagen
