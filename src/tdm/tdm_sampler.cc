#include "tdm/tdm_sampler.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <unordered_set>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "tzrec/protos/data.pb.h"

namespace tzrec::tdm {
namespace {

// graphlearn's NegativeSamplingRetryTimes flag (default 5).
constexpr int kRetryTimes = 5;

// "<file> line <n>" of the first text line holding edge src -> dst (the header is line 1), or
// the file list when the edge is not found as text (Parquet tables).
std::string locate_edge(const data::EdgeTable& edges, const std::string& field_delimiter, bool hash_ids, int64_t src,
                        int64_t dst) {
  auto is_key = [&](std::string_view text, int64_t key) {
    const std::optional<int64_t> k = data::sampler_key_of_text(text, hash_ids);
    return k && *k == key;
  };
  for (const std::string& file : edges.files()) {
    std::ifstream in(file, std::ios::binary);
    char magic[4] = {0, 0, 0, 0};
    in.read(magic, 4);
    if (std::string_view(magic, 4) == "PAR1") continue;
    in.clear();
    in.seekg(0);
    std::string line;
    int64_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (number == 1) continue;
      const size_t a = line.find_first_of(field_delimiter);
      if (a == std::string::npos) continue;
      const size_t b = line.find_first_of(field_delimiter, a + 1);
      if (is_key(std::string_view(line).substr(0, a), src) &&
          is_key(std::string_view(line).substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1), dst)) {
        return fmt::format("{} line {}", file, number);
      }
    }
  }
  return edges.path();
}

}  // namespace

std::optional<TdmSamplerConfig> tdm_sampler_config(const protos::DataConfig& dc) {
  if (dc.sampler_case() != protos::DataConfig::kTdmSampler) return std::nullopt;
  const auto& m = dc.tdm_sampler();
  TdmSamplerConfig c;
  const std::string& path = c.config_path;
  auto require = [&](bool ok, const char* field, const char* what) {
    if (!ok) throw ConfigError(fmt::format("{}.{}: {}", path, field, what));
  };
  require(!m.item_input_path().empty(), "item_input_path",
          "is empty; set it to the tree's node table (tzrec tdm_init_tree writes node_table.txt)");
  require(!m.edge_input_path().empty(), "edge_input_path",
          "is empty; set it to the tree's edge table (tzrec tdm_init_tree writes edge_table.txt)");
  require(!m.item_id_field().empty(), "item_id_field", "is empty; name the input column holding the items' ids");
  require(m.layer_num_sample_size() > 0, "layer_num_sample",
          "is empty; give the negatives per tree level, root first (0), e.g. [0, 1, 2, 4]");
  if (m.has_num_eval_sample()) throw NotSupportedError(path + ".num_eval_sample");
  c.item_input_path = m.item_input_path();
  c.edge_input_path = m.edge_input_path();
  c.predict_edge_input_path = m.predict_edge_input_path();
  c.item_id_field = m.item_id_field();
  c.attr_fields.assign(m.attr_fields().begin(), m.attr_fields().end());
  // TorchEasyRec's TDMSampler: "tree_level" first, item_id_field second.
  if (c.attr_fields.empty() || c.attr_fields[0] != "tree_level") c.attr_fields.insert(c.attr_fields.begin(), "tree_level");
  if (c.attr_fields.size() < 2 || c.attr_fields[1] != c.item_id_field) {
    c.attr_fields.insert(c.attr_fields.begin() + 1, c.item_id_field);
  }
  c.layer_num_sample.assign(m.layer_num_sample().begin(), m.layer_num_sample().end());
  c.attr_delimiter = m.attr_delimiter();
  if (m.has_field_delimiter()) c.field_delimiter = m.field_delimiter();
  c.remain_ratio = m.remain_ratio();
  c.probability_type = m.probability_type();
  c.hash_ids = data::use_hash_node_id_from_env();
  return c;
}

