#include "embedding/sequence_embedding_group.h"

#include <algorithm>
#include <type_traits>

#include <fmt/format.h>

#include "base/error.h"
#include "embedding/table_name.h"

namespace tzrec::embedding {
namespace {

// Where each item of B rows with `lengths` (int64 [B]) items each sits: its row and its step,
// both [ΣL].
std::pair<torch::Tensor, torch::Tensor> item_positions(const torch::Tensor& lengths) {
  torch::Tensor row = torch::repeat_interleave(torch::arange(lengths.size(0), lengths.options()), lengths);
  torch::Tensor start = torch::cumsum(lengths, 0) - lengths;
  torch::Tensor step = torch::arange(row.size(0), lengths.options()) - start.index_select(0, row);
  return {row, step};
}

// [B, T, D] from per-item rows [ΣL, D] of B rows with `lengths` items each: item t of row b at
// [b, t] for t < T, zeros elsewhere.
torch::Tensor pad_items(const torch::Tensor& items, const torch::Tensor& lengths, int64_t steps) {
  torch::Tensor out = torch::zeros({lengths.size(0), steps, items.size(1)}, items.options());
  if (items.size(0) == 0 || steps == 0) return out;
  auto [row, t] = item_positions(lengths);
  torch::Tensor keep = t < steps;
  return out.index_put({row.masked_select(keep), t.masked_select(keep)}, items.index({keep}));
}

}  // namespace

SequenceEmbeddingGroupImpl::SequenceEmbeddingGroupImpl(const std::vector<FeatureSpec>& features,
                                                       std::vector<SequenceGroupConfig> groups) {
  std::map<std::string, const FeatureSpec*> by_name;
  for (const FeatureSpec& f : features) by_name[f.name] = &f;
  std::map<int64_t, std::vector<TableConfig>> tables;  // per dim, first-seen order
  std::map<int64_t, std::vector<ZchTableConfig>> zch_tables;  // zero-collision hashed ones
  std::map<int64_t, std::vector<DynamicEmbTableConfig>> dynamic_tables;  // dynamic ones
  struct FirstUse {
    TableConfig config;
    std::string feature;
    std::optional<ZchOptions> zch;
    bool dynamic = false;
  };
  std::map<std::string, FirstUse> table_of;
  std::map<int64_t, std::vector<BagConfig>> bags;
  std::map<int64_t, std::vector<BagConfig>> zch_bags;
  std::map<int64_t, std::vector<BagConfig>> dynamic_bags;
  // The tables each sparse feature looks up (one bag per table, keyed "{feature}@{table}" when
  // several, all reading the feature's one key of the collection's input).
  std::map<std::string, std::set<std::string>> feature_tables;
  std::set<std::string> bag_keys;
  TableSuffixCheck suffixes;
  for (const SequenceGroupConfig& g : groups) {
    for (size_t j = 0; j < g.feature_names.size(); ++j) {
      auto it = by_name.find(g.feature_names[j]);
      if (it == by_name.end() || !it->second->is_sparse) continue;
      const std::string table = group_table_name(*it->second, false, g.embedding_name_suffix);
      suffixes.add(table, g.embedding_name_suffix, it->first, fmt::format("{}.feature_names[{}]", g.path, j));
      feature_tables[it->first].insert(table);
    }
  }
  for (const SequenceGroupConfig& g : groups) {
    TORCH_CHECK(!g.group_name.empty() && index_.count(g.group_name) == 0,
                "SequenceEmbeddingGroup: group names must be set and unique (EmbeddingGroup checks them)");
    Group group;
    group.name = g.group_name;
    group.jagged = g.jagged;
    for (size_t j = 0; j < g.feature_names.size(); ++j) {
      const std::string& name = g.feature_names[j];
      const std::string field = fmt::format("{}.feature_names[{}]", g.path, j);
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        throw ConfigError(fmt::format("{}: unknown feature '{}' (group '{}'); use a feature_name of feature_configs",
                                      field, name, g.group_name));
      }
      const FeatureSpec& f = *it->second;
      const std::string table = group_table_name(f, false, g.embedding_name_suffix);
      const std::string key = f.is_sparse && feature_tables[name].size() > 1 ? name + "@" + table : name;
      Slot slot{name, key, f.is_sparse, f.is_sparse ? f.embedding_dim : f.value_dim};
      if (f.is_sparse) require_embedding_dim(f, g.group_name);
      if (f.is_sparse && bag_keys.insert(key).second) {
        TableConfig t;
        t.name = table;
        t.base_name = base_table_name(f);
        t.num_embeddings = f.num_embeddings;
        t.embedding_dim = f.embedding_dim;
        t.init_fn = f.init_fn;
        t.trainable = f.trainable;
        t.dtype = f.dtype;
        auto [tit, inserted] = table_of.emplace(t.name, FirstUse{t, name, f.zch, f.dynamicemb.has_value()});
        if (inserted) {
          if (f.zch) {
            zch_tables[t.embedding_dim].push_back(ZchTableConfig{t, *f.zch});
            zch_table_names_.insert(t.name);
          } else if (f.dynamicemb) {
            dynamic_tables[t.embedding_dim].push_back(DynamicEmbTableConfig{t, *f.dynamicemb});
            dynamic_table_names_.insert(t.name);
          } else {
            tables[t.embedding_dim].push_back(t);
          }
          table_dim_[t.name] = t.embedding_dim;
        } else {
          const FirstUse& first = tit->second;
          if (first.config.num_embeddings != t.num_embeddings || first.config.embedding_dim != t.embedding_dim) {
            throw ConfigError(fmt::format(
                "{}: features '{}' and '{}' share embedding table '{}' but have {} x {} and {} x {} rows x dim; give "
                "them the same size or different embedding_name",
                field, first.feature, name, t.name, first.config.num_embeddings, first.config.embedding_dim,
                t.num_embeddings, t.embedding_dim));
          }
          check_shared_zch(first.feature, first.zch, name, f.zch, t.name, field);
          check_shared_dynamicemb(first.feature, first.dynamic, name, f.dynamicemb.has_value(), t.name, field);
        }
        BagConfig bag;
        bag.feature_name = name;
        bag.table_name = t.name;
        bag.pooling = f.pooling;
        bag.output_key = key == name ? "" : key;
        bag.weighted = false;  // TorchEasyRec's EmbeddingCollection ignores per-id weights
        (f.zch ? zch_bags : f.dynamicemb ? dynamic_bags : bags)[t.embedding_dim].push_back(bag);
        // The collection's input: each feature once (its bags of several tables read the same key).
        std::vector<std::string>& keys =
            (f.zch ? zch_keys_by_dim_ : f.dynamicemb ? dynamic_keys_by_dim_ : keys_by_dim_)[t.embedding_dim];
        if (std::find(keys.begin(), keys.end(), name) == keys.end()) keys.push_back(name);
        is_sequence_[name] = f.is_sequence;
        if (f.is_sequence) one_id_per_item_[name] = f.value_dim == 1;
      }
      if (f.is_sequence) {
        group.sequence.push_back(slot);
        group.sequence_dim += slot.dim;
      } else {
        group.query.push_back(slot);
        group.query_dim += slot.dim;
      }
    }
    group.path = g.path;
    // A JAGGED_SEQUENCE group of plain features only is the item tower's view in hstu_match's
    // export package (TorchEasyRec's scalar projection of the candidates): just "<g>.query".
    if (group.sequence.empty() && !(g.jagged && !group.query.empty())) {
      throw ConfigError(fmt::format("{}.feature_names: sequence group '{}' has no sequence feature; add a "
                                    "sequence_feature sub-feature or a sequence_* feature",
                                    g.path, g.group_name));
    }
    index_[group.name] = groups_.size();
    groups_.push_back(std::move(group));
  }
  // One collection per dim in a ModuleDict `name` (registered when there is a collection): the
  // plain tables in TorchEasyRec's ec_dict, the zch tables in its mc_ec_dict
  // (ManagedCollisionEmbeddingCollections), the dynamic tables in dynamicemb_ec_dict.
  auto build = [this](const char* name, auto& tables_by_dim, auto& bags_by_dim, auto& out, bool always) {
    using Holder = typename std::remove_reference_t<decltype(out)>::mapped_type;
    if (tables_by_dim.empty() && !always) return;
    auto dict = register_module(name, torch::nn::ModuleDict());
    for (auto& [dim, dim_tables] : tables_by_dim) {
      Holder c(std::move(dim_tables), std::move(bags_by_dim[dim]), "embeddings");
      using Entry = std::pair<std::string, std::shared_ptr<torch::nn::Module>>;
      dict->update(std::vector<Entry>{{std::to_string(dim), c.ptr()}});
      out.emplace(dim, c);
    }
  };
  build("ec_dict", tables, bags, ebcs_, /*always=*/true);
  build("mc_ec_dict", zch_tables, zch_bags, mc_ebcs_, false);
  build("dynamicemb_ec_dict", dynamic_tables, dynamic_bags, dynamic_ebcs_, false);
}

