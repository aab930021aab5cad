#include "feature/dynamicemb_settings.h"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::feature {
namespace {

// TorchEasyRec's _build_dynamicemb_initializer (tzrec/utils/dynamicemb_util.py): without the
// message, UNIFORM ±1/sqrt(rows) for training and CONSTANT 0 for evaluation / admission; with
// it, the mode (default UNIFORM, or CONSTANT for evaluation / admission) and its own numbers:
// NORMAL / TRUNCATED_NORMAL mean (0) and std_dev (1/sqrt(dim)), UNIFORM lower / upper
// (∓1/sqrt(rows)), CONSTANT value (0).
DynamicEmbInit initializer(bool has, const protos::DynamicEmbInitializerArgs& a, int64_t rows, int64_t dim,
                           bool constant_default) {
  DynamicEmbInit out;
  const double bound = 1.0 / std::sqrt(static_cast<double>(rows));
  if (!has) {
    out.mode = constant_default ? "CONSTANT" : "UNIFORM";
    out.lower = -bound;
    out.upper = bound;
    return out;
  }
  out.mode = a.has_mode() ? a.mode() : (constant_default ? "CONSTANT" : "UNIFORM");
  out.mean = a.mean();
  out.std_dev = a.has_std_dev() ? a.std_dev() : 1.0 / std::sqrt(static_cast<double>(dim));
  out.lower = a.has_lower() ? a.lower() : -bound;
  out.upper = a.has_upper() ? a.upper() : bound;
  out.value = a.value();
  return out;
}

}  // namespace

int64_t dynamicemb_table_size(uint64_t max_capacity, const std::string& path) {
  if (max_capacity == 0 || max_capacity > (uint64_t{1} << 31)) {
    throw ConfigError(fmt::format("{}.max_capacity: {} must be in [1, 2^31]", path, max_capacity));
  }
  return static_cast<int64_t>(max_capacity);
}

void fill_dynamicemb_info(const protos::DynamicEmbedding& d, const std::string& path, FeatureInfo* info) {
  dynamicemb_table_size(d.max_capacity(), path);
  DynamicEmbSettings& s = info->dynamicemb;
  s.path = path;
  s.max_capacity = static_cast<int64_t>(d.max_capacity());
  s.init_capacity = d.has_init_capacity_per_rank() ? static_cast<int64_t>(d.init_capacity_per_rank()) : 0;
  if (d.has_bucket_capacity()) s.bucket_capacity = static_cast<int64_t>(d.bucket_capacity());
  s.score_strategy = d.score_strategy();
  const int64_t rows = s.max_capacity;
  const int64_t dim = info->embedding_dim;
  s.init = initializer(d.has_initializer_args(), d.initializer_args(), rows, dim, false);
  s.eval_init = initializer(d.has_eval_initializer_args(), d.eval_initializer_args(), rows, dim, true);
  if (d.has_frequency_admission_strategy()) {
    const protos::DynamicEmbFrequencyAdmissionStrategy& a = d.frequency_admission_strategy();
    s.admission = true;
    s.admission_threshold = static_cast<int64_t>(a.threshold());
    s.counter_capacity = a.has_counter_capacity() ? static_cast<int64_t>(a.counter_capacity()) : 0;
    s.counter_bucket_capacity = static_cast<int64_t>(a.counter_bucket_capacity());
    s.admission_init = initializer(a.has_initializer_args(), a.initializer_args(), rows, dim, true);
  }
  info->num_embeddings = s.max_capacity;
}

}  // namespace tzrec::feature