std::shared_ptr<const TdmSampler> TdmSampler::create(const TdmSamplerConfig& config) {
  auto s = std::make_shared<TdmSampler>();
  s->config_ = config;
  const std::string& path = config.config_path;
  if (config.layer_num_sample.empty() || config.layer_num_sample[0] != 0) {
    throw ConfigError(fmt::format("{}.layer_num_sample: the first entry (the root level) must be 0", path));
  }
  {
    std::vector<std::string> seen;
    for (const auto& f : config.attr_fields) {
      if (f.empty() || std::find(seen.begin(), seen.end(), f) != seen.end()) {
        throw ConfigError(fmt::format("{}.attr_fields: '{}' is empty or listed twice; list each item column once, "
                                      "in the order of the node table's attrs",
                                      path, f));
      }
      seen.push_back(f);
    }
  }
  s->tree_ = TreeNodes::load(config);
  const data::SamplerTableOptions opts = table_options(config, path + ".edge_input_path", 0);
  s->edges_ = data::EdgeTable::load(config.edge_input_path, data::EdgeTable::Order::kFileOrder, opts);
  const data::NodeTable& nodes = s->tree_.table();
  const int64_t n = nodes.size();
  const int num_levels = s->tree_.num_levels();
  if (num_levels < 2) {
    throw DataError(fmt::format("{}: the tree has {} level(s); TDM needs a root and leaves", config.item_input_path,
                                num_levels));
  }
  s->by_level_.assign(static_cast<size_t>(num_levels), {});
  for (int64_t i = 0; i < n; ++i) {
    const int l = s->tree_.level_of(i);
    if (l >= 0) s->by_level_[static_cast<size_t>(l)].push_back(i);
  }
  const std::vector<float>& w = nodes.weights();
  for (int l = 0; l < num_levels; ++l) {
    std::vector<float> lw;
    for (int64_t i : s->by_level_[static_cast<size_t>(l)]) lw.push_back(w[static_cast<size_t>(i)]);
    double sum = 0;
    for (float x : lw) sum += x;
    if (lw.empty() || sum <= 0) {
      if (l > 0 && config.layer_num_sample[static_cast<size_t>(l)] > 0) {
        throw DataError(fmt::format("{}: tree level {} has no node with a positive weight to sample negatives from",
                                    config.item_input_path, l));
      }
      s->level_alias_.emplace_back();
      continue;
    }
    s->level_alias_.emplace_back(lw);
  }
  s->all_alias_ = data::AliasTable(w);

  // Ancestors of every leaf, checked.
  const data::EdgeTable& edges = *s->edges_;
  const int middle = num_levels - 2;
  s->leaf_slot_.assign(static_cast<size_t>(n), -1);
  if (middle == 0) {
    for (int64_t i : s->by_level_.back()) s->leaf_slot_[static_cast<size_t>(i)] = 0;
  }
  for (int64_t src_key : edges.src_keys()) {
    const data::EdgeTable::Range r = edges.edges_of(src_key);
    const TreeNodes& tree = s->tree_;
    auto fail = [&](int64_t dst_key, const std::string& what) {
      throw DataError(fmt::format("{} ({}): edge {} -> {}: {}",
                                  locate_edge(edges, config.field_delimiter, config.hash_ids, src_key, dst_key),
                                  opts.config_field, tree.name(src_key), tree.name(dst_key), what));
    };
    const int64_t src = nodes.find(src_key);
    if (src < 0) {
      fail(edges.dst(r.begin), fmt::format("node {} is not in the node table {}", tree.name(src_key), config.item_input_path));
    }
    if (tree.level_of(src) != num_levels - 1) {
      fail(edges.dst(r.begin), fmt::format("node {} is on level {}, not on the leaf level {}; the edge table lists "
                                           "each leaf's ancestors",
                                           tree.name(src_key), tree.level_of(src), num_levels - 1));
    }
    std::vector<int64_t> by_level(static_cast<size_t>(middle), -1);
    for (int64_t e = r.begin; e < r.end; ++e) {
      const int64_t dst_key = edges.dst(e);
      const int64_t dst = nodes.find(dst_key);
      if (dst < 0) fail(dst_key, fmt::format("node {} is not in the node table {}", tree.name(dst_key), config.item_input_path));
      const int l = tree.level_of(dst);
      if (l < 1 || l > middle) {
        fail(dst_key, fmt::format("ancestor {} is on level {}; a leaf's ancestors lie strictly between the root (0) "
                                  "and the leaves ({}) — the edge would make a cycle or skip the tree",
                                  tree.name(dst_key), l, num_levels - 1));
      }
      if (by_level[static_cast<size_t>(l - 1)] >= 0) {
        fail(dst_key, fmt::format("leaf {} has two ancestors on level {} ({} and {})", tree.name(src_key), l,
                                  tree.name(nodes.key(by_level[static_cast<size_t>(l - 1)])), tree.name(dst_key)));
      }
      by_level[static_cast<size_t>(l - 1)] = dst;
    }
    if (r.size() != middle) {
      fail(edges.dst(r.end - 1), fmt::format("leaf {} has {} ancestors; a tree of {} levels gives each leaf {} (one "
                                             "per level but the root's and its own)",
                                             tree.name(src_key), r.size(), num_levels, middle));
    }
    s->leaf_slot_[static_cast<size_t>(src)] = static_cast<int64_t>(s->ancestors_.size()) / std::max(middle, 1);
    s->ancestors_.insert(s->ancestors_.end(), by_level.begin(), by_level.end());
  }

  if (config.remain_ratio < 1.0f) {
    if (middle < 1) {
      throw ConfigError(fmt::format("{}.remain_ratio: {} < 1 keeps a share of the levels between root and leaves, "
                                    "but the tree has none",
                                    path, config.remain_ratio));
    }
    std::vector<double> p(static_cast<size_t>(middle));
    if (config.probability_type == "UNIFORM") {
      for (auto& x : p) x = 1.0 / middle;
    } else if (config.probability_type == "ARITHMETIC") {
      for (int l = 1; l <= middle; ++l) p[static_cast<size_t>(l - 1)] = l;
    } else if (config.probability_type == "RECIPROCAL") {
      for (int l = 1; l <= middle; ++l) p[static_cast<size_t>(l - 1)] = 1.0 / (middle + 1 - l);
    } else {
      throw ConfigError(fmt::format("{}.probability_type: '{}' is not UNIFORM, ARITHMETIC or RECIPROCAL", path,
                                    config.probability_type));
    }
    double sum = 0;
    for (double x : p) sum += x;
    for (auto& x : p) x /= sum;
    s->remain_p_ = std::move(p);
  }
  log::info("{}: {} nodes on {} levels, {} leaves with ancestors", path, n, num_levels,
            middle == 0 ? static_cast<int64_t>(s->by_level_.back().size()) : static_cast<int64_t>(edges.num_sources()));
  return s;
}

