#include "embedding/dense_embedding_collection.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::embedding {

std::string dense_embedding_group_key(const DenseEmbeddingConfig& config) {
  TORCH_CHECK(!config.feature_names.empty(), "dense embedding config without features");
  if (config.options.type == DenseEmbeddingType::kMlp) {
    if (config.value_dim != 1) {
      // TorchEasyRec's key carries the indentation of its source line's continuation: 12 spaces.
      return fmt::format("mlp#{}#vdim#{}#feature_name#            {}", config.embedding_dim, config.value_dim,
                         config.feature_names.front());
    }
    return fmt::format("mlp#{}", config.embedding_dim);
  }
  TORCH_CHECK(config.options.type == DenseEmbeddingType::kAutoDis, "dense embedding config without a type");
  std::string key = fmt::format("autodis#{}#{}#{:.6f}#{:.6f}", config.embedding_dim, config.options.num_channels,
                                static_cast<double>(config.options.keep_prob),
                                static_cast<double>(config.options.temperature));
  std::replace(key.begin(), key.end(), '.', '_');
  return key;
}

std::vector<DenseEmbeddingConfig> merge_same_config_features(const std::vector<DenseEmbeddingConfig>& configs) {
  std::vector<DenseEmbeddingConfig> merged;
  std::unordered_map<std::string, size_t> index;
  for (const DenseEmbeddingConfig& c : configs) {
    auto [it, inserted] = index.emplace(dense_embedding_group_key(c), merged.size());
    if (inserted) {
      merged.push_back(c);
    } else {
      std::vector<std::string>& names = merged[it->second].feature_names;
      names.insert(names.end(), c.feature_names.begin(), c.feature_names.end());
    }
  }
  for (DenseEmbeddingConfig& c : merged) {
    std::sort(c.feature_names.begin(), c.feature_names.end());
    c.feature_names.erase(std::unique(c.feature_names.begin(), c.feature_names.end()), c.feature_names.end());
  }
  return merged;
}

DenseEmbeddingCollectionImpl::DenseEmbeddingCollectionImpl(const std::vector<DenseEmbeddingConfig>& configs)
    : grouped_(merge_same_config_features(configs)) {
  dense_embs_ = register_module("dense_embs", torch::nn::ModuleDict());
  using Entry = std::pair<std::string, std::shared_ptr<torch::nn::Module>>;
  for (const DenseEmbeddingConfig& c : grouped_) {
    Member member;
    std::shared_ptr<torch::nn::Module> module;
    if (c.options.type == DenseEmbeddingType::kAutoDis) {
      member.autodis = AutoDisEmbedding(c.feature_names, c.embedding_dim, c.options.num_channels,
                                        static_cast<double>(c.options.temperature),
                                        static_cast<double>(c.options.keep_prob));
      module = member.autodis.ptr();
    } else {
      member.mlp = MLPEmbedding(c.feature_names, c.embedding_dim, c.value_dim);
      module = member.mlp.ptr();
    }
    dense_embs_->update(std::vector<Entry>{{dense_embedding_group_key(c), module}});
    members_.push_back(std::move(member));
  }
}

std::map<std::string, torch::Tensor> DenseEmbeddingCollectionImpl::forward(const sparse::KeyedTensor& dense_features) {
  std::map<std::string, torch::Tensor> out;
  for (size_t i = 0; i < grouped_.size(); ++i) {
    const DenseEmbeddingConfig& c = grouped_[i];
    std::vector<torch::Tensor> inputs;
    for (const std::string& name : c.feature_names) {
      if (!dense_features.contains(name)) {
        throw DataError(fmt::format("dense features of the batch have no feature '{}' (its {} embedding)", name,
                                    c.options.type == DenseEmbeddingType::kAutoDis ? "autodis" : "mlp"));
      }
      torch::Tensor v = dense_features[name];
      TORCH_CHECK(v.dim() == 2 && v.size(1) == c.value_dim, "dense feature ", name, " must be [B, ", c.value_dim,
                  "], got ", v.sizes());
      inputs.push_back(v.to(torch::kFloat32));
    }
    const torch::Tensor x = inputs.size() == 1 ? inputs[0] : torch::cat(inputs, 1);  // [B, N] or [B, V]
    Member& m = members_[i];
    // [B, N · D] → per feature [B, D]; autocast may have computed in a lower precision.
    const torch::Tensor emb = (m.autodis ? m.autodis->forward(x) : m.mlp->forward(x)).to(torch::kFloat32);
    const std::vector<torch::Tensor> parts = emb.split(c.embedding_dim, 1);
    for (size_t k = 0; k < c.feature_names.size(); ++k) out.emplace(c.feature_names[k], parts[k]);
  }
  return out;
}

}  // namespace tzrec::embedding
