#include "tdm/tree_nodes.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "base/error.h"
#include "tdm/tdm_sampler.h"

namespace tzrec::tdm {
namespace {

bool parse_level(std::string_view s, int64_t* out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

data::SamplerTableOptions table_options(const TdmSamplerConfig& config, const std::string& field, size_t num_attrs) {
  data::SamplerTableOptions opts;
  opts.field_delimiter = config.field_delimiter;
  opts.attr_delimiter = config.attr_delimiter;
  opts.num_attrs = num_attrs;
  opts.num_threads = config.load_threads;
  opts.hash_ids = config.hash_ids;
  opts.config_field = field;
  return opts;
}

TreeNodes TreeNodes::load(const TdmSamplerConfig& config) {
  TreeNodes t;
  const std::string field = config.config_path + ".item_input_path";
  t.table_ = data::NodeTable::load(config.item_input_path, data::NodeTable::Kind::kItem,
                                   table_options(config, field, config.attr_fields.size()));
  t.attr_delimiter_ = config.attr_delimiter;
  t.hash_ids_ = config.hash_ids;
  const int64_t n = t.table_->size();
  t.levels_.resize(static_cast<size_t>(n));
  int max_level = -1;
  for (int64_t i = 0; i < n; ++i) {
    int64_t level = 0;
    const std::string_view text = t.attr(i, 0);
    if (!parse_level(text, &level) || level < -1 || level > 4096) {
      throw DataError(fmt::format("{} ({}): node {}: tree_level '{}' (the first attr) is not a level (an integer from "
                                  "-1 up)",
                                  config.item_input_path, field, t.name(t.table_->key(i)), text));
    }
    t.levels_[static_cast<size_t>(i)] = static_cast<int>(level);
    max_level = std::max(max_level, static_cast<int>(level));
  }
  t.num_levels_ = max_level + 1;
  if (static_cast<int>(config.layer_num_sample.size()) != t.num_levels_) {
    throw ConfigError(fmt::format("{}.layer_num_sample: {} entries, but the tree in {} has {} levels (0 .. {}); give "
                                  "one entry per level, root first (the config and the tree files do not match)",
                                  config.config_path, config.layer_num_sample.size(), config.item_input_path,
                                  t.num_levels_, t.num_levels_ - 1));
  }
  return t;
}

std::string_view node_attr(std::string_view attrs, const std::string& delimiter, size_t k) {
  std::string_view text = attrs;
  for (size_t i = 0; i < k; ++i) {
    const size_t p = text.find_first_of(delimiter);
    if (p == std::string_view::npos) return {};
    text.remove_prefix(p + 1);
  }
  const size_t p = text.find_first_of(delimiter);
  return p == std::string_view::npos ? text : text.substr(0, p);
}

std::string_view TreeNodes::attr(int64_t node, size_t k) const {
  return node_attr(table_->attrs(node), attr_delimiter_, k);
}

std::string TreeNodes::name(int64_t key) const {
  if (!hash_ids_) return std::to_string(key);
  const int64_t node = table_->find(key);
  if (node < 0) return fmt::format("<hashed id {}>", key);
  return std::string(attr(node, 1));
}

}  // namespace tzrec::tdm
