#include "feature/dense_embedding_settings.h"

#include <cmath>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::feature {

namespace {

// Features are built several times per job (training, evaluation, export): one warning per field.
void warn_dense_embedding_once(const std::string& field, const std::string& why) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (!warned.insert(field).second) return;
  log::warning("{} has no effect: {}; remove it", field, why);
}

}  // namespace

void fill_dense_embedding(const protos::AutoDisEmbedding* autodis, bool mlp, uint32_t embedding_dim, int64_t value_dim,
                          SequenceDenseEmbedding on_sequence, const std::string& path, FeatureInfo* info) {
  if (autodis == nullptr && !mlp) return;
  const char* type = autodis != nullptr ? "autodis" : "mlp";
  const std::string field = path + "." + type;
  if (info->is_sequence) {
    if (on_sequence == SequenceDenseEmbedding::kIgnored) {
      warn_dense_embedding_once(field, "TorchEasyRec applies no dense embedding to sequence features");
      return;
    }
    throw ConfigError(fmt::format("{}: sequence features have no dense embedding (TorchEasyRec's sequence groups take "
                                  "their value_dim floats per item); remove it",
                                  field));
  }
  if (info->is_sparse) {
    warn_dense_embedding_once(field, "the feature is sparse (boundaries or a bucketizer) and looks up its embedding "
                                     "table instead");
    return;
  }
  if (embedding_dim == 0) {
    throw ConfigError(fmt::format("{}.embedding_dim: must be > 0 with {} (the width of the feature's dense embedding)",
                                  path, type));
  }
  if (info->name.find('.') != std::string::npos) {
    throw ConfigError(fmt::format("{}.feature_name: '{}' contains '.'; a feature with {} names its parameters after "
                                  "itself (\"{}_<feature>.weight\"), so rename it",
                                  path, info->name, type, autodis != nullptr ? "meta_emb" : "proj_w"));
  }
  if (autodis != nullptr) {
    if (value_dim > 1) {
      throw ConfigError(fmt::format("{}: value_dim is {}; AutoDis embeds one value per feature (as in TorchEasyRec) — "
                                    "use mlp for vectors",
                                    field, value_dim));
    }
    if (autodis->num_channels() == 0) throw ConfigError(field + ".num_channels: must be > 0");
    if (!(std::isfinite(autodis->temperature()) && autodis->temperature() > 0)) {
      throw ConfigError(fmt::format("{}.temperature: must be a finite number > 0, got {}", field,
                                    autodis->temperature()));
    }
    if (!std::isfinite(autodis->keep_prob())) {
      throw ConfigError(fmt::format("{}.keep_prob: must be a finite number, got {}", field, autodis->keep_prob()));
    }
    info->dense_embedding = "autodis";
    info->autodis_num_channels = autodis->num_channels();
    info->autodis_temperature = autodis->temperature();
    info->autodis_keep_prob = autodis->keep_prob();
  } else {
    if (value_dim < 1) {
      throw ConfigError(fmt::format("{}.value_dim: {} with mlp; the MLP embedding maps value_dim >= 1 numbers, set it",
                                    path, value_dim));
    }
    info->dense_embedding = "mlp";
  }
  info->embedding_dim = embedding_dim;
}

}  // namespace tzrec::feature
