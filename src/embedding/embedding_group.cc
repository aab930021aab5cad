#include "embedding/embedding_group.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/ranges.h>

#include "base/error.h"
#include "embedding/table_name.h"

namespace tzrec::embedding {

EmbeddingGroupDataImpl::EmbeddingGroupDataImpl(EmbeddingBagCollection ebc_module, DenseEmbeddingCollection dense,
                                               ZchEmbeddingBagCollection mc, DynamicEmbeddingBagCollection dynamic)
    : ebc(register_module("ebc", std::move(ebc_module))) {
  if (dense) dense_ec = register_module("dense_ec", std::move(dense));
  if (mc) mc_ebc = register_module("mc_ebc", std::move(mc));
  if (dynamic) dynamicemb_ebc = register_module("dynamicemb_ebc", std::move(dynamic));
}

namespace {

// "<path>.<field>" for errors about group g: its config path, or its name when it has none.
std::string where(const FeatureGroupConfig& g, const std::string& field) {
  if (!g.path.empty()) return g.path + "." + field;
  return fmt::format("feature group '{}' {}", g.group_name, field);
}

// A table as requested by one feature of one group (used to detect conflicting shared tables).
struct TableRequest {
  TableConfig config;
  std::string pooling;
  std::string feature;  // first feature that requested the table
  std::optional<ZchOptions> zch;
  bool dynamic = false;
};

// TorchEasyRec's rules for the sequence groups nested in DEEP groups (§5.9): fills in the names
// and encoder inputs left to their defaults and throws ConfigError for the rest. `taken`: the
// sequence group names so far (SEQUENCE groups' and nested ones'), name → path.
void resolve_nested_sequence_groups(FeatureGroupConfig& g, std::map<std::string, std::string>& taken) {
  if (g.sequence_groups.empty() && g.sequence_encoders.empty()) return;
  if (g.type != GroupType::kDeep) {
    throw ConfigError(fmt::format("{}: group '{}' is {}; sequence_groups and sequence_encoders belong in a DEEP group",
                                  where(g, g.sequence_groups.empty() ? "sequence_encoders" : "sequence_groups"),
                                  g.group_name, g.type == GroupType::kWide ? "WIDE" : "SEQUENCE"));
  }
  if (g.sequence_encoders.empty()) {
    throw ConfigError(fmt::format("{}: group '{}' has sequence_groups but no sequence_encoders; add one per sequence "
                                  "group, e.g. sequence_encoders {{ din_encoder {{ attn_mlp {{ hidden_units: [64] }} }} }}",
                                  where(g, "sequence_encoders"), g.group_name));
  }
  if (g.sequence_groups.empty()) {
    throw ConfigError(fmt::format("{}: group '{}' has sequence_encoders but no sequence_groups for them to read; add "
                                  "sequence_groups {{ feature_names: ... }}",
                                  where(g, "sequence_groups"), g.group_name));
  }
  std::vector<std::string> names;
  for (size_t k = 0; k < g.sequence_groups.size(); ++k) {
    SequenceGroupConfig& sg = g.sequence_groups[k];
    const std::string field = where(g, fmt::format("sequence_groups[{}]", k));
    if (sg.path.empty()) sg.path = field;
    if (sg.group_name.empty()) {
      if (g.sequence_groups.size() > 1) {
        throw ConfigError(fmt::format("{}.group_name: required when group '{}' has several sequence_groups "
                                      "(its sequence_encoders name them in input)",
                                      field, g.group_name));
      }
      sg.group_name = g.group_name;  // TorchEasyRec: a single unnamed sequence group takes the group's name
    }
    if (auto [it, inserted] = taken.emplace(sg.group_name, field); !inserted) {
      throw ConfigError(fmt::format("{}.group_name: duplicate sequence group name '{}' (also {}); sequence groups "
                                    "need distinct names",
                                    field, sg.group_name, it->second));
    }
    names.push_back(sg.group_name);
  }
  std::set<std::string> encoded;
  for (size_t i = 0; i < g.sequence_encoders.size(); ++i) {
    SequenceEncoderConfig& e = g.sequence_encoders[i];
    if (e.path.empty()) e.path = where(g, fmt::format("sequence_encoders[{}]", i));
    if (e.input.empty()) {
      if (names.size() > 1) {
        throw ConfigError(fmt::format("{}.input: required when group '{}' has several sequence_groups; name one of: {}",
                                      e.path, g.group_name, fmt::join(names, ", ")));
      }
      e.input = names.front();
    }
    if (std::find(names.begin(), names.end(), e.input) == names.end()) {
      throw ConfigError(fmt::format("{}.input: '{}' is not a sequence group of group '{}'; use one of: {}", e.path,
                                    e.input, g.group_name, fmt::join(names, ", ")));
    }
    encoded.insert(e.input);
  }
  for (size_t k = 0; k < names.size(); ++k) {
    if (!encoded.count(names[k])) {
      throw ConfigError(fmt::format("{}: sequence group '{}' of group '{}' has no sequence encoder; add a "
                                    "sequence_encoders entry with input: \"{}\"",
                                    g.sequence_groups[k].path, names[k], g.group_name, names[k]));
    }
  }
}

}  // namespace

EmbeddingGroupImpl::EmbeddingGroupImpl(std::vector<FeatureSpec> features,
                                       std::vector<FeatureGroupConfig> all_groups,
                                       int64_t wide_embedding_dim, const std::string& wide_init_fn,
                                       const SequenceEncoderFactory& encoder_factory) {
  // Group names (of every type) are required and unique.
  std::map<std::string, std::string> group_paths;
  for (const FeatureGroupConfig& g : all_groups) {
    if (g.group_name.empty()) throw ConfigError(where(g, "group_name") + ": required");
    if (auto [it, inserted] = group_paths.emplace(g.group_name, g.path); !inserted) {
      throw ConfigError(fmt::format("{}: duplicate group name '{}'{}", where(g, "group_name"), g.group_name,
                                    it->second.empty() ? "" : " (also " + it->second + ")"));
    }
  }
  // SEQUENCE groups and the sequence groups nested in DEEP groups go to their own collection
  // (sequence_embedding_group.h), in config order.
  std::map<std::string, std::string> sequence_names;
  for (const FeatureGroupConfig& g : all_groups) {
    if (g.type == GroupType::kSequence) sequence_names.emplace(g.group_name, g.path);
  }
  std::vector<FeatureGroupConfig> groups;
  std::vector<SequenceGroupConfig> sequence_groups;
  for (FeatureGroupConfig& g : all_groups) {
    resolve_nested_sequence_groups(g, sequence_names);
    if (g.type == GroupType::kSequence || g.type == GroupType::kJaggedSequence) {
      sequence_groups.push_back(
          {g.group_name, g.feature_names, g.path, g.type == GroupType::kJaggedSequence, g.embedding_name_suffix});
    } else {
      sequence_groups.insert(sequence_groups.end(), g.sequence_groups.begin(), g.sequence_groups.end());
      groups.push_back(std::move(g));
    }
  }
  // TorchEasyRec: `wide_embedding_dim or 4`.
  if (wide_embedding_dim <= 0) wide_embedding_dim = 4;
  std::unordered_map<std::string, const FeatureSpec*> by_name;
  for (const FeatureSpec& f : features) by_name[f.name] = &f;
  // TorchEasyRec's sequence groups take a dense feature's raw values while declaring its embedding's
  // width: a dense embedding there cannot work (docs/tzrec-compatibility.md §5.11).
  for (const SequenceGroupConfig& sg : sequence_groups) {
    for (size_t j = 0; j < sg.feature_names.size(); ++j) {
      auto it = by_name.find(sg.feature_names[j]);
      if (it == by_name.end() || it->second->dense_embedding.type == DenseEmbeddingType::kNone) continue;
      throw ConfigError(fmt::format(
          "{}.feature_names[{}]: '{}' has a dense embedding (autodis / mlp), which sequence groups do not apply (as "
          "in TorchEasyRec); use the feature in a DEEP group, or remove its autodis / mlp",
          sg.path.empty() ? "sequence group '" + sg.group_name + "'" : sg.path, j, sg.feature_names[j]));
    }
  }

  auto lookup = [&](const FeatureGroupConfig& g, size_t j) -> const FeatureSpec& {
    const std::string& name = g.feature_names[j];
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      throw ConfigError(fmt::format("{}: unknown feature '{}' (group '{}'); use a feature_name of feature_configs",
                                    where(g, fmt::format("feature_names[{}]", j)), name, g.group_name));
    }
    return *it->second;
  };
  auto table_name_of = [](const FeatureSpec& f, const FeatureGroupConfig& g) {
    return group_table_name(f, g.type == GroupType::kWide, g.embedding_name_suffix);
  };