const int64_t* TdmSampler::ancestors_of(int64_t node) const {
  if (node < 0) return nullptr;
  const int64_t slot = leaf_slot_[static_cast<size_t>(node)];
  if (slot < 0) return nullptr;
  return ancestors_.data() + slot * (tree_.num_levels() - 2);
}

void TdmSampler::leaf_error(int64_t key, int64_t node, const std::string& where) const {
  if (node < 0) {
    throw DataError(fmt::format("{}: item id {} is not in the tree's node table {} ({}.item_input_path); rebuild the "
                                "tree with every item of the data",
                                where, tree_.name(key), config_.item_input_path, config_.config_path));
  }
  const int level = tree_.level_of(node);
  throw DataError(fmt::format("{}: item id {} is a node on level {} of the tree without ancestors in {} "
                              "({}.edge_input_path); training items must be leaves on the last level ({})",
                              where, tree_.name(key), level, config_.edge_input_path, config_.config_path, tree_.num_levels() - 1));
}

std::vector<int> TdmSampler::choose_levels(data::SamplerRng* rng) const {
  const int middle = tree_.num_levels() - 2;
  std::vector<int> out;
  if (config_.remain_ratio >= 1.0f) {
    for (int l = 1; l <= middle; ++l) out.push_back(l);
    return out;
  }
  // numpy.random.choice(replace=False, p): sequential draws renormalised over the levels left.
  const auto k = static_cast<int>(std::nearbyint(static_cast<double>(config_.remain_ratio) * middle));
  std::vector<double> p = remain_p_;
  for (int draw = 0; draw < k; ++draw) {
    double total = 0;
    for (double x : p) total += x;
    const double u = unit_from_bits(rng->next()) * total;
    double acc = 0;
    int pick = -1;
    for (int i = 0; i < middle; ++i) {
      if (p[static_cast<size_t>(i)] <= 0) continue;
      pick = i;
      acc += p[static_cast<size_t>(i)];
      if (u < acc) break;
    }
    out.push_back(pick + 1);
    p[static_cast<size_t>(pick)] = 0;
  }
  std::sort(out.begin(), out.end());
  return out;
}

