#include "embedding/embedding_bag_collection.h"

#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "embedding/table_memory.h"
#include "embedding/touched_rows.h"

namespace tzrec::embedding {
namespace {

void check_module_name(const std::string& name, const std::string& what) {
  if (name.empty() || name.find('.') != std::string::npos) {
    throw ConfigError(fmt::format("{} '{}' must be non-empty and must not contain '.'", what, name));
  }
}

}  // namespace

EmbeddingBagCollectionImpl::EmbeddingBagCollectionImpl(std::vector<TableConfig> tables,
                                                       std::vector<BagConfig> bags,
                                                       const std::string& tables_module)
    : table_configs_(std::move(tables)),
      bag_configs_(std::move(bags)),
      deferred_(DeferTableAllocation::active()) {
  std::unordered_map<std::string, int64_t> table_index;
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> holders;
  for (const TableConfig& t : table_configs_) {
    check_module_name(t.name, "embedding table name");
    if (t.num_embeddings <= 0 || t.embedding_dim <= 0) {
      throw ConfigError(fmt::format(
          "embedding table '{}': num_embeddings ({}) and embedding_dim ({}) must be positive", t.name,
          t.num_embeddings, t.embedding_dim));
    }
    if (!table_index.emplace(t.name, static_cast<int64_t>(table_index.size())).second) {
      throw ConfigError(fmt::format("embedding table '{}' is defined twice", t.name));
    }
    auto holder = std::make_shared<torch::nn::Module>();
    if (!deferred_) {
      torch::Tensor w = table_rows({t.num_embeddings, t.embedding_dim}, t.dtype, t.rows_on_demand);
      if (!t.rows_on_demand) init_table_weight(t, w);  // on demand: each row is drawn when taken
      w = holder->register_parameter("weight", w, /*requires_grad=*/t.trainable);
      weights_.push_back(w);
    }
    holders.emplace_back(t.name, holder);
  }
  // "embedding_bags.<table>.weight", TorchRec's EmbeddingBagCollection state-dict layout (or
  // "embeddings.<table>.weight", its EmbeddingCollection's).
  embedding_bags_ = register_module(tables_module, torch::nn::ModuleDict(holders));
  std::unordered_set<std::string> keys;
  for (const BagConfig& b : bag_configs_) {
    auto it = table_index.find(b.table_name);
    if (it == table_index.end()) {
      throw ConfigError(fmt::format("feature '{}' uses embedding table '{}', which is not defined",
                                    b.feature_name, b.table_name));
    }
    if (b.pooling != "sum" && b.pooling != "mean") {
      throw ConfigError(fmt::format("feature '{}': pooling must be \"sum\" or \"mean\", got \"{}\"",
                                    b.feature_name, b.pooling));
    }
    if (!keys.insert(b.key()).second) {
      throw ConfigError(fmt::format("embedding bag output key '{}' (feature '{}') is used twice",
                                    b.key(), b.feature_name));
    }
    bag_table_index_.push_back(it->second);
  }
}

std::vector<int64_t> EmbeddingBagCollectionImpl::bag_dims() const {
  std::vector<int64_t> dims;
  for (int64_t t : bag_table_index_) dims.push_back(table_configs_[t].embedding_dim);
  return dims;
}

FusedEmbeddingBags& EmbeddingBagCollectionImpl::enable_fused_optimizer(
    const FusedOptimizerOptions& options) {
  TORCH_CHECK(!fused_, "enable_fused_optimizer() called twice");
  TORCH_CHECK(!deferred_, "enable_fused_optimizer() on a collection with deferred (sharded) tables");
  std::vector<FusedTableSpec> tables;
  for (size_t t = 0; t < table_configs_.size(); ++t) {
    tables.push_back(FusedTableSpec{table_configs_[t].name, weights_[t], table_configs_[t].trainable,
                                    table_configs_[t].rows_on_demand});
  }
  std::vector<FusedFeatureSpec> features;
  for (const BagConfig& b : bag_configs_) {
    features.push_back(FusedFeatureSpec{b.feature_name, b.table_name, b.pooling});
  }
  fused_ = std::make_unique<FusedEmbeddingBags>(std::move(tables), std::move(features), options);
  return *fused_;
}

std::vector<FusedFeatureInput> EmbeddingBagCollectionImpl::fused_inputs(
    const sparse::KeyedJaggedTensor& kjt) const {
  std::vector<FusedFeatureInput> inputs;
  inputs.reserve(bag_configs_.size());
  for (const BagConfig& bag : bag_configs_) {
    if (!kjt.contains(bag.feature_name)) {
      throw DataError(fmt::format("sparse features of the batch have no feature '{}' (table '{}')",
                                  bag.feature_name, bag.table_name));
    }
    sparse::JaggedTensor jt = kjt[bag.feature_name];
    FusedFeatureInput in;
    in.ids = jt.values;
    in.lengths = jt.lengths;
    if (bag.weighted && jt.weights.defined()) in.weights = jt.weights;
    inputs.push_back(std::move(in));
  }
  return inputs;
}

sparse::KeyedTensor EmbeddingBagCollectionImpl::forward_fused(const sparse::KeyedJaggedTensor& kjt) {
  std::vector<std::string> keys;
  for (const BagConfig& bag : bag_configs_) keys.push_back(bag.key());
  std::vector<FusedFeatureInput> inputs = fused_inputs(kjt);
  torch::Tensor pooled = sharded_ ? sharded_->forward(inputs) : fused_->forward(inputs);
  return sparse::KeyedTensor(std::move(keys), bag_dims(), std::move(pooled));
}

void EmbeddingBagCollectionImpl::attach_sharded(std::shared_ptr<ShardedLookup> lookup) {
  TORCH_CHECK(deferred_, "attach_sharded() needs a collection built under DeferTableAllocation");
  TORCH_CHECK(!sharded_, "attach_sharded() called twice");
  sharded_ = std::move(lookup);
}

void EmbeddingBagCollectionImpl::track_touched_rows() {
  if (sharded_) {
    sharded_->track_touched_rows();
  } else if (fused_) {
    fused_->track_touched_rows();
  } else {
    throw NotSupportedError("touched-row tracking of an embedding collection outside fused training");
  }
}

torch::Tensor EmbeddingBagCollectionImpl::take_touched_rows(size_t t) {
  TORCH_CHECK(t < table_configs_.size(), "take_touched_rows: no table ", t);
  if (sharded_) return sharded_->take_touched_rows(t);
  TORCH_CHECK(fused_, "take_touched_rows: the collection is not in fused mode");
  return fused_->take_touched_rows(t);  // fused tables are the configs, in order
}

torch::Tensor EmbeddingBagCollectionImpl::read_rows(size_t t, const torch::Tensor& rows) {
  TORCH_CHECK(t < table_configs_.size(), "read_rows: no table ", t);
  if (sharded_) return sharded_->read_rows(t, rows);
  if (fused_) return fused_->read_rows(t, rows);
  return read_weight_rows(weights_.at(t), rows);
}

sparse::KeyedTensor EmbeddingBagCollectionImpl::forward(const sparse::KeyedJaggedTensor& kjt) {
  if (bag_configs_.empty()) return sparse::KeyedTensor();
  if (fused_ || sharded_) return forward_fused(kjt);
  TORCH_CHECK(!deferred_, "EmbeddingBagCollection: tables are deferred but no sharded lookup is attached");
  const int64_t batch_size = kjt.stride();
  std::vector<std::string> keys;
  std::vector<torch::Tensor> pooled;
  keys.reserve(bag_configs_.size());
  pooled.reserve(bag_configs_.size());
  for (size_t i = 0; i < bag_configs_.size(); ++i) {
    const BagConfig& bag = bag_configs_[i];
    const TableConfig& table = table_configs_[bag_table_index_[i]];
    const torch::Tensor& weight = weights_[bag_table_index_[i]];
    if (!kjt.contains(bag.feature_name)) {
      throw DataError(fmt::format("sparse features of the batch have no feature '{}' (table '{}')",
                                  bag.feature_name, table.name));
    }
    sparse::JaggedTensor jt = kjt[bag.feature_name];
    torch::Tensor ids = jt.values.to(weight.device(), torch::kInt64);  // [sum(L)]
    torch::Tensor lengths = jt.lengths.to(weight.device(), torch::kInt64);  // [B]
    TORCH_CHECK(lengths.size(0) == batch_size, "feature ", bag.feature_name, " has ", lengths.size(0),
                " rows, expected ", batch_size);
    // Explicit bounds check: embedding_bag would read out of bounds (or abort) on a bad id.
    if (ids.numel() > 0) {
      int64_t min_id = ids.min().item<int64_t>();
      int64_t max_id = ids.max().item<int64_t>();
      if (min_id < 0 || max_id >= table.num_embeddings) {
        int64_t bad = min_id < 0 ? min_id : max_id;
        throw DataError(fmt::format(
            "feature '{}': id {} is outside embedding table '{}' with num_embeddings {}; ids must be "
            "in [0, {}) (check the feature's num_buckets / hash_bucket_size)",
            bag.feature_name, bad, table.name, table.num_embeddings, table.num_embeddings));
      }
    }
    torch::Tensor offsets = torch::zeros({batch_size + 1}, lengths.options());  // [B + 1]
    if (batch_size > 0) offsets.slice(0, 1).copy_(torch::cumsum(lengths, 0));
    // float16 storage (data_type FP16): pool the touched rows in float32, as the fused kernels do.
    torch::Tensor pool_weight = weight;
    if (weight.scalar_type() != torch::kFloat32) {
      pool_weight = weight.index_select(0, ids).to(torch::kFloat32);  // [sum(L), dim]
      ids = torch::arange(ids.numel(), ids.options());
    }
    torch::Tensor per_sample_weights;
    if (bag.weighted && jt.weights.defined()) {
      per_sample_weights = jt.weights.to(weight.device(), torch::kFloat32);  // [sum(L)]
    }
    // Mode sum always: FBGEMM/TorchRec mean pooling is sum(w_i * e_i) / L (divides by the id count,
    // also for weighted ids), which embedding_bag's mean mode cannot express with weights.
    // sparse=true makes the weight gradient a sparse [rows, dim] tensor with one row per id.
    auto result = torch::embedding_bag(pool_weight, ids, offsets, /*scale_grad_by_freq=*/false,
                                       /*mode=*/0, /*sparse=*/true, per_sample_weights,
                                       /*include_last_offset=*/true);
    torch::Tensor out = std::get<0>(result);  // [B, dim]
    if (bag.pooling == "mean") {
      torch::Tensor denom = lengths.clamp_min(1).to(out.scalar_type()).unsqueeze(1);  // [B, 1]
      out = out / denom;
    }
    keys.push_back(bag.key());
    pooled.push_back(out);
  }
  return sparse::KeyedTensor::from_tensors(keys, pooled);
}

std::vector<EmbeddingTable> EmbeddingBagCollectionImpl::tables() {
  std::vector<EmbeddingTable> out;
  if (deferred_) return out;
  for (size_t t = 0; t < table_configs_.size(); ++t) {
    out.push_back(EmbeddingTable{table_configs_[t].name, weights_[t], table_configs_[t].trainable});
  }
  return out;
}

torch::Tensor EmbeddingBagCollectionImpl::table_weight(size_t t) {
  TORCH_CHECK(!deferred_, "EmbeddingBagCollection::table_weight: the tables are deferred (sharded)");
  return weights_.at(t);
}

namespace {
thread_local bool defer_tables = false;
thread_local int defer_world_size = 1;
}  // namespace

DeferTableAllocation::DeferTableAllocation(int world_size)
    : previous_(defer_tables), previous_world_size_(defer_world_size) {
  defer_tables = true;
  defer_world_size = world_size;
}
DeferTableAllocation::~DeferTableAllocation() {
  defer_tables = previous_;
  defer_world_size = previous_world_size_;
}
bool DeferTableAllocation::active() { return defer_tables; }
int DeferTableAllocation::world_size() { return defer_world_size; }

}  // namespace tzrec::embedding
