#include "tdm/tree_cluster.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/stable_hash.h"
#include "tdm/tree_io.h"

namespace tzrec::tdm {
namespace {

// splitmix64: the clustering's random stream (deterministic on every platform).
class ClusterRng {
 public:
  explicit ClusterRng(uint64_t seed) : stream_(seed) {}
  uint64_t next() { return stream_.next(); }
  double uniform() { return unit_from_bits(next()); }  // [0, 1)
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

 private:
  SplitMix64 stream_;
};

uint64_t task_seed(uint64_t seed, int64_t code) {
  ClusterRng r(seed ^ (static_cast<uint64_t>(code) * 0xD1B54A32D192ED03ull));
  return r.next();
}

double squared_distance(const float* a, const float* b, int64_t dim) {
  double s = 0;
  for (int64_t d = 0; d < dim; ++d) {
    const double x = static_cast<double>(a[d]) - static_cast<double>(b[d]);
    s += x * x;
  }
  return s;
}

// Nearest center of a point (ties to the lower cluster) and its squared distance.
std::pair<int, double> nearest(const float* point, const std::vector<float>& centers, int k, int64_t dim) {
  int best = 0;
  double best_d = std::numeric_limits<double>::infinity();
  for (int c = 0; c < k; ++c) {
    const double d = squared_distance(point, centers.data() + c * dim, dim);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return {best, best_d};
}

}  // namespace

KMeansResult kmeans(const float* data, int64_t dim, const std::vector<int64_t>& rows, int k, uint64_t seed) {
  const auto m = static_cast<int64_t>(rows.size());
  if (k < 1 || m < k) throw std::logic_error("kmeans: fewer rows than clusters");
  auto row = [&](int64_t i) { return data + rows[static_cast<size_t>(i)] * dim; };
  ClusterRng rng(seed);
  std::vector<float> centers(static_cast<size_t>(k * dim));
  auto set_center = [&](int c, int64_t i) { std::copy(row(i), row(i) + dim, centers.begin() + c * dim); };

  // Greedy k-means++ seeding.
  const int trials = 2 + static_cast<int>(std::log(static_cast<double>(k)));
  set_center(0, rng.below(m));
  std::vector<double> closest(static_cast<size_t>(m));
  double potential = 0;
  for (int64_t i = 0; i < m; ++i) potential += closest[static_cast<size_t>(i)] = squared_distance(row(i), centers.data(), dim);
  std::vector<double> candidate_closest(static_cast<size_t>(m)), best_closest(static_cast<size_t>(m));
  for (int c = 1; c < k; ++c) {
    int64_t best = -1;
    double best_potential = std::numeric_limits<double>::infinity();
    for (int t = 0; t < trials; ++t) {
      int64_t cand = m - 1;
      if (potential <= 0) {
        cand = rng.below(m);
      } else {
        const double r = rng.uniform() * potential;
        double acc = 0;
        for (int64_t i = 0; i < m; ++i) {
          acc += closest[static_cast<size_t>(i)];
          if (acc > r) {
            cand = i;
            break;
          }
        }
      }
      double p = 0;
      for (int64_t i = 0; i < m; ++i) {
        const double d = std::min(closest[static_cast<size_t>(i)], squared_distance(row(i), row(cand), dim));
        candidate_closest[static_cast<size_t>(i)] = d;
        p += d;
      }
      if (p < best_potential) {
        best_potential = p;
        best = cand;
        best_closest.swap(candidate_closest);
      }
    }
    set_center(c, best);
    closest = best_closest;
    potential = best_potential;
  }

  // Lloyd iterations.
  double tolerance = 0;
  for (int64_t d = 0; d < dim; ++d) {
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < m; ++i) mean += row(i)[d];
    mean /= static_cast<double>(m);
    for (int64_t i = 0; i < m; ++i) sq += (row(i)[d] - mean) * (row(i)[d] - mean);
    tolerance += sq / static_cast<double>(m);
  }
  tolerance = 1e-4 * tolerance / static_cast<double>(std::max<int64_t>(dim, 1));
  KMeansResult out;
  out.labels.assign(static_cast<size_t>(m), -1);
  std::vector<int> labels(static_cast<size_t>(m));
  std::vector<double> dist(static_cast<size_t>(m));
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<double> sums(static_cast<size_t>(k * dim), 0.0);
    std::vector<int64_t> counts(static_cast<size_t>(k), 0);
    for (int64_t i = 0; i < m; ++i) {
      const auto [c, d] = nearest(row(i), centers, k, dim);
      labels[static_cast<size_t>(i)] = c;
      dist[static_cast<size_t>(i)] = d;
      ++counts[static_cast<size_t>(c)];
      for (int64_t e = 0; e < dim; ++e) sums[static_cast<size_t>(c * dim + e)] += row(i)[e];
    }
    std::vector<float> next(centers.size());
    std::vector<bool> taken(static_cast<size_t>(m), false);
    for (int c = 0; c < k; ++c) {
      if (counts[static_cast<size_t>(c)] > 0) {
        for (int64_t e = 0; e < dim; ++e) {
          next[static_cast<size_t>(c * dim + e)] =
              static_cast<float>(sums[static_cast<size_t>(c * dim + e)] / static_cast<double>(counts[static_cast<size_t>(c)]));
        }
        continue;
      }
      // An empty cluster moves to the row farthest from its center.
      int64_t far = 0;
      double far_d = -1;
      for (int64_t i = 0; i < m; ++i) {
        if (!taken[static_cast<size_t>(i)] && dist[static_cast<size_t>(i)] > far_d) {
          far_d = dist[static_cast<size_t>(i)];
          far = i;
        }
      }
      taken[static_cast<size_t>(far)] = true;
      std::copy(row(far), row(far) + dim, next.begin() + c * dim);
    }
    double shift = 0;
    for (size_t j = 0; j < next.size(); ++j) {
      const double x = static_cast<double>(next[j]) - centers[j];
      shift += x * x;
    }
    const bool same_labels = labels == out.labels;
    out.labels = labels;
    centers.swap(next);
    if (same_labels || shift <= tolerance) break;
  }
  for (int64_t i = 0; i < m; ++i) out.labels[static_cast<size_t>(i)] = nearest(row(i), centers, k, dim).first;
  out.centers = std::move(centers);
  return out;
}