  // Data groups (§6.5): every feature of a group, nested sequence groups included, belongs to
  // the same one; the DEEP / WIDE groups of each data group share one collection.
  auto neg_names = [&](const std::vector<std::string>& names, bool neg) {
    std::vector<std::string> out;
    for (const std::string& n : names) {
      auto it = by_name.find(n);
      if (it != by_name.end() && it->second->neg == neg) out.push_back(n);
    }
    return out;
  };
  for (const SequenceGroupConfig& sg : sequence_groups) {
    const std::vector<std::string> negs = neg_names(sg.feature_names, true);
    if (!negs.empty()) {
      throw NotSupportedError(fmt::format(
          "{}: sampled item features ({}, data group __NEG__ of the negative sampler's attr_fields) in a sequence "
          "group", sg.path.empty() ? "sequence group '" + sg.group_name + "'" : sg.path, fmt::join(negs, ", ")));
    }
  }
  std::vector<size_t> data_group_of(groups.size());
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const FeatureGroupConfig& g = groups[gi];
    const std::vector<std::string> negs = neg_names(g.feature_names, true);
    const std::vector<std::string> bases = neg_names(g.feature_names, false);
    if (!negs.empty() && !bases.empty()) {
      throw ConfigError(fmt::format(
          "{}: group '{}' mixes sampled item features ({}: the negative sampler's attr_fields, data group "
          "__NEG__) with other features ({}); a feature group reads one data group — put them in separate groups",
          where(g, "feature_names"), g.group_name, fmt::join(negs, ", "), fmt::join(bases, ", ")));
    }
    const bool neg = !negs.empty();
    auto it = std::find_if(data_groups_.begin(), data_groups_.end(), [&](const DataGroup& d) { return d.neg == neg; });
    if (it == data_groups_.end()) it = data_groups_.insert(data_groups_.end(), DataGroup{neg, nullptr, {}, {}, {}});
    it->groups.push_back(gi);
    data_group_of[gi] = static_cast<size_t>(it - data_groups_.begin());
  }
  if (data_groups_.empty()) data_groups_.push_back(DataGroup{false, nullptr, {}, {}, {}});  // only SEQUENCE groups

  for (size_t gi = 0; gi < groups.size(); ++gi) {
    if (groups[gi].feature_names.empty() && groups[gi].sequence_groups.empty()) {
      throw ConfigError(fmt::format("{}: group '{}' has no features", where(groups[gi], "feature_names"),
                                    groups[gi].group_name));
    }
    group_index_[groups[gi].group_name] = gi;
  }
  groups_.resize(groups.size());
  using Entry = std::pair<std::string, std::shared_ptr<torch::nn::Module>>;
  std::vector<Entry> impls;
  for (DataGroup& dg : data_groups_) {
    // Pass 1: which tables each sparse feature uses; a feature used with two different tables gets
    // output key "{feature}@{table}" (TorchEasyRec's shared feature naming), otherwise its name.
    std::map<std::string, std::set<std::string>> feature_tables;
    TableSuffixCheck suffixes;
    for (size_t gi : dg.groups) {
      const FeatureGroupConfig& g = groups[gi];
      for (size_t j = 0; j < g.feature_names.size(); ++j) {
        const FeatureSpec& f = lookup(g, j);
        if (!f.is_sparse) continue;
        const std::string table = table_name_of(f, g);
        suffixes.add(table, g.embedding_name_suffix, f.name, where(g, fmt::format("feature_names[{}]", j)));
        feature_tables[f.name].insert(table);
      }
    }
    std::vector<TableConfig> tables;
    std::vector<DenseEmbeddingConfig> dense_embeddings;  // one per use, merged by the collection
    std::map<std::string, TableRequest> table_requests;
    std::vector<BagConfig> bags;
    std::vector<ZchTableConfig> zch_tables;  // tables of zero-collision hashed features
    std::vector<BagConfig> zch_bags;
    std::vector<DynamicEmbTableConfig> dynamic_tables;  // tables of dynamic embedding features
    std::vector<BagConfig> dynamic_bags;
    std::set<std::string> bag_keys;
    for (size_t gi : dg.groups) {
      const FeatureGroupConfig& g = groups[gi];
      const bool wide = g.type == GroupType::kWide;
      Group group{g.group_name, {}, 0, {}};
      for (size_t j = 0; j < g.feature_names.size(); ++j) {
        const std::string& name = g.feature_names[j];
        const FeatureSpec& f = lookup(g, j);
        Slot slot;
        if (!f.is_sparse) {
          if (f.is_sequence) {
            throw ConfigError(fmt::format(
                "{}: '{}' is a dense sequence feature (value_dim numbers per item); it has no one value per row for "
                "a {} group — use it in a SEQUENCE group",
                where(g, fmt::format("feature_names[{}]", j)), name, wide ? "WIDE" : "DEEP"));
          }
          if (wide) {
            throw ConfigError(fmt::format(
                "{}: WIDE group needs sparse features (id_feature, or raw_feature with boundaries), '{}' is dense; "
                "move it to a DEEP group",
                where(g, fmt::format("feature_names[{}]", j)), name));
          }
          if (f.value_dim <= 0) {
            throw ConfigError(fmt::format("dense feature '{}' has value_dim {}; it must be positive", name,
                                          f.value_dim));
          }
          if (f.dense_embedding.type == DenseEmbeddingType::kNone) {
            slot = Slot{false, name, f.value_dim};
          } else {
            TORCH_CHECK(f.embedding_dim > 0, "dense feature ", name, " has a dense embedding of embedding_dim ",
                        f.embedding_dim);
            const int64_t value_dim = f.dense_embedding.type == DenseEmbeddingType::kAutoDis ? 1 : f.value_dim;
            dense_embeddings.push_back(DenseEmbeddingConfig{f.dense_embedding, f.embedding_dim, value_dim, {name}});
            slot = Slot{false, name, f.embedding_dim, true};
          }
        } else {
          if (!wide) require_embedding_dim(f, g.group_name);  // WIDE tables have wide_embedding_dim
          TableConfig t;
          t.name = table_name_of(f, g);
          t.base_name = base_table_name(f);
          t.num_embeddings = f.num_embeddings;
          t.embedding_dim = wide ? wide_embedding_dim : f.embedding_dim;
          t.init_fn = (wide && !wide_init_fn.empty()) ? wide_init_fn : f.init_fn;
          t.trainable = f.trainable;
          t.dtype = f.dtype;
          auto it = table_requests.find(t.name);
          if (it == table_requests.end()) {
            table_requests.emplace(t.name, TableRequest{t, f.pooling, name, f.zch, f.dynamicemb.has_value()});
            if (f.zch) {
              zch_tables.push_back(ZchTableConfig{t, *f.zch});
              dg.zch_tables.insert(t.name);
            } else if (f.dynamicemb) {
              dynamic_tables.push_back(DynamicEmbTableConfig{t, *f.dynamicemb});
              dg.dynamic_tables.insert(t.name);
            } else {
              tables.push_back(t);
            }
          } else {
            const TableRequest& prev = it->second;
            check_shared_zch(prev.feature, prev.zch, name, f.zch, t.name);
            check_shared_dynamicemb(prev.feature, prev.dynamic, name, f.dynamicemb.has_value(), t.name);
            if (prev.config.num_embeddings != t.num_embeddings || prev.config.embedding_dim != t.embedding_dim ||
                prev.config.init_fn != t.init_fn || prev.config.trainable != t.trainable ||
                prev.pooling != f.pooling || prev.config.dtype != t.dtype) {
              throw ConfigError(fmt::format(
                  "features '{}' and '{}' share embedding table '{}' but disagree on it: "
                  "num_embeddings {} vs {}, embedding_dim {} vs {}, pooling {} vs {}, init_fn \"{}\" vs "
                  "\"{}\", trainable {} vs {}, data_type {} vs {}; give them the same settings or different "
                  "embedding_name",
                  prev.feature, name, t.name, prev.config.num_embeddings, t.num_embeddings,
                  prev.config.embedding_dim, t.embedding_dim, prev.pooling, f.pooling, prev.config.init_fn,
                  t.init_fn, prev.config.trainable, t.trainable, data_type_name(prev.config.dtype),
                  data_type_name(t.dtype)));
            }
          }
          std::string key = feature_tables[name].size() > 1 ? name + "@" + t.name : name;
          if (bag_keys.insert(key).second) {
            BagConfig bag;
            bag.feature_name = name;
            bag.table_name = t.name;
            bag.pooling = f.pooling;
            bag.output_key = key == name ? "" : key;
            bag.weighted = f.weighted;
            (f.zch ? zch_bags : f.dynamicemb ? dynamic_bags : bags).push_back(bag);
          }
          slot = Slot{true, key, t.embedding_dim};
        }
        group.total_dim += slot.dim;
        group.slots.push_back(slot);
      }
      groups_[gi] = std::move(group);
    }
    dg.data = EmbeddingGroupData(EmbeddingBagCollection(std::move(tables), std::move(bags)),
                                 dense_embeddings.empty() ? DenseEmbeddingCollection(nullptr)
                                                          : DenseEmbeddingCollection(dense_embeddings),
                                 zch_tables.empty() ? ZchEmbeddingBagCollection(nullptr)
                                                    : ZchEmbeddingBagCollection(std::move(zch_tables), std::move(zch_bags)),
                                 dynamic_tables.empty()
                                     ? DynamicEmbeddingBagCollection(nullptr)
                                     : DynamicEmbeddingBagCollection(std::move(dynamic_tables), std::move(dynamic_bags)));
    // "emb_impls.<data group>.ebc.embedding_bags.<table>.weight" as in TorchEasyRec.
    impls.emplace_back(dg.neg ? "__NEG__" : "__BASE__", dg.data.ptr());
  }
  emb_impls_ = register_module("emb_impls", torch::nn::ModuleDict(impls));
  if (sequence_groups.empty()) return;
  sequence_ = SequenceEmbeddingGroup(features, std::move(sequence_groups));
  seq_emb_impls_ = register_module("seq_emb_impls", torch::nn::ModuleDict(std::vector<Entry>{{"__BASE__", sequence_.ptr()}}));
  // "_group_name_to_seq_encoders.<group>.<i>.…" as in TorchEasyRec.
  for (const FeatureGroupConfig& g : groups) {
    if (g.sequence_encoders.empty()) continue;
    TORCH_CHECK(encoder_factory, "EmbeddingGroup: group ", g.group_name, " has sequence encoders but no factory");
    if (!seq_encoders_) seq_encoders_ = register_module("_group_name_to_seq_encoders", torch::nn::ModuleDict());
    Group& group = groups_[group_index_.at(g.group_name)];
    auto list = torch::nn::ModuleList();
    for (size_t i = 0; i < g.sequence_encoders.size(); ++i) {
      const SequenceEncoderConfig& e = g.sequence_encoders[i];
      SequenceEncoderHandle encoder = encoder_factory(SequenceEncoderRequest{
          g.group_name, i, e.path, e.input, sequence_->query_dim(e.input), sequence_->sequence_dim(e.input)});
      list->push_back(encoder.module);
      group.total_dim += encoder.output_dim;
      group.encoders.push_back(std::move(encoder));
    }
    seq_encoders_->update(std::vector<Entry>{{g.group_name, list.ptr()}});
  }
}

