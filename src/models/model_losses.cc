// Model losses (reference §7.1): setup from model_config.losses and evaluation per batch.
#include <memory>
#include <unordered_set>

#include "base/error.h"
#include "loss/binary_cross_entropy.h"
#include "loss/binary_focal_loss.h"
#include "loss/jrc_loss.h"
#include "loss/l2_loss.h"
#include "loss/softmax_cross_entropy.h"
#include "models/model.h"
#include "models/model_inputs.h"

namespace tzrec::models {

void Model::init_losses() {
  std::unordered_set<std::string> names;
  for (int i = 0; i < model_config_.losses_size(); ++i) {
    const protos::LossConfig& cfg = model_config_.losses(i);
    const std::string path = fmt::format("model_config.losses[{}]", i);
    const std::string type = detail::oneof_field(cfg, "loss");
    if (type.empty()) {
      const std::string sid = detail::oneof_field(cfg, "sid_loss");
      if (!sid.empty()) throw NotSupportedError(fmt::format("{}.{}", path, sid));
      throw ConfigError(fmt::format("{}: no loss set; use e.g. binary_cross_entropy {{}}", path));
    }
    if (!names.insert(type).second) {
      throw ConfigError(fmt::format("{}: loss {} is configured twice", path, type));
    }
    const bool binary = type == "binary_cross_entropy" || type == "binary_focal_loss" || type == "l2_loss";
    const bool softmax = type == "softmax_cross_entropy" || type == "jrc_loss";
    if (!binary && !softmax) throw NotSupportedError(fmt::format("{}.{}", path, type));
    if (binary && num_class_ != 1) {
      throw ConfigError(fmt::format(
          "model_config.num_class: must be 1 with loss {}, got {}; use softmax_cross_entropy for num_class > 1", type,
          num_class_));
    }
    if (type == "softmax_cross_entropy" && num_class_ < 2) {
      throw ConfigError(fmt::format(
          "{}.softmax_cross_entropy: needs model_config.num_class > 1 (the number of classes), got {}; use "
          "binary_cross_entropy for a binary model with num_class 1",
          path, num_class_));
    }
    if (type == "jrc_loss" && num_class_ != 2) {
      throw ConfigError(fmt::format("{}.jrc_loss: needs model_config.num_class 2, got {}", path, num_class_));
    }

    LossEntry entry;
    entry.name = type;
    entry.input = type == "l2_loss" ? "y" : "logits";
    const std::string label_name = label_name_;
    const int64_t num_class = num_class_;
    try {
      if (type == "binary_cross_entropy") {
        has_binary_loss_ = true;
        loss::BinaryCrossEntropyOptions opts;
        opts.label_smoothing = cfg.binary_cross_entropy().label_smoothing();
        auto bce = std::make_shared<loss::BinaryCrossEntropy>(opts);
        entry.compute = [bce](const torch::Tensor& p, const torch::Tensor& y, const torch::Tensor& w,
                              const sparse::Batch&) { return (*bce)(p, y, w); };
      } else if (type == "binary_focal_loss") {
        has_binary_loss_ = true;
        auto focal = std::make_shared<loss::BinaryFocalLoss>(
            loss::BinaryFocalLossOptions{cfg.binary_focal_loss().gamma(), cfg.binary_focal_loss().alpha()});
        entry.compute = [focal](const torch::Tensor& p, const torch::Tensor& y, const torch::Tensor& w,
                                const sparse::Batch&) { return (*focal)(p, y, w); };
      } else if (type == "l2_loss") {
        has_l2_loss_ = true;
        entry.compute = [](const torch::Tensor& p, const torch::Tensor& y, const torch::Tensor& w,
                           const sparse::Batch&) { return loss::l2_loss(p, y, w); };
      } else if (type == "softmax_cross_entropy") {
        has_softmax_loss_ = true;
        auto ce = std::make_shared<loss::SoftmaxCrossEntropy>(
            loss::SoftmaxCrossEntropyOptions{cfg.softmax_cross_entropy().label_smoothing()});
        entry.compute = [ce, num_class, label_name](const torch::Tensor& p, const torch::Tensor& y,
                                                    const torch::Tensor& w, const sparse::Batch&) {
          return (*ce)(p, loss::class_labels(y, num_class, label_name).to(p.device()), w);
        };
      } else {  // jrc_loss
        has_softmax_loss_ = true;
        const std::string session = cfg.jrc_loss().session_name();
        if (session.empty()) {
          throw ConfigError("jrc_loss.session_name: required; name the sparse feature holding the session id");
        }
        auto jrc = std::make_shared<loss::JrcLoss>(loss::JrcLossOptions{cfg.jrc_loss().alpha()});
        const std::string what = path + ".jrc_loss.session_name";
        entry.compute = [jrc, label_name, session, what](const torch::Tensor& p, const torch::Tensor& y,
                                                        const torch::Tensor& w, const sparse::Batch& batch) {
          torch::Tensor sessions = detail::first_id_per_row(batch, session, what).to(p.device());  // [B]
          return (*jrc)(p, loss::class_labels(y, 2, label_name).to(p.device()), sessions, w);
        };
      }
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}.{}", path, e.what()));
    }
    losses_.push_back(std::move(entry));
  }
  if (losses_.empty()) {
    throw ConfigError("model_config.losses: at least one loss is required, e.g. losses { binary_cross_entropy {} }");
  }
}

TensorMap Model::loss(const TensorMap& predictions, const sparse::Batch& batch) {
  const torch::Tensor& label = batch_label(batch);
  torch::Tensor weight;
  if (!sample_weight_name_.empty()) {
    auto it = batch.sample_weights.find(sample_weight_name_);
    if (it == batch.sample_weights.end()) {
      throw DataError(fmt::format(
          "batch has no sample weight '{}' (data_config.sample_weight_fields); check the input columns",
          sample_weight_name_));
    }
    weight = it->second;
  }
  TensorMap losses;
  for (const LossEntry& l : losses_) {
    auto it = predictions.find(l.input);
    TORCH_CHECK(it != predictions.end(), "loss ", l.name, ": predictions have no '", l.input, "'");
    losses[l.name] = l.compute(it->second, label, weight, batch);
  }
  for (const auto& [name, penalty] : feature_p_losses_) losses[name] = penalty;
  return losses;
}

}  // namespace tzrec::models
