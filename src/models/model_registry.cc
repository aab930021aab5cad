// The models, by model_config oneof name: create_model() builds every model through this table. A
// new model is a new file (rank/, multi_task/, ...) with its Model subclass and one line here.
#include <map>
#include <type_traits>

#include "base/error.h"
#include "models/mixed_precision.h"
#include "models/model.h"
#include "models/generative/dlrm_hstu.h"
#include "models/match/dat.h"
#include "models/match/dssm.h"
#include "models/match/dssm_v2.h"
#include "models/match/hstu_match.h"
#include "models/match/mind.h"
#include "models/multi_task/dbmtl.h"
#include "models/multi_task/dc2vr.h"
#include "models/multi_task/mmoe.h"
#include "models/multi_task/pepnet.h"
#include "models/multi_task/ple.h"
#include "models/rank/dcn_v1.h"
#include "models/rank/dcn_v2.h"
#include "models/rank/deepfm.h"
#include "models/rank/dlrm.h"
#include "models/rank/mask_net.h"
#include "models/rank/multi_tower.h"
#include "models/rank/multi_tower_din.h"
#include "models/rank/rocket_launching.h"
#include "models/rank/tdm.h"
#include "models/rank/wide_and_deep.h"
#include "models/rank/wukong.h"
#include "models/rank/xdeepfm.h"
#include "models/sid/sid_rqkmeans.h"
#include "models/sid/sid_rqvae.h"

namespace tzrec::models {
namespace {

using Factory = std::shared_ptr<Model> (*)(const protos::ModelConfig& mc,
                                           const std::vector<feature::FeatureInfo>& features,
                                           std::vector<std::string> labels, std::vector<std::string> weights,
                                           const std::string& tower);

template <class M>
std::shared_ptr<Model> make(const protos::ModelConfig& mc, const std::vector<feature::FeatureInfo>& features,
                            std::vector<std::string> labels, std::vector<std::string> weights,
                            const std::string& tower) {
  if constexpr (std::is_base_of_v<MatchModel, M> || std::is_same_v<M, TDM>) {
    return std::make_shared<M>(mc, features, std::move(labels), std::move(weights), tower);
  } else {
    TORCH_CHECK(tower.empty(), "model without towers built as tower ", tower);
    return std::make_shared<M>(mc, features, std::move(labels), std::move(weights));
  }
}

const std::map<std::string, Factory>& model_types() {
  static const std::map<std::string, Factory> types = {
      // rank/
      {"deepfm", make<DeepFM>},
      {"multi_tower", make<MultiTower>},
      {"multi_tower_din", make<MultiTowerDIN>},
      {"wide_and_deep", make<WideAndDeep>},
      {"dcn_v1", make<DCNV1>},
      {"dcn_v2", make<DCNV2>},
      {"dlrm", make<DLRM>},
      {"xdeepfm", make<XDeepFM>},
      {"mask_net", make<MaskNet>},
      {"wukong", make<WuKong>},
      {"rocket_launching", make<RocketLaunching>},
      {"tdm", make<TDM>},
      // multi_task/
      {"dbmtl", make<DBMTL>},
      {"ple", make<PLE>},
      {"mmoe", make<MMoE>},
      {"pepnet", make<PEPNet>},
      {"dc2vr", make<DC2VR>},
      // generative/
      {"dlrm_hstu", make<DlrmHSTU>},
      {"ultra_hstu", make<UltraHSTU>},
      // match/
      {"dssm", make<DSSM>},
      {"dssm_v2", make<DSSMV2>},
      {"dat", make<DAT>},
      {"mind", make<MIND>},
      {"hstu_match", make<HSTUMatch>},
      // sid/
      {"sid_rqvae", make<SidRqvae>},
      {"sid_rqkmeans", make<SidRqkmeans>},
  };
  return types;
}

}  // namespace

std::shared_ptr<Model> create_model(const protos::EasyRecConfig& config,
                                    const std::vector<feature::FeatureInfo>& features, const std::string& tower) {
  if (!config.has_model_config()) {
    throw ConfigError("model_config: missing; add e.g. model_config { feature_groups {...} deepfm {...} }");
  }
  const protos::ModelConfig& mc = config.model_config();
  const auto* field =
      mc.GetReflection()->GetOneofFieldDescriptor(mc, protos::ModelConfig::descriptor()->FindOneofByName("model"));
  if (field == nullptr) {
    throw ConfigError("model_config: no model set; add one model, e.g. deepfm { deep { hidden_units: [64] } }");
  }
  auto it = model_types().find(field->name());
  if (it == model_types().end()) throw NotSupportedError("model_config." + field->name());
  const auto& dc = config.data_config();
  // Negative samplers feed match models (TorchEasyRec's MatchModel); a rank or multi-task model
  // would read the sampled rows as nothing.
  const auto* sampler =
      dc.GetReflection()->GetOneofFieldDescriptor(dc, protos::DataConfig::descriptor()->FindOneofByName("sampler"));
  // tdm_sampler feeds the tdm model (rows expanded before parsing, feature/tdm_rows.h).
  const bool tdm = field->name() == "tdm";
  if (sampler != nullptr && (sampler->name() == "tdm_sampler") != tdm) {
    throw ConfigError(fmt::format("data_config.{}: {}", sampler != nullptr ? sampler->name() : "tdm_sampler",
                                  tdm ? "the tdm model trains on the rows of data_config.tdm_sampler; use it instead"
                                      : "tdm_sampler feeds the tdm model only; use model_config.tdm"));
  }
  if (sampler != nullptr && !tdm && !is_match_model(mc)) {
    throw ConfigError(fmt::format("data_config.{}: negative samplers feed match models (dssm, dssm_v2, dat, mind, hstu_match); "
                                  "{} is a rank model — remove the sampler or use a match model",
                                  sampler->name(), field->name()));
  }
  if (!tower.empty() && !is_match_model(mc) && !(tdm && tower == TDM::kEmbeddingTower)) {
    throw UsageError(fmt::format("model_config.{} has no towers to build '{}' alone; only match models (dssm, "
                                 "dssm_v2, ...) export towers",
                                 field->name(), tower));
  }
  const auto mixed_precision = mixed_precision_dtype(config);
  std::shared_ptr<Model> model =
      it->second(mc, features, {dc.label_fields().begin(), dc.label_fields().end()},
                 {dc.sample_weight_fields().begin(), dc.sample_weight_fields().end()}, tower);
  model->set_mixed_precision(mixed_precision);
  return model;
}

}  // namespace tzrec::models