const EmbeddingGroupImpl::Group& EmbeddingGroupImpl::group(const std::string& name) const {
  auto it = group_index_.find(name);
  if (it == group_index_.end()) {
    throw ConfigError(fmt::format("feature group '{}' does not exist", name));
  }
  return groups_[it->second];
}

int64_t EmbeddingGroupImpl::group_total_dim(const std::string& name) const {
  return group(name).total_dim;
}

std::vector<int64_t> EmbeddingGroupImpl::group_feature_dims(const std::string& name) const {
  const Group& g = group(name);
  std::vector<int64_t> dims;
  for (const Slot& s : g.slots) dims.push_back(s.dim);
  for (const SequenceEncoderHandle& e : g.encoders) dims.push_back(e.output_dim);
  return dims;
}

std::vector<std::string> EmbeddingGroupImpl::group_names() const {
  std::vector<std::string> names;
  for (const Group& g : groups_) names.push_back(g.name);
  return names;
}

std::vector<EmbeddingGroupImpl::Collection> EmbeddingGroupImpl::collections() const {
  std::vector<Collection> out;
  for (const DataGroup& dg : data_groups_) {
    out.push_back({dg.neg ? kNegTablePrefix : "", dg.data->ebc, ""});
    if (dg.data->mc_ebc) out.push_back({dg.neg ? kNegTablePrefix : "", dg.data->mc_ebc->embedding_module(), "zch"});
    if (dg.data->dynamicemb_ebc) {
      out.push_back({dg.neg ? kNegTablePrefix : "", dg.data->dynamicemb_ebc->embedding_module(), "dynamicemb"});
    }
  }
  if (sequence_) {
    std::map<const void*, std::string> remapping;
    for (const ZchEmbeddingBagCollection& mc : sequence_->zch_collections()) remapping[mc->embedding_module().get()] = "zch";
    for (const DynamicEmbeddingBagCollection& d : sequence_->dynamic_collections()) {
      remapping[d->embedding_module().get()] = "dynamicemb";
    }
    for (const EmbeddingBagCollection& ebc : sequence_->collections()) {
      auto it = remapping.find(ebc.get());
      out.push_back({kSequenceTablePrefix, ebc, it == remapping.end() ? std::string() : it->second});
    }
  }
  return out;
}