std::vector<std::vector<int64_t>> balanced_split(const float* data, int64_t dim, const std::vector<int64_t>& rows,
                                                 int n, uint64_t seed) {
  const KMeansResult km = kmeans(data, dim, rows, n, seed);
  const auto ave = static_cast<size_t>(rows.size() / static_cast<size_t>(n));
  // Rows (indices into data) sorted by distance to center c, ties by position.
  auto by_distance = [&](std::vector<int64_t> ids, int c) {
    std::vector<double> d(ids.size());
    for (size_t j = 0; j < ids.size(); ++j) {
      d[j] = squared_distance(data + ids[j] * dim, km.centers.data() + c * dim, dim);
    }
    std::vector<size_t> order(ids.size());
    for (size_t j = 0; j < order.size(); ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return d[a] < d[b]; });
    std::vector<int64_t> out(ids.size());
    for (size_t j = 0; j < order.size(); ++j) out[j] = ids[order[j]];
    return out;
  };
  std::vector<std::vector<int64_t>> parts(static_cast<size_t>(n));
  std::vector<int64_t> pool;
  for (int c = 0; c < n; ++c) {
    std::vector<int64_t> members;
    for (size_t j = 0; j < rows.size(); ++j) {
      if (km.labels[j] == c) members.push_back(rows[j]);
    }
    if (members.size() <= ave) {
      parts[static_cast<size_t>(c)] = std::move(members);
      continue;
    }
    std::vector<int64_t> sorted = by_distance(std::move(members), c);
    parts[static_cast<size_t>(c)].assign(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(ave));
    pool.insert(pool.end(), sorted.begin() + static_cast<std::ptrdiff_t>(ave), sorted.end());
  }
  for (int c = 0; c < n && !pool.empty(); ++c) {
    std::vector<int64_t>& part = parts[static_cast<size_t>(c)];
    if (part.size() >= ave) continue;
    const size_t take = std::min(pool.size(), ave - part.size());
    std::vector<int64_t> sorted = by_distance(std::move(pool), c);
    part.insert(part.end(), sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(take));
    pool.assign(sorted.begin() + static_cast<std::ptrdiff_t>(take), sorted.end());
  }
  parts[0].insert(parts[0].end(), pool.begin(), pool.end());
  return parts;
}