std::vector<EmbeddingBagCollection> SequenceEmbeddingGroupImpl::collections() const {
  std::vector<EmbeddingBagCollection> out;
  for (const auto& [dim, ebc] : ebcs_) out.push_back(ebc);
  for (const auto& [dim, mc] : mc_ebcs_) out.push_back(mc->embedding_module());
  for (const auto& [dim, d] : dynamic_ebcs_) out.push_back(d->embedding_module());
  return out;
}

std::vector<DynamicEmbeddingBagCollection> SequenceEmbeddingGroupImpl::dynamic_collections() const {
  std::vector<DynamicEmbeddingBagCollection> out;
  for (const auto& [dim, d] : dynamic_ebcs_) out.push_back(d);
  return out;
}

std::vector<ZchEmbeddingBagCollection> SequenceEmbeddingGroupImpl::zch_collections() const {
  std::vector<ZchEmbeddingBagCollection> out;
  for (const auto& [dim, mc] : mc_ebcs_) out.push_back(mc);
  return out;
}

std::vector<EmbeddingTable> SequenceEmbeddingGroupImpl::tables() {
  std::vector<EmbeddingTable> out;
  for (EmbeddingBagCollection& ebc : collections()) {
    for (EmbeddingTable& t : ebc->tables()) out.push_back(std::move(t));
  }
  return out;
}