std::vector<EmbeddingTable> EmbeddingGroupImpl::tables() {
  std::vector<EmbeddingTable> out;
  for (Collection& c : collections()) {
    for (EmbeddingTable& t : c.ebc->tables()) {
      t.name = c.prefix + t.name;
      out.push_back(std::move(t));
    }
  }
  return out;
}

std::string EmbeddingGroupImpl::parameter_name_of(const std::string& table) const {
  if (table.rfind(kSequenceTablePrefix, 0) == 0) {
    return "seq_emb_impls.__BASE__." + sequence_->parameter_name_of(table.substr(std::strlen(kSequenceTablePrefix)));
  }
  const bool neg = table.rfind(kNegTablePrefix, 0) == 0;
  const std::string name = neg ? table.substr(std::strlen(kNegTablePrefix)) : table;
  const std::string impl = neg ? "emb_impls.__NEG__." : "emb_impls.__BASE__.";
  for (const DataGroup& dg : data_groups_) {
    if (dg.neg == neg && dg.zch_tables.count(name) > 0) {
      return impl + "mc_ebc._embedding_module.embedding_bags." + name + ".weight";
    }
    if (dg.neg == neg && dg.dynamic_tables.count(name) > 0) {
      return impl + "dynamicemb_ebc._embedding_module.embedding_bags." + name + ".weight";
    }
  }
  return impl + "ebc.embedding_bags." + name + ".weight";
}

