// Plain option structs describing embedding tables, bags and the features that feed them
// (no protobuf here: models/ converts feature::FeatureInfo and the config into these).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "embedding/dynamic_table.h"
#include "embedding/zch_module.h"

namespace tzrec::embedding {

// One embedding table: weight [num_embeddings, embedding_dim] float32.
struct TableConfig {
  std::string name;  // table name, e.g. "cat_0_emb" or "cat_0_emb_wide"
  int64_t num_embeddings = 0;
  int64_t embedding_dim = 0;
  // "" → torchrec default uniform(-sqrt(1/num_embeddings), +sqrt(1/num_embeddings))
  // (docs/tzrec-compatibility.md §5.7); otherwise a TorchEasyRec init_fn string, see
  // init_table_weight().
  std::string init_fn;
  bool trainable = true;
  // Storage of the weights: float32, or float16 for data_type FP16 (the fused kernels pool and
  // update in float32 and round each updated row back to float16; optimizer state stays float32).
  torch::ScalarType dtype = torch::kFloat32;
  // Rows get their values only when an id takes them (dynamic tables, which draw a row's initial
  // values and reset its optimizer state when they hand it out): the weight starts as zeros in
  // demand-paged memory (demand_paged_tensor.h) instead of being initialised, so memory follows
  // the rows in use.
  bool rows_on_demand = false;
  // The embedding_name of the features the table serves (embedding/table_name.h: base_table_name),
  // before a group's "_wide" and embedding_name_suffix: what their embedding_constraints name.
  // "" → `name`.
  std::string base_name;
};

// One pooled lookup: the ids of `feature_name` looked up in table `table_name` and pooled per row.
struct BagConfig {
  std::string feature_name;  // key in the input KeyedJaggedTensor
  std::string table_name;
  std::string pooling = "sum";  // "sum" | "mean"
  // Key of this bag in the output KeyedTensor; "" → feature_name. Needed when one feature feeds two
  // tables (e.g. a deep table and its "_wide" twin), since output keys must be unique.
  std::string output_key;
  // Multiply each id's row by its per-id weight when the input KJT carries weights. An unweighted
  // feature set to false ignores the weights column a weighted neighbour put into the KJT.
  bool weighted = true;