std::string SequenceEmbeddingGroupImpl::parameter_name_of(const std::string& table) const {
  if (zch_table_names_.count(table) > 0) {
    return fmt::format("mc_ec_dict.{}._embedding_module.embeddings.{}.weight", table_dim_.at(table), table);
  }
  if (dynamic_table_names_.count(table) > 0) {
    return fmt::format("dynamicemb_ec_dict.{}._embedding_module.embeddings.{}.weight", table_dim_.at(table), table);
  }
  return fmt::format("ec_dict.{}.embeddings.{}.weight", table_dim_.at(table), table);
}

const SequenceEmbeddingGroupImpl::Group& SequenceEmbeddingGroupImpl::group_of(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw ConfigError(fmt::format("sequence group '{}' does not exist", name));
  return groups_[it->second];
}

int64_t SequenceEmbeddingGroupImpl::query_dim(const std::string& name) const { return group_of(name).query_dim; }
int64_t SequenceEmbeddingGroupImpl::sequence_dim(const std::string& name) const {
  const Group& g = group_of(name);
  if (g.sequence.empty()) {
    throw ConfigError(fmt::format("{}.feature_names: sequence group '{}' has no sequence feature; add a "
                                  "sequence_feature sub-feature or a sequence_* feature",
                                  g.path, g.name));
  }
  return g.sequence_dim;
}

