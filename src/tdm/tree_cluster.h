// `tzrec tdm_cluster_tree` (TorchEasyRec tzrec/tools/tdm/cluster_tree.py and gen_tree/
// tree_cluster.py, docs/tzrec-compatibility.md §3.5): the learnt TDM tree. Items are clustered by
// their embeddings (the `item_emb` the TDM embedding package predicts) with recursive balanced
// k-means splits; the leaf codes then build the tree as tdm_init_tree's do (tree.h
// build_tree_from_codes) and the same tables are written (tree_io.h). No torch.
//
// Codes (TorchEasyRec's TreeCluster): the root task is (code 0, every item in input order). A task
// (c, I) with |I| <= n gives item I[i] the code n·c + i + 1; a larger one is split into n parts
// (balanced_split) and part i becomes the task (n·c + i + 1, part) when it has more than one item,
// or gives its one item the code n·c + i + 1.
//
// balanced_split (TreeCluster._cluster) of rows I into n parts, ave = floor(|I| / n):
//   k-means with n clusters over the rows' embeddings (kmeans below); part i starts as cluster i's
//   rows, in I's order, when it has at most ave of them; otherwise its ave rows nearest to center i
//   (Euclidean distance, ascending, ties by position), the others going to a pool (cluster by
//   cluster, each in that distance order). Then for i = 0, 1, ... while the pool is not empty: a
//   part below ave takes the min(|pool|, ave - |part|) pool rows nearest to center i, and the pool
//   keeps the rest in that distance order. Rows still in the pool go to part 0.
//
// kmeans: TorchEasyRec calls scikit-learn's KMeans(n_clusters=n, random_state=0). Here the same
// algorithm with the engine's own random stream: greedy k-means++ seeding (2 + floor(ln n) local
// trials per center, the first center uniform), then Lloyd iterations (an emptied cluster takes
// the row farthest from its center) until no label changes, the centers move by at most
// tol = 1e-4 × the mean per-dimension variance (squared shift, summed), or 300 iterations; labels
// are then the nearest centers (ties to the lower cluster). The stream of task (c, I) is seeded
// by (seed, c), so the result does not depend on how tasks are spread over threads. Which cluster
// gets label 0 follows the seeding, so codes differ from scikit-learn's for the same data, while
// clearly separated groups still end up in the same subtrees.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tdm/tree.h"

namespace tzrec::tdm {

struct ClusterTreeOptions {
  std::string item_input_path;  // .parquet (the predict output of the embedding package) or .csv
  std::string item_id_field;
  std::string embedding_field = "item_emb";
  std::string attr_fields;      // comma-separated, may be empty
  std::string raw_attr_fields;  // comma-separated, may be empty
  std::string attr_delimiter = ",";
  std::string tree_output_dir;  // empty: no serving tree
  std::string node_edge_output_file;
  int parallel = 16;  // threads clustering independent tasks
  int n_cluster = 2;
  uint64_t seed = 0;
  TreeIds ids = TreeIds::kInteger;  // kText: USE_HASH_NODE_ID=1
};

struct KMeansResult {
  std::vector<int> labels;     // per row of `rows`
  std::vector<float> centers;  // [k x dim]
};

// k-means of data[rows[i] * dim ...] into k clusters (see above). rows must hold at least k rows.
KMeansResult kmeans(const float* data, int64_t dim, const std::vector<int64_t>& rows, int k, uint64_t seed);

// TreeCluster._cluster (see above): rows split into n parts (indices into data, as `rows`).
std::vector<std::vector<int64_t>> balanced_split(const float* data, int64_t dim, const std::vector<int64_t>& rows,
                                                 int n, uint64_t seed);

// The leaf code of each of `num_items` rows of data [num_items x dim] (see above).
std::vector<int64_t> cluster_codes(const float* data, int64_t num_items, int64_t dim, int n, uint64_t seed,
                                   int parallel);

// The whole tool: read the items and their embeddings, cluster, build and write the tree.
// UsageError for missing flags, DataError naming file, row and column for bad rows.
Tree cluster_tree(const ClusterTreeOptions& options);

}  // namespace tzrec::tdm