std::vector<int64_t> cluster_codes(const float* data, int64_t num_items, int64_t dim, int n, uint64_t seed,
                                   int parallel) {
  if (n < 2) throw ConfigError(fmt::format("--n_cluster: {} is below 2; a tree node needs 2 or more children", n));
  std::vector<int64_t> codes(static_cast<size_t>(num_items), -1);
  struct Task {
    int64_t code;
    std::vector<int64_t> rows;
  };
  auto child = [&](int64_t code, int i) {
    if (code > (std::numeric_limits<int64_t>::max() - n) / n) {
      throw DataError("tdm_cluster_tree: a tree code overflows int64; too many items for this n_cluster");
    }
    return code * n + i + 1;
  };
  std::vector<Task> current;
  {
    Task root{0, std::vector<int64_t>(static_cast<size_t>(num_items))};
    for (int64_t i = 0; i < num_items; ++i) root.rows[static_cast<size_t>(i)] = i;
    current.push_back(std::move(root));
  }
  // Level by level; each task writes only its own rows' codes, so tasks run on threads freely.
  while (!current.empty()) {
    std::vector<std::vector<Task>> produced(current.size());
    std::atomic<size_t> next{0};
    std::mutex error_mutex;
    std::exception_ptr error;
    auto work = [&]() {
      for (size_t t = next++; t < current.size(); t = next++) {
        try {
          const Task& task = current[t];
          const auto size = static_cast<int64_t>(task.rows.size());
          if (size <= n) {
            for (int64_t i = 0; i < size; ++i) codes[static_cast<size_t>(task.rows[static_cast<size_t>(i)])] = child(task.code, static_cast<int>(i));
            continue;
          }
          std::vector<std::vector<int64_t>> parts =
              balanced_split(data, dim, task.rows, n, task_seed(seed, task.code));
          for (int i = 0; i < n; ++i) {
            auto& part = parts[static_cast<size_t>(i)];
            if (part.size() > 1) {
              produced[t].push_back({child(task.code, i), std::move(part)});
            } else if (part.size() == 1) {
              codes[static_cast<size_t>(part[0])] = child(task.code, i);
            }
          }
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    };
    const int threads = std::max(1, std::min<int>(parallel, static_cast<int>(current.size())));
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
    std::vector<Task> following;
    for (auto& tasks : produced) {
      for (auto& task : tasks) following.push_back(std::move(task));
    }
    current = std::move(following);
  }
  return codes;
}

Tree cluster_tree(const ClusterTreeOptions& o) {
  if (o.node_edge_output_file.empty()) throw UsageError("--node_edge_output_file is required");
  if (o.node_edge_output_file.rfind("odps://", 0) == 0) {
    throw NotSupportedError("tdm_cluster_tree --node_edge_output_file odps:// (MaxCompute tables)");
  }
  if (o.item_input_path.empty()) throw UsageError("--item_input_path is required (the item embeddings, e.g. the predict output of export_dir/embedding)");
  if (o.embedding_field.empty()) throw UsageError("--embedding_field is empty; leave it unset for item_emb");
  if (o.attr_delimiter.empty()) throw UsageError("--attr_delimiter is empty; leave it unset for ','");
  if (o.n_cluster < 2) throw UsageError(fmt::format("--n_cluster: {} is below 2; a tree node needs 2 or more children", o.n_cluster));
  if (o.parallel < 1) throw UsageError(fmt::format("--parallel: {} is below 1", o.parallel));
  InitTreeOptions read;
  read.item_input_path = o.item_input_path;
  read.item_id_field = o.item_id_field;
  read.attr_fields = o.attr_fields;
  read.raw_attr_fields = o.raw_attr_fields;
  read.ids = o.ids;
  ItemTable table = read_item_table(read, o.embedding_field);
  const auto num_items = static_cast<int64_t>(table.items.size());
  std::vector<int64_t> codes =
      cluster_codes(table.embeddings.data(), num_items, table.embedding_dim, o.n_cluster, o.seed, o.parallel);
  Tree tree = build_tree_from_codes(std::move(table.items), std::move(codes), std::move(table.attr_columns),
                                    std::move(table.raw_attr_columns), o.n_cluster, o.ids);
  log::info("tdm_cluster_tree: {} items ({}-dim embeddings), tree of {} levels, n_cluster {}, {} nodes", num_items,
            table.embedding_dim, tree.num_levels(), o.n_cluster, tree.nodes.size());
  write_tree_tables(tree, o.node_edge_output_file, o.item_id_field, o.attr_delimiter);
  if (!o.tree_output_dir.empty()) write_serving_tree(tree, o.tree_output_dir);
  return tree;
}

}  // namespace tzrec::tdm