std::map<std::string, torch::Tensor> SequenceEmbeddingGroupImpl::forward(const sparse::Batch& batch) {
  const int64_t rows = batch.base_rows();
  // T': the longest history among the sparse sequence features looked up here.
  int64_t longest = 0;
  for (const auto& [name, sequence] : is_sequence_) {
    if (!sequence) continue;
    const torch::Tensor& lengths = batch.sequence_lengths.at(name);
    if (lengths.numel() > 0) longest = std::max(longest, lengths.max().item<int64_t>());
  }
  const int64_t steps = std::max<int64_t>(longest, 1);
  const auto long_opts = torch::TensorOptions().dtype(torch::kInt64);
  // Item-level bags: B·T' per feature (see the header), one lookup per dim.
  std::map<std::string, torch::Tensor> looked_up;  // feature → [B·T', dim]
  auto lookup = [&](const std::vector<std::string>& keys, auto& collection) {
    std::vector<sparse::JaggedTensor> jagged;
    for (const std::string& name : keys) {
      const sparse::JaggedTensor in = batch.sparse_features[name];
      torch::Tensor bag_lengths = torch::zeros({rows * steps}, long_opts);
      if (!is_sequence_.at(name)) {
        bag_lengths.index_put_({torch::arange(rows, long_opts) * steps}, in.lengths);  // a row is bag b·T'
      } else {
        const torch::Tensor& items = batch.sequence_lengths.at(name);                   // [B]
        torch::Tensor ids_per_item =
            one_id_per_item_.at(name) ? torch::ones({items.sum().item<int64_t>()}, long_opts)
                                      : batch.sequence_item_lengths.at(name);            // [ΣL]
        auto [row, t] = item_positions(items);
        bag_lengths.index_put_({row * steps + t}, ids_per_item);
      }
      jagged.push_back(sparse::JaggedTensor{in.values, bag_lengths, {}});
    }
    sparse::KeyedTensor pooled = collection->forward(sparse::KeyedJaggedTensor::from_jagged(keys, jagged));
    // One cut of the [B·T', Σ dims] output into per-feature blocks (views). A slice per feature
    // would, in backward, zero-fill and then add one full-width gradient per feature (six
    // [B·T', 96] tensors per step for a 3 + 3 feature group); the cut writes the blocks' gradients
    // into one.
    const std::vector<std::string>& pooled_keys = pooled.keys();
    if (pooled_keys.size() == 1) {
      looked_up[pooled_keys[0]] = pooled.values();
    } else {
      std::vector<torch::Tensor> blocks = pooled.values().split_with_sizes(pooled.length_per_key(), 1);
      for (size_t i = 0; i < pooled_keys.size(); ++i) looked_up[pooled_keys[i]] = blocks[i];
    }
  };
  for (auto& [dim, keys] : keys_by_dim_) lookup(keys, ebcs_.at(dim));
  for (auto& [dim, keys] : zch_keys_by_dim_) lookup(keys, mc_ebcs_.at(dim));
  for (auto& [dim, keys] : dynamic_keys_by_dim_) lookup(keys, dynamic_ebcs_.at(dim));
  std::map<std::string, torch::Tensor> out;
  for (const Group& g : groups_) {
    if (!g.query.empty()) {
      std::vector<torch::Tensor> parts;
      for (const Slot& s : g.query) {
        parts.push_back(s.is_sparse ? looked_up.at(s.key).view({rows, steps, s.dim}).select(1, 0)
                                    : batch.dense_features[s.name]);
      }
      out[g.name + ".query"] = torch::cat(parts, 1);
    }
    if (g.sequence.empty()) continue;  // plain features only (see the constructor)
    const std::string& first = g.sequence.front().name;
    const torch::Tensor& length = batch.sequence_lengths.at(first);
    const int64_t group_steps = length.numel() > 0 ? length.max().item<int64_t>() : 0;
    std::vector<torch::Tensor> parts;
    for (const Slot& s : g.sequence) {
      if (s.is_sparse) {
        torch::Tensor items = looked_up.at(s.key).view({rows, steps, s.dim});
        // (No slice when it would keep every step: its backward would copy the gradient.)
        parts.push_back(group_steps < steps ? items.slice(1, 0, group_steps) : items);
      } else {
        parts.push_back(pad_items(batch.sequence_dense_features.at(s.name), batch.sequence_lengths.at(s.name),
                                  group_steps));
      }
    }
    torch::Tensor sequence = torch::cat(parts, 2);  // [B, T, Ds]
    if (g.jagged) {
      // The valid items only, rows in order: item t of row b at b·T + t.
      auto [row, t] = item_positions(length);
      sequence = sequence.reshape({rows * group_steps, -1}).index_select(0, row * group_steps + t);
    }
    out[g.name + ".sequence"] = sequence;
    out[g.name + ".sequence_length"] = length;
  }
  return out;
}

}  // namespace tzrec::embedding