void TdmSampler::sample_leaves(const std::vector<int64_t>& leaves, uint64_t seed, TdmSamples* out) const {
  data::SamplerRng rng(seed);
  const auto batch = static_cast<int64_t>(leaves.size());
  out->remain_levels = choose_levels(&rng);
  out->pos_per_row = static_cast<int64_t>(out->remain_levels.size());
  std::vector<int> neg_levels = out->remain_levels;
  neg_levels.push_back(tree_.num_levels() - 1);
  out->neg_per_row = 0;
  for (int l : neg_levels) out->neg_per_row += config_.layer_num_sample[static_cast<size_t>(l)];

  out->pos_nodes.resize(static_cast<size_t>(batch * out->pos_per_row));
  for (int64_t j = 0; j < batch; ++j) {
    const int64_t* anc = ancestors_of(leaves[static_cast<size_t>(j)]);
    for (int64_t k = 0; k < out->pos_per_row; ++k) {
      out->pos_nodes[static_cast<size_t>(j * out->pos_per_row + k)] = anc[out->remain_levels[static_cast<size_t>(k)] - 1];
    }
  }

  out->neg_nodes.assign(static_cast<size_t>(batch * out->neg_per_row), -1);
  std::unordered_set<int64_t> exclude;  // node indices
  std::vector<uint32_t> indices;
  int64_t level_offset = 0;  // within a row's negatives
  for (int l : neg_levels) {
    const auto num = static_cast<int64_t>(config_.layer_num_sample[static_cast<size_t>(l)]);
    if (num == 0) continue;
    exclude.clear();
    indices.resize(static_cast<size_t>(num));
    for (int64_t j = 0; j < batch; ++j) {
      const int64_t leaf = leaves[static_cast<size_t>(j)];
      const int64_t pos = l == tree_.num_levels() - 1 ? leaf : ancestors_of(leaf)[l - 1];
      exclude.insert(pos);
      int64_t* dst = out->neg_nodes.data() + j * out->neg_per_row + level_offset;
      int64_t count = 0;
      // The positive's level (graphlearn's condition on the tree_level attr).
      const int cond = tree_.level_of(pos);
      const data::AliasTable& am = level_alias_[static_cast<size_t>(cond)];
      const std::vector<int64_t>& group = by_level_[static_cast<size_t>(cond)];
      if (am.size() > 0) {
        int retry = kRetryTimes;
        int64_t cursor = 0;
        while (count < num && retry > 0) {
          cursor %= num;
          if (cursor == 0) {
            for (auto& x : indices) x = am.draw(rng.next());
            --retry;
          }
          const int64_t node = group[indices[static_cast<size_t>(cursor++)]];
          if (exclude.count(node) == 0) {
            dst[count++] = node;
            exclude.insert(node);
          }
        }
      }
      int retry = kRetryTimes + 1;
      int64_t cursor = 0;
      while (count < num && retry >= 0) {
        cursor %= num;
        if (cursor == 0) {
          for (auto& x : indices) x = all_alias_.draw(rng.next());
          if (--retry <= 0) exclude.clear();
        }
        const int64_t node = static_cast<int64_t>(indices[static_cast<size_t>(cursor++)]);
        if (exclude.count(node) == 0) {
          dst[count++] = node;
          exclude.insert(node);
        }
      }
      // graphlearn may come back short here (only when the whole table has fewer nodes than
      // `num`); repeat the last draw so every row has its fixed count.
      for (; count < num; ++count) dst[count] = count > 0 ? dst[count - 1] : pos;
    }
    level_offset += num;
  }
}

}  // namespace tzrec::tdm
