// validate(): model checks of dlrm, xdeepfm and mask_net (model_config.<name>), and of a
// MaskNetModule (also dbmtl.mask_net).
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "config/feature_util.h"
#include "config/validate_internal.h"

namespace tzrec::config::detail {

namespace {

// Index of the feature group named `name`, -1 when there is none (a problem unless `optional`); a
// problem when its group_type is not `type`.
int find_group(const protos::ModelConfig& model, const std::string& model_name, const std::string& name,
               protos::FeatureGroupType type, bool optional, Problems* problems) {
  const std::string type_name = protos::FeatureGroupType_Name(type);
  for (int i = 0; i < model.feature_groups_size(); ++i) {
    if (model.feature_groups(i).group_name() != name) continue;
    if (model.feature_groups(i).group_type() != type) {
      problems->add(group_path(i) + ".group_type", model_name + " group '" + name + "' must be " + type_name);
    }
    return i;
  }
  if (!optional) {
    problems->add("model_config.feature_groups",
                  model_name + " needs a feature group named '" + name + "' (group_type: " + type_name + ")");
  }
  return -1;
}

// The embedding dim every feature of group `gi` shares (sparse features only); 0 when it cannot be
// told (unknown features, reported elsewhere) or on a problem (reported here).
uint32_t equal_sparse_dim(const protos::EasyRecConfig& config, int gi, const std::string& why, Problems* problems) {
  std::map<std::string, const protos::FeatureConfig*> features;
  for (const auto& f : config.feature_configs()) features.emplace(feature_name(f), &f);
  const auto& g = config.model_config().feature_groups(gi);
  std::string first_name;
  uint32_t first_dim = 0;
  bool ok = true;
  for (int j = 0; j < g.feature_names_size(); ++j) {
    auto it = features.find(g.feature_names(j));
    if (it == features.end()) continue;  // unknown feature: reported by the group checks
    const std::string path = item_path(group_path(gi), "feature_names", j);
    if (!is_sparse_feature(*it->second)) {
      problems->add(path, why + " needs sparse features with equal embedding_dim, '" + it->first + "' is dense");
      ok = false;
      continue;
    }
    const uint32_t dim = feature_embedding_dim(*it->second);
    if (first_name.empty()) {
      first_name = it->first;
      first_dim = dim;
    } else if (dim != first_dim) {
      problems->add(path, fmt::format("{} needs equal embedding_dim: '{}' has {}, '{}' has {}", why, it->first, dim,
                                      first_name, first_dim));
      ok = false;
    }
  }
  return ok ? first_dim : 0;
}

}  // namespace

void validate_dlrm(const protos::EasyRecConfig& config, Problems* problems) {
  const auto& model = config.model_config();
  const std::string p = "model_config.dlrm";
  const auto& dlrm = model.dlrm();
  // As TorchEasyRec: a single feature group is the sparse group (whatever its name, no dense
  // part); otherwise "sparse" and an optional "dense".
  int sparse = -1, dense = -1;
  if (model.feature_groups_size() == 1) {
    sparse = 0;
    if (model.feature_groups(0).group_type() != protos::DEEP) {
      problems->add(group_path(0) + ".group_type", "DLRM's sparse group must be DEEP");
    }
  } else if (model.feature_groups_size() > 1) {
    sparse = find_group(model, "DLRM", "sparse", protos::DEEP, false, problems);
    dense = find_group(model, "DLRM", "dense", protos::DEEP, true, problems);
  } else {
    problems->add("model_config.feature_groups", "DLRM needs feature groups 'dense' and 'sparse' (or a single one)");
  }
  const uint32_t sparse_dim = sparse >= 0 ? equal_sparse_dim(config, sparse, "DLRM's sparse group", problems) : 0;
  if (dense >= 0) {
    if (!dlrm.has_dense_mlp()) {
      problems->add(p + ".dense_mlp", "required with a 'dense' feature group; its last hidden unit must equal the "
                                      "embedding_dim of the 'sparse' group");
    } else {
      const auto& units = dlrm.dense_mlp().hidden_units();
      const int last = units.size() - 1;
      if (last >= 0 && sparse_dim > 0 && units[last] != sparse_dim) {
        problems->add(item_path(p + ".dense_mlp", "hidden_units", last),
                      fmt::format("the last hidden unit must equal the embedding_dim of the 'sparse' group ({}), "
                                  "got {}",
                                  sparse_dim, units[last]));
      }
    }
  }
  required_mlp(dlrm.has_final(), p + ".final", problems);
}

void validate_xdeepfm(const protos::ModelConfig& model, Problems* problems) {
  const std::string p = "model_config.xdeepfm";
  const auto& x = model.xdeepfm();
  find_group(model, "xDeepFM", "wide", protos::WIDE, false, problems);
  find_group(model, "xDeepFM", "deep", protos::DEEP, false, problems);
  if (!x.has_cin()) {
    problems->add(p + ".cin", "required, e.g. cin { cin_layer_size: [64, 64] }");
  } else if (x.cin().cin_layer_size_size() == 0) {
    problems->add(p + ".cin.cin_layer_size", "needs at least one layer, e.g. cin_layer_size: [64, 64]");
  } else {
    for (int k = 0; k < x.cin().cin_layer_size_size(); ++k) {
      if (x.cin().cin_layer_size(k) == 0) problems->add(item_path(p + ".cin", "cin_layer_size", k), "must be > 0");
    }
  }
  required_mlp(x.has_deep(), p + ".deep", problems);
  required_mlp(x.has_final(), p + ".final", problems);
  if (x.wide_embedding_dim() == 0) problems->add(p + ".wide_embedding_dim", "must be > 0");
}

void validate_mask_net_module(const protos::MaskNetModule& m, const std::string& p, Problems* problems) {
  if (m.n_mask_blocks() < 1) {
    problems->add(p + ".n_mask_blocks", fmt::format("must be >= 1, got {}", m.n_mask_blocks()));
  }
  if (!m.has_mask_block()) {
    problems->add(p + ".mask_block", "required, e.g. mask_block { reduction_ratio: 1.0 hidden_dim: 256 }");
  } else {
    const auto& b = m.mask_block();
    if (b.hidden_dim() < 1) problems->add(p + ".mask_block.hidden_dim", "must be >= 1");
    const float r = b.reduction_ratio();
    if (!std::isfinite(r) || r < 0) {
      problems->add(p + ".mask_block.reduction_ratio", fmt::format("must be a finite number >= 0, got {}", r));
    } else if (r == 0 && b.aggregation_dim() == 0) {
      problems->add(p + ".mask_block", "set reduction_ratio (aggregation dim = input dim × ratio) or, with "
                                       "reduction_ratio: 0, aggregation_dim");
    }
  }
}

void validate_mask_net(const protos::ModelConfig& model, Problems* problems) {
  const std::string p = "model_config.mask_net.mask_net_module";
  if (model.feature_groups_size() == 0) {
    problems->add("model_config.feature_groups", "MaskNet needs a feature group (it uses the first one)");
  }
  if (!model.mask_net().has_mask_net_module()) {
    problems->add(p, "required, e.g. mask_net_module { n_mask_blocks: 3 mask_block { hidden_dim: 256 } top_mlp { "
                     "hidden_units: [128] } }");
    return;
  }
  validate_mask_net_module(model.mask_net().mask_net_module(), p, problems);
}

}  // namespace tzrec::config::detail