std::vector<std::pair<std::string, ZchEmbeddingBagCollection>> EmbeddingGroupImpl::zch_collections() const {
  std::vector<std::pair<std::string, ZchEmbeddingBagCollection>> out;
  for (const DataGroup& dg : data_groups_) {
    if (dg.data->mc_ebc) out.emplace_back(dg.neg ? kNegTablePrefix : "", dg.data->mc_ebc);
  }
  if (sequence_) {
    for (const ZchEmbeddingBagCollection& mc : sequence_->zch_collections()) out.emplace_back(kSequenceTablePrefix, mc);
  }
  return out;
}

std::vector<std::pair<std::string, DynamicEmbeddingBagCollection>> EmbeddingGroupImpl::dynamic_collections() const {
  std::vector<std::pair<std::string, DynamicEmbeddingBagCollection>> out;
  for (const DataGroup& dg : data_groups_) {
    if (dg.data->dynamicemb_ebc) out.emplace_back(dg.neg ? kNegTablePrefix : "", dg.data->dynamicemb_ebc);
  }
  if (sequence_) {
    for (const DynamicEmbeddingBagCollection& d : sequence_->dynamic_collections()) {
      out.emplace_back(kSequenceTablePrefix, d);
    }
  }
  return out;
}

void EmbeddingGroupImpl::forward_data_group(DataGroup& dg, const sparse::Batch& batch,
                                            std::map<std::string, torch::Tensor>* out) {
  const sparse::KeyedJaggedTensor& kjt = dg.neg ? batch.neg_sparse_features : batch.sparse_features;
  const sparse::KeyedTensor& dense = dg.neg ? batch.neg_dense_features : batch.dense_features;
  const int64_t batch_size = dg.neg ? batch.neg_batch_size : batch.base_rows();
  sparse::KeyedTensor pooled = dg.data->ebc->forward(kjt);
  // The zero-collision hashed bags, then the dynamic ones, after the plain ones (groups find their
  // columns by key).
  auto append = [&pooled](sparse::KeyedTensor more) {
    if (pooled.keys().empty()) {
      pooled = std::move(more);
    } else if (!more.keys().empty()) {
      std::vector<std::string> keys = pooled.keys();
      keys.insert(keys.end(), more.keys().begin(), more.keys().end());
      std::vector<int64_t> dims = pooled.length_per_key();
      dims.insert(dims.end(), more.length_per_key().begin(), more.length_per_key().end());
      pooled = sparse::KeyedTensor(std::move(keys), std::move(dims), torch::cat({pooled.values(), more.values()}, 1));
    }
  };
  if (dg.data->mc_ebc) append(dg.data->mc_ebc->forward(kjt));
  if (dg.data->dynamicemb_ebc) append(dg.data->dynamicemb_ebc->forward(kjt));
  // Column offset of every bag key in pooled.values() [B, sum(dims)].
  std::unordered_map<std::string, int64_t> column;
  int64_t total = 0;
  for (size_t i = 0; i < pooled.keys().size(); ++i) {
    column[pooled.keys()[i]] = total;
    total += pooled.length_per_key()[i];
  }
  // Each group reads runs of adjacent pooled columns. The pooled output is cut once, at every run
  // boundary of every group, into segments (split_with_sizes: views, whose backward writes the
  // whole gradient once); a run is one segment or the concatenation of several, and groups
  // sharing columns share segments (their gradients add up over those columns only). Slicing the
  // pooled output per run instead costs, in backward, a zero-filled gradient of the whole pooled
  // width per slice plus adds of that width — most of a wide model's step.
  struct Part {
    bool sparse;
    int64_t start = 0, end = 0;  // pooled columns (sparse); width (dense: end)
    std::string dense_key;       // dense feature (not sparse)
    bool embedded = false;       // the dense feature's dense embedding
  };
  std::vector<std::vector<Part>> group_parts(dg.groups.size());
  std::set<int64_t> cuts = {0, total};
  for (size_t i = 0; i < dg.groups.size(); ++i) {
    std::vector<Part>& parts = group_parts[i];
    for (const Slot& s : groups_[dg.groups[i]].slots) {
      if (!s.is_sparse) {
        parts.push_back(Part{false, 0, s.dim, s.key, s.embedded});
        continue;
      }
      const int64_t start = column.at(s.key);
      if (!parts.empty() && parts.back().sparse && parts.back().end == start) {
        parts.back().end += s.dim;
      } else {
        parts.push_back(Part{true, start, start + s.dim, ""});
      }
    }
    for (const Part& part : parts) {
      if (!part.sparse) continue;
      cuts.insert(part.start);
      cuts.insert(part.end);
    }
  }
  std::vector<int64_t> sizes;
  std::unordered_map<int64_t, size_t> segment_at;  // first column → segment index
  for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it) {
    segment_at[*it] = sizes.size();
    sizes.push_back(*std::next(it) - *it);
  }
  std::vector<torch::Tensor> segments;
  if (sizes.size() == 1) {
    segments = {pooled.values()};  // one segment: no split, so no gradient copy in backward
  } else if (total > 0) {
    segments = pooled.values().split_with_sizes(sizes, 1);
  }

  // Each dense-embedded feature's [B, embedding_dim], computed once for all groups using it.
  std::map<std::string, torch::Tensor> embedded;
  if (dg.data->dense_ec) embedded = dg.data->dense_ec->forward(dense);

  for (size_t i = 0; i < dg.groups.size(); ++i) {
    const Group& g = groups_[dg.groups[i]];
    std::vector<torch::Tensor> tensors;
    for (const Part& part : group_parts[i]) {
      if (part.sparse) {
        size_t k = segment_at.at(part.start);
        for (int64_t col = part.start; col < part.end; col += sizes[k++]) tensors.push_back(segments[k]);
        continue;
      }
      if (part.embedded) {
        tensors.push_back(embedded.at(part.dense_key));
        continue;
      }
      if (!dense.contains(part.dense_key)) {
        throw DataError(fmt::format("{}dense features of the batch have no feature '{}' (group '{}')",
                                    dg.neg ? "sampled item (__NEG__) " : "", part.dense_key, g.name));
      }
      torch::Tensor v = dense[part.dense_key];
      TORCH_CHECK(v.dim() == 2 && v.size(1) == part.end, "dense feature ", part.dense_key, " must be [B, ",
                  part.end, "], got ", v.sizes());
      tensors.push_back(v.to(torch::kFloat32));
    }
    if (tensors.empty()) {
      (*out)[g.name] = torch::zeros({batch_size, 0}, torch::kFloat32);
    } else if (tensors.size() == 1) {
      (*out)[g.name] = tensors[0];  // a view of the pooled output or the dense feature: no copy
    } else {
      (*out)[g.name] = torch::cat(tensors, 1);
    }
  }
}

std::map<std::string, torch::Tensor> EmbeddingGroupImpl::forward(const sparse::Batch& batch) {
  std::map<std::string, torch::Tensor> out;
  for (DataGroup& dg : data_groups_) forward_data_group(dg, batch, &out);
  if (sequence_) {
    for (auto& [key, value] : sequence_->forward(batch)) out.emplace(key, std::move(value));
  }
  for (const Group& g : groups_) {
    if (g.encoders.empty()) continue;
    std::vector<torch::Tensor> tensors = {out.at(g.name)};
    for (const SequenceEncoderHandle& e : g.encoders) tensors.push_back(e.forward(out));
    out[g.name] = torch::cat(tensors, 1);
  }
  return out;
}

}  // namespace tzrec::embedding
