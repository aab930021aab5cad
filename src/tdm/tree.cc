#include "tdm/tree.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "base/error.h"
#include "base/python_float.h"

namespace tzrec::tdm {
namespace {

bool is_integer_type(AttrType t) { return t == AttrType::kInt32 || t == AttrType::kInt64; }
bool is_float_type(AttrType t) { return t == AttrType::kFloat || t == AttrType::kDouble; }

// Per-column mode over the leaves `leaves` (indices into items), see the header.
AttrValue column_mode(const std::vector<TreeItem>& items, const std::vector<int32_t>& leaves, size_t col,
                      AttrType type) {
  if (type == AttrType::kString) {
    // Counts in order of first appearance; index 0 stands for null.
    std::unordered_map<std::string, size_t> index;
    std::vector<std::pair<const AttrValue*, int64_t>> counts;
    int64_t null_slot = -1;
    for (int32_t leaf : leaves) {
      const AttrValue& v = items[static_cast<size_t>(leaf)].attrs[col];
      if (v.is_null) {
        if (null_slot < 0) {
          null_slot = static_cast<int64_t>(counts.size());
          counts.emplace_back(&v, 0);
        }
        ++counts[static_cast<size_t>(null_slot)].second;
        continue;
      }
      auto [it, fresh] = index.emplace(v.s, counts.size());
      if (fresh) counts.emplace_back(&v, 0);
      ++counts[it->second].second;
    }
    const std::pair<const AttrValue*, int64_t>* best = nullptr;
    for (const auto& c : counts) {
      if (best == nullptr || c.second > best->second) best = &c;
    }
    return best == nullptr ? AttrValue::null() : *best->first;
  }
  // Numbers and bools: the most frequent non-null value, ties to the smallest.
  if (is_float_type(type)) {
    std::map<double, int64_t> counts;
    for (int32_t leaf : leaves) {
      const AttrValue& v = items[static_cast<size_t>(leaf)].attrs[col];
      if (!v.is_null && !std::isnan(v.d)) ++counts[v.d];
    }
    const std::pair<const double, int64_t>* best = nullptr;
    for (const auto& c : counts) {
      if (best == nullptr || c.second > best->second) best = &c;
    }
    return best == nullptr ? AttrValue::null() : AttrValue::of_double(best->first);
  }
  std::map<int64_t, int64_t> counts;
  for (int32_t leaf : leaves) {
    const AttrValue& v = items[static_cast<size_t>(leaf)].attrs[col];
    if (!v.is_null) ++counts[v.i];
  }
  const std::pair<const int64_t, int64_t>* best = nullptr;
  for (const auto& c : counts) {
    if (best == nullptr || c.second > best->second) best = &c;
  }
  return best == nullptr ? AttrValue::null() : AttrValue::of_int(best->first);
}

// Per-column mean over the leaves, see the header.
AttrValue column_mean(const std::vector<TreeItem>& items, const std::vector<int32_t>& leaves, size_t col,
                      AttrType type) {
  double sum = 0;
  int64_t isum = 0;
  int64_t count = 0;
  for (int32_t leaf : leaves) {
    const AttrValue& v = items[static_cast<size_t>(leaf)].raw_attrs[col];
    if (v.is_null) continue;
    ++count;
    if (is_integer_type(type)) {
      isum += v.i;
    } else {
      sum += v.d;
    }
  }
  if (count == 0) return AttrValue::null();
  if (is_integer_type(type)) {
    const double mean = static_cast<double>(isum) / static_cast<double>(count);
    return AttrValue::of_int(static_cast<int64_t>(std::nearbyint(mean)));  // half to even
  }
  const double mean = sum / static_cast<double>(count);
  return AttrValue::of_double(type == AttrType::kFloat ? static_cast<double>(static_cast<float>(mean)) : mean);
}

// An item's id for messages.
std::string item_name(const TreeItem& item, TreeIds ids) {
  return ids == TreeIds::kText ? "'" + item.text_id + "'" : std::to_string(item.id);
}

int64_t checked_child(int64_t code, int n, int64_t add) {
  if (code > (std::numeric_limits<int64_t>::max() - add) / n) {
    throw DataError(fmt::format("tdm tree: node code {} overflows int64 at n_cluster {}; use a larger n_cluster",
                                code, n));
  }
  return code * n + add;
}

}  // namespace

const char* attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kInt32: return "int32";
    case AttrType::kInt64: return "int64";
    case AttrType::kFloat: return "float";
    case AttrType::kDouble: return "double";
    case AttrType::kBool: return "bool";
    case AttrType::kString: return "string";
  }
  return "?";
}

