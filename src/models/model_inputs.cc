#include "models/model_inputs.h"

#include "base/error.h"

namespace tzrec::models::detail {

std::string oneof_field(const google::protobuf::Message& msg, const std::string& oneof_name) {
  const auto* oneof = msg.GetDescriptor()->FindOneofByName(oneof_name);
  if (oneof == nullptr) return "";
  const auto* field = msg.GetReflection()->GetOneofFieldDescriptor(msg, oneof);
  return field == nullptr ? "" : field->name();
}

torch::Tensor first_id_per_row(const sparse::Batch& batch, const std::string& feature, const std::string& what,
                               bool* any_empty) {
  if (!batch.sparse_features.contains(feature)) {
    throw DataError(fmt::format(
        "{} '{}' is not a sparse feature of the batch; use the name of an id feature in feature_configs", what,
        feature));
  }
  sparse::JaggedTensor jt = batch.sparse_features[feature];
  torch::Tensor lengths = jt.lengths.to(torch::kCPU);
  torch::Tensor values = jt.values.to(torch::kCPU, torch::kInt64);
  torch::Tensor starts = jt.offsets().to(torch::kCPU).slice(0, 0, lengths.size(0));  // [B]
  torch::Tensor has_id = lengths > 0;                                                  // [B]
  torch::Tensor first = values.numel() == 0 ? torch::zeros({lengths.size(0)}, torch::kInt64)
                                            : values.index_select(0, starts.clamp_max(values.numel() - 1));
  if (any_empty != nullptr) *any_empty = !has_id.all().item<bool>();
  torch::Tensor ids = torch::where(has_id, first, torch::zeros_like(first));
  if (batch.prediction_repeats.defined()) ids = ids.repeat_interleave(batch.prediction_repeats.to(torch::kCPU));
  return ids;
}

void throw_recall_at_k_not_supported(const std::string& path) {
  throw NotSupportedError(fmt::format(
      "{}.recall_at_k: needs a match model's similarity output; rank models (deepfm, multi_tower) have none, "
      "remove the metric",
      path));
}

void rethrow_metric_error(const ConfigError& e, const std::string& path) {
  const std::string msg = e.what();
  if (msg.rfind("model_config.", 0) == 0) throw;  // the exception being handled, type intact
  const std::string local = msg.rfind("metrics.", 0) == 0 ? msg.substr(8) : msg;
  throw ConfigError(fmt::format("{}.{}", path, local));
}

}  // namespace tzrec::models::detail
