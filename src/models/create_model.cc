#include "base/error.h"
#include "models/dbmtl.h"
#include "models/dcn_v1.h"
#include "models/dcn_v2.h"
#include "models/deepfm.h"
#include "models/dlrm.h"
#include "models/mask_net.h"
#include "models/mixed_precision.h"
#include "models/mmoe.h"
#include "models/model.h"
#include "models/multi_tower.h"
#include "models/ple.h"
#include "models/wide_and_deep.h"
#include "models/xdeepfm.h"

namespace tzrec::models {

std::shared_ptr<Model> create_model(const protos::EasyRecConfig& config,
                                    const std::vector<feature::FeatureInfo>& features) {
  if (!config.has_model_config()) {
    throw ConfigError("model_config: missing; add e.g. model_config { feature_groups {...} deepfm {...} }");
  }
  const protos::ModelConfig& mc = config.model_config();
  const auto& dc = config.data_config();
  std::vector<std::string> labels(dc.label_fields().begin(), dc.label_fields().end());
  std::vector<std::string> weights(dc.sample_weight_fields().begin(), dc.sample_weight_fields().end());
  const auto mixed_precision = mixed_precision_dtype(config);
  std::shared_ptr<Model> model;
  switch (mc.model_case()) {
    case protos::ModelConfig::kDeepfm:
      model = std::make_shared<DeepFM>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kMultiTower:
      model = std::make_shared<MultiTower>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kWideAndDeep:
      model = std::make_shared<WideAndDeep>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kDcnV1:
      model = std::make_shared<DCNV1>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kDcnV2:
      model = std::make_shared<DCNV2>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kDlrm:
      model = std::make_shared<DLRM>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kXdeepfm:
      model = std::make_shared<XDeepFM>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kMaskNet:
      model = std::make_shared<MaskNet>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kDbmtl:
      model = std::make_shared<DBMTL>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kPle:
      model = std::make_shared<PLE>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::kMmoe:
      model = std::make_shared<MMoE>(mc, features, labels, weights);
      break;
    case protos::ModelConfig::MODEL_NOT_SET:
      throw ConfigError("model_config: no model set; add one model, e.g. deepfm { deep { hidden_units: [64] } }");
    default: {
      const auto* field = mc.GetDescriptor()->FindFieldByNumber(static_cast<int>(mc.model_case()));
      throw NotSupportedError("model_config." + (field ? field->name() : std::to_string(mc.model_case())));
    }
  }
  model->set_mixed_precision(mixed_precision);
  return model;
}

}  // namespace tzrec::models