std::string python_str(const AttrValue& v, AttrType type, const std::string& null_text) {
  if (v.is_null) return null_text;
  switch (type) {
    case AttrType::kInt32:
    case AttrType::kInt64: return std::to_string(v.i);
    case AttrType::kFloat:
    case AttrType::kDouble: return python_float_repr(v.d);
    case AttrType::kBool: return v.i != 0 ? "True" : "False";
    case AttrType::kString: return v.s;
  }
  return "";
}

Tree build_tree(std::vector<TreeItem> items, std::vector<AttrColumn> attr_columns,
                std::vector<AttrColumn> raw_attr_columns, int n_cluster, TreeIds ids) {
  if (n_cluster < 2) throw ConfigError(fmt::format("n_cluster: {} is below 2; a tree node needs 2 or more children", n_cluster));
  if (items.empty()) throw DataError("tdm tree: the item table has no rows");
  for (const AttrColumn& c : raw_attr_columns) {
    if (!is_integer_type(c.type) && !is_float_type(c.type)) {
      throw DataError(fmt::format("raw_attr_fields column {} is {}; raw attrs are averaged over a node's items and "
                                  "must be integer or floating point (list it in attr_fields instead)",
                                  c.name, attr_type_name(c.type)));
    }
  }
  const int n = n_cluster;
  std::stable_sort(items.begin(), items.end(), [ids](const TreeItem& a, const TreeItem& b) {
    if (a.cate != b.cate) return a.cate < b.cate;
    return ids == TreeIds::kText ? a.text_id < b.text_id : a.id < b.id;
  });
  const auto num_items = static_cast<int64_t>(items.size());

  // 2. leaf codes.
  std::vector<int64_t> codes(items.size(), 0);
  struct Range {
    int64_t start, end, code;
  };
  std::vector<Range> stack{{0, num_items, 0}};
  while (!stack.empty()) {
    const Range r = stack.back();
    stack.pop_back();
    if (r.end <= r.start) continue;
    if (r.end == r.start + 1) {
      codes[static_cast<size_t>(r.start)] = r.code;
      continue;
    }
    const double width = static_cast<double>(r.end - r.start);
    for (int i = 0; i < n; ++i) {
      const auto left = static_cast<int64_t>(static_cast<double>(r.start) + i * width / n);
      const auto right = static_cast<int64_t>(static_cast<double>(r.start) + (i + 1) * width / n);
      stack.push_back({left, right, checked_child(r.code, n, n - i)});
    }
  }

  return build_tree_from_codes(std::move(items), std::move(codes), std::move(attr_columns),
                               std::move(raw_attr_columns), n, ids);
}

