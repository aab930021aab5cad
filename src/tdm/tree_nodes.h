// The node table of a TDM tree as the sampler (tdm_sampler.h) and the retrieval (beam_search.h)
// read it: config.item_input_path, each node's attributes — attr_fields joined by
// attr_delimiter, tree_level first — and its level (no torch).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/sampler_table.h"

namespace tzrec::tdm {

struct TdmSamplerConfig;  // tdm_sampler.h

class TreeNodes {
 public:
  // Loads config.item_input_path. Throws DataError naming the file and the node for a tree_level
  // that is not an integer from -1 up (-1: graphlearn's sentinel row), and ConfigError when
  // layer_num_sample does not have one entry per level (the config and the tree do not match).
  static TreeNodes load(const TdmSamplerConfig& config);

  const data::NodeTable& table() const { return *table_; }
  const std::shared_ptr<const data::NodeTable>& table_ptr() const { return table_; }
  const std::vector<int>& levels() const { return levels_; }
  int64_t size() const { return table_->size(); }
  int level_of(int64_t node) const { return levels_[static_cast<size_t>(node)]; }
  int num_levels() const { return num_levels_; }  // 1 + the deepest level
  // Attribute k (index into attr_fields) of a node; empty when the node has fewer.
  std::string_view attr(int64_t node, size_t k) const;
  // A node key for messages: the key itself; with hashed ids the node's id attr (the id as the
  // tables write it), or "<hashed id K>" for a key not in the table.
  std::string name(int64_t key) const;

 private:
  std::shared_ptr<const data::NodeTable> table_;
  std::string attr_delimiter_;
  bool hash_ids_ = false;
  std::vector<int> levels_;  // per node
  int num_levels_ = 0;
};

// Field k of `attrs` split by `delimiter` (any of its characters); empty when there are fewer.
std::string_view node_attr(std::string_view attrs, const std::string& delimiter, size_t k);

// Table-loading options for config's tables (delimiters, threads), naming `field` in errors.
data::SamplerTableOptions table_options(const TdmSamplerConfig& config, const std::string& field, size_t num_attrs);

}  // namespace tzrec::tdm