  const std::string& key() const { return output_key.empty() ? feature_name : output_key; }
};

// A dense feature's dense embedding (docs/tzrec-compatibility.md §5.11): TorchEasyRec's MLPEmbedding
// or AutoDisEmbedding, turning the feature's value_dim floats into embedding_dim floats.
enum class DenseEmbeddingType { kNone, kMlp, kAutoDis };
struct DenseEmbeddingOptions {
  DenseEmbeddingType type = DenseEmbeddingType::kNone;
  // AutoDis only (the config's float32 values: the group key prints them, the forward uses them).
  int64_t num_channels = 0;
  float temperature = 0.1f;
  float keep_prob = 0.8f;
};

// What the embedding layer needs to know about one configured feature (mirror of the relevant
// fields of feature::FeatureInfo; embedding/ must not include feature/).
// How a dynamic table's rows start (DynamicEmbInitializerArgs, defaults applied).
struct DynamicEmbInitializer {
  enum class Mode { kNormal, kTruncatedNormal, kUniform, kConstant };
  Mode mode = Mode::kUniform;
  double mean = 0.0, std_dev = 0.0, lower = 0.0, upper = 0.0, value = 0.0;
};

// A dynamic embedding table (docs/tzrec-compatibility.md §5.13): the hash table's options and the
// values of rows given to new ids (init), of ids not in the table in eval mode (eval_init) and of
// ids below the admission threshold (admission_init); the last two must be CONSTANT.
struct DynamicEmbOptions {
  DynamicTableOptions table;
  DynamicEmbInitializer init;
  DynamicEmbInitializer eval_init{DynamicEmbInitializer::Mode::kConstant};
  DynamicEmbInitializer admission_init{DynamicEmbInitializer::Mode::kConstant};
};

struct FeatureSpec {
  std::string name;
  bool is_sparse = true;
  // Sparse features only (embedding_dim also for dense features with a dense embedding):
  int64_t num_embeddings = 0;
  int64_t embedding_dim = 0;
  std::string embedding_name;  // "" → "{name}_emb"
  std::string pooling = "sum";
  bool weighted = false;
  bool trainable = true;
  std::string init_fn;
  torch::ScalarType dtype = torch::kFloat32;  // table storage: data_type FP32 / FP16
  // Zero-collision hashing (docs/tzrec-compatibility.md §5.12): the feature's ids are raw 64-bit
  // ids, remapped to rows by the table's ZchModule (zch->zch_size = num_embeddings; field_path the
  // config path of the feature's `zch`).
  std::optional<ZchOptions> zch;
  // Dynamic embedding (docs/tzrec-compatibility.md §5.13): raw ids mapped to rows by a
  // DynamicTable (num_embeddings = max_capacity).
  std::optional<DynamicEmbOptions> dynamicemb;
  // Dense features only: width of the feature's block in Batch::dense_features.
  int64_t value_dim = 0;
  // Dense features only: with a dense embedding, a DEEP group gets the feature's embedding_dim-wide
  // embedding instead of its value_dim floats.
  DenseEmbeddingOptions dense_embedding;
  // A sequence feature: sparse ones pool their whole history in DEEP / WIDE groups (as TorchEasyRec's
  // embedding bags do); dense ones have no row-wise value to put there.
  bool is_sequence = false;
  // Data group __NEG__ (docs/tzrec-compatibility.md §6.5): the feature is read from the batch's
  // neg_sparse_features / neg_dense_features (the batch's rows, then the sampled negatives').
  bool neg = false;
  // Config path of the feature ("feature_configs[3].id_feature"), for errors.
  std::string path;
};

// A table's parameter as handed to optimizers and checkpoints.
struct EmbeddingTable {
  std::string name;      // table name
  torch::Tensor weight;  // [num_embeddings, embedding_dim] parameter (float32, or float16 for FP16)
  bool trainable = true;
};

// Fills `weight` [num_embeddings, dim] — or a block (shard) of the table: the distribution always
// follows the whole table's shape — in place (under NoGradGuard) according to table.init_fn.
// Supported init_fn strings (optional "torch." prefix, keyword arguments as in torch.nn.init):
//   nn.init.uniform_[,a=..,b=..]            nn.init.normal_[,mean=..,std=..]
//   nn.init.trunc_normal_[,mean,std,a,b]    nn.init.constant_,val=..   nn.init.zeros_  nn.init.ones_
//   nn.init.xavier_uniform_[,gain=..]       nn.init.xavier_normal_[,gain=..]
//   nn.init.kaiming_uniform_[,a=..,mode='fan_in'|'fan_out',nonlinearity='..']   kaiming_normal_ (same)
// Fan-in/out follow torch on a 2-D [rows, dim] tensor: fan_in = dim, fan_out = rows.
// Unknown function or argument → tzrec::ConfigError naming the table. A float16 weight is drawn in
// float32 blocks of rows and rounded (no whole-table float32 copy).
void init_table_weight(const TableConfig& table, torch::Tensor& weight);

// "FP32" / "FP16" (feature_configs' data_type) of a table dtype.
std::string data_type_name(torch::ScalarType dtype);

// Features `first` and `second` share embedding table `table` (TorchEasyRec's _add_mc_module: one
// managed-collision module per table): ConfigError unless both have no zch or the same zch
// settings (zch_size, eviction_interval, eviction policy, decay_exponent, threshold_filtering_func).
// `where`: the config path the message starts with ("" for none).

// Features `first` and `second` share embedding table `table`: ConfigError (starting with
// `where` when set) unless both or neither have dynamicemb.
void check_shared_dynamicemb(const std::string& first, bool first_dynamic, const std::string& second,
                             bool second_dynamic, const std::string& table, const std::string& where = "");

// A sparse feature `f` that group `group` looks up must have an embedding_dim (TorchEasyRec builds
// a table only for the features of a group): ConfigError "<f.path>.embedding_dim: must be > 0 for
// sparse feature <name> (used by group '<group>')" otherwise.
void require_embedding_dim(const FeatureSpec& f, const std::string& group);

void check_shared_zch(const std::string& first, const std::optional<ZchOptions>& first_zch, const std::string& second,
                      const std::optional<ZchOptions>& second_zch, const std::string& table,
                      const std::string& where = "");

}  // namespace tzrec::embedding