Tree build_tree_from_codes(std::vector<TreeItem> items, std::vector<int64_t> codes, std::vector<AttrColumn> attr_columns,
                           std::vector<AttrColumn> raw_attr_columns, int n_cluster, TreeIds ids) {
  if (n_cluster < 2) throw ConfigError(fmt::format("n_cluster: {} is below 2; a tree node needs 2 or more children", n_cluster));
  if (items.empty()) throw DataError("tdm tree: the item table has no rows");
  if (codes.size() != items.size()) throw std::logic_error("build_tree_from_codes: one code per item");
  for (size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] < 0) throw DataError(fmt::format("tdm tree: item {} has no tree code", item_name(items[i], ids)));
  }
  const int n = n_cluster;
  const auto num_items = static_cast<int64_t>(items.size());
  // 3. pull the leaves down to the last level.
  const int depth = static_cast<int>(std::ceil(std::log(static_cast<double>(num_items)) / std::log(static_cast<double>(n))));
  int64_t min_code = 1;
  for (int i = 0; i < depth; ++i) min_code = checked_child(min_code, n, 0);
  min_code -= 1;
  int64_t max_item_id = 0;
  int64_t max_code = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    while (codes[i] < min_code) codes[i] = checked_child(codes[i], n, 1);
    if (ids == TreeIds::kInteger) max_item_id = std::max(max_item_id, items[i].id);
    max_code = std::max(max_code, codes[i]);
  }
  const auto code_digits = static_cast<int>(std::to_string(max_code).size());

  // 4. nodes by code, with the leaves under each non-leaf (in sorted item order).
  std::unordered_map<int64_t, int64_t> by_code;  // code -> index into `temp`
  struct Temp {
    int64_t code;
    int64_t item = -1;             // leaf: index into items
    std::vector<int32_t> leaves;   // non-leaf: its leaves
  };
  std::vector<Temp> temp;
  for (size_t i = 0; i < items.size(); ++i) {
    auto [it, fresh] = by_code.emplace(codes[i], static_cast<int64_t>(temp.size()));
    if (!fresh) {
      throw DataError(fmt::format("tdm tree: items {} and {} got the same tree code {}", item_name(items[i], ids),
                                  item_name(items[static_cast<size_t>(temp[static_cast<size_t>(it->second)].item)], ids),
                                  codes[i]));
    }
    temp.push_back({codes[i], static_cast<int64_t>(i), {}});
  }
  for (size_t i = 0; i < items.size(); ++i) {
    for (int64_t code = codes[i]; code > 0;) {
      code = (code - 1) / n;
      auto [it, fresh] = by_code.emplace(code, static_cast<int64_t>(temp.size()));
      if (fresh) temp.push_back({code, -1, {}});
      temp[static_cast<size_t>(it->second)].leaves.push_back(static_cast<int32_t>(i));
    }
  }
  std::vector<int64_t> sorted_codes;
  sorted_codes.reserve(by_code.size());
  for (const auto& [code, idx] : by_code) sorted_codes.push_back(code);
  std::sort(sorted_codes.begin(), sorted_codes.end());
  // Children in ascending code order (5.).
  std::unordered_map<int64_t, std::vector<int64_t>> children;  // temp index -> child temp indices
  for (int64_t code : sorted_codes) {
    if (code == 0) continue;
    children[by_code.at((code - 1) / n)].push_back(by_code.at(code));
  }

  Tree tree;
  tree.n_cluster = n;
  tree.ids = ids;
  tree.attr_columns = std::move(attr_columns);
  tree.raw_attr_columns = std::move(raw_attr_columns);
  tree.nodes.reserve(temp.size());
  // Level-order walk from the root.
  std::vector<int64_t> current{by_code.at(0)};
  std::vector<int64_t> parents{-1};
  int level = 0;
  while (!current.empty()) {
    std::vector<int64_t> next, next_parents;
    tree.levels.emplace_back();
    for (size_t k = 0; k < current.size(); ++k) {
      Temp& t = temp[static_cast<size_t>(current[k])];
      const auto index = static_cast<int64_t>(tree.nodes.size());
      TreeNode node;
      node.code = t.code;
      node.level = level;
      node.parent = parents[k];
      if (t.item >= 0) {
        TreeItem& item = items[static_cast<size_t>(t.item)];
        node.is_leaf = true;
        node.id = item.id;
        node.text_id = std::move(item.text_id);
        node.attrs = std::move(item.attrs);
        node.raw_attrs = std::move(item.raw_attrs);
      } else {
        if (ids == TreeIds::kText) {
          node.text_id = fmt::format("nonleaf#{:0{}d}", t.code, code_digits);
        } else {
          node.id = max_item_id + t.code + 1;
        }
        for (size_t c = 0; c < tree.attr_columns.size(); ++c) {
          node.attrs.push_back(column_mode(items, t.leaves, c, tree.attr_columns[c].type));
        }
        for (size_t c = 0; c < tree.raw_attr_columns.size(); ++c) {
          node.raw_attrs.push_back(column_mean(items, t.leaves, c, tree.raw_attr_columns[c].type));
        }
      }
      if (node.parent >= 0) tree.nodes[static_cast<size_t>(node.parent)].children.push_back(index);
      tree.nodes.push_back(std::move(node));
      tree.levels.back().push_back(index);
      auto ch = children.find(current[k]);
      if (ch != children.end()) {
        for (int64_t c : ch->second) {
          next.push_back(c);
          next_parents.push_back(index);
        }
      }
    }
    current = std::move(next);
    parents = std::move(next_parents);
    ++level;
  }
  return tree;
}

}  // namespace tzrec::tdm
