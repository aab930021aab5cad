// TorchEasyRec's negative samplers, in process (no graph-learning server, no torch):
// negative_sampler, negative_sampler_v2, hard_negative_sampler and hard_negative_sampler_v2
// behind one interface. The loader calls sample() once per batch with the batch's item ids (and
// user ids) and appends the returned rows after the batch's rows in the item-side columns
// (attr_fields), as TorchEasyRec's dataset does (docs/tzrec-compatibility.md §6.5).
//
// What one call returns (graphlearn's samplers as TorchEasyRec's sampler.py drives them; B =
// number of item ids given, N = num_sample, or num_eval_sample in evaluation when it is set):
//   expand = max(1, ceil(N / max(B, 1))); row i of the batch draws `expand` negatives and the
//   first N of the rows' draws, in row order, are the simple negatives (exactly N when B > 0;
//   none when B == 0). Draws are independent and WITH replacement (a negative may repeat).
//   negative_sampler, hard_negative_sampler (graphlearn "node_weight" NegativeSampler):
//     items drawn with probability weight / sum(weights) over the item table; a draw whose id
//     is one of the batch's item ids is rejected and drawn again. After 3 rounds of `expand`
//     draws for one row the exclusion is dropped for the rest of the batch (graphlearn's retry
//     limit), so the batch always gets N negatives.
//   negative_sampler_v2, hard_negative_sampler_v2 (graphlearn "random" conditional
//   NegativeSampler on the positive edges):
//     items drawn UNIFORMLY from the distinct destination ids of the positive edge table (item
//     weights are not used — this is what graphlearn does, whatever the docs say); row i
//     rejects the destinations of users[0..i]'s positive edges and items[0..i] (the exclusion
//     set grows over the batch's rows, as in graphlearn). After 5 rounds of `expand` draws for
//     one row the set is emptied (later rows add their own positives again).
//   hard_negative_sampler, hard_negative_sampler_v2: after the simple negatives, for each user
//     id in order, the user's hard-negative edges sorted by edge weight (descending; ties in
//     file order), at most num_hard_sample of them (0: all); hard_neg_indices holds
//     (user row, position in that user's list) per hard negative.
// Attributes: for each negative, its item-table attrs split into attr_fields.size() strings.
// A negative id that is not in the item table (possible for the v2 / hard edge tables) gets
// empty strings, as graphlearn returns default attributes.
//
// Randomness: one splitmix64 stream per call seeded from (seed, train/eval, rank, worker,
// batch index), so a batch's negatives depend only on those (deterministic, independent per
// rank and loader worker, and a resumed run reproduces a batch from its index).
//
// Threads: the sampler and its tables are immutable after create(); one instance (shared_ptr)
// serves every loader thread, each call using its own output and thread-local scratch.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/alias_table.h"
#include "data/record_batch.h"
#include "data/sampler_table.h"

namespace tzrec::protos {
class DataConfig;
}

namespace tzrec::data {

enum class SamplerKind { kNegativeSampler, kNegativeSamplerV2, kHardNegativeSampler, kHardNegativeSamplerV2 };

// The DataConfig oneof field name: "negative_sampler", "negative_sampler_v2", ...
const char* sampler_kind_name(SamplerKind kind);

struct NegativeSamplerConfig {
  SamplerKind kind = SamplerKind::kNegativeSampler;
  std::string config_path = "data_config.negative_sampler";  // for messages
  std::string item_input_path;                               // negative_sampler: input_path
  std::string user_input_path;                               // all but negative_sampler
  std::string pos_edge_input_path;                           // *_v2
  std::string hard_neg_edge_input_path;                      // hard_*
  uint32_t num_sample = 0;
  std::optional<uint32_t> num_eval_sample;  // set: used in evaluation (even 0)
  uint32_t num_hard_sample = 0;             // hard_*: at most this many per user; 0: all
  std::vector<std::string> attr_fields;
  std::string item_id_field;
  std::string user_id_field;  // all but negative_sampler
  std::string attr_delimiter = ":";
  std::string field_delimiter = "\t";
  std::string item_id_delim = ";";  // negative_sampler: kept for the loader (not used in sampling)
  bool hash_ids = false;            // USE_HASH_NODE_ID=1
  int load_threads = 0;             // table parse threads; 0: hardware concurrency
};

// The sampler of data_config's `sampler` oneof, or nullopt when none is set. hash_ids comes from
// env USE_HASH_NODE_ID. Throws ConfigError naming the field (data_config.<sampler>.<field>) for
// an empty required field; nullopt for tdm_sampler (tdm/tdm_sampler.h).
std::optional<NegativeSamplerConfig> negative_sampler_config(const protos::DataConfig& data_config);

// The separator of a multi-value attribute in the sampler tables, as of the input columns:
// data_config.fg_encoded_multival_sep under fg_mode FG_NONE (TorchEasyRec's item tables take the
// attributes from the same data), else "\x1d".
std::string sampler_multival_sep(const protos::DataConfig& data_config);

// Ids given to sample(): keys as NegativeSampler::key_of returns them.
struct KeySpan {
  const int64_t* data = nullptr;
  size_t size = 0;
  KeySpan() = default;
  KeySpan(const int64_t* d, size_t n) : data(d), size(n) {}
  KeySpan(const std::vector<int64_t>& v) : data(v.data()), size(v.size()) {}  // NOLINT: implicit
};

// What determines a batch's negatives besides its ids.
struct SampleContext {
  uint64_t seed = 0;        // the run's seed
  int32_t rank = 0;         // global rank
  int32_t worker = 0;       // loader worker of the rank
  int64_t batch_index = 0;  // the worker's batch position (resumable)
};

struct SampledNegatives {
  std::vector<int64_t> ids;  // keys of the negatives: num_simple simple ones, then the hard ones
  // One column per attr_fields entry (named after it), one cell per negative, in ids order: the
  // layout of text columns (RecordBatch::columns) to append after the batch's rows.
  std::vector<StringColumn> attrs;
  int64_t num_simple = 0;
  // Per hard negative: {row of the user id given, position in that user's hard-negative list}
  // (TorchEasyRec's HARD_NEG_INDICES, [num hard, 2]); empty for the other samplers.
  std::vector<std::array<int64_t, 2>> hard_neg_indices;
  // Negatives whose id is not in the item table (their attrs are empty).
  int64_t num_missing = 0;

  int64_t size() const { return static_cast<int64_t>(ids.size()); }
  int64_t num_hard() const { return size() - num_simple; }
};

class NegativeSampler {
 public:
  // Loads the sampler's tables (item table, and the user / edge tables its kind reads) and
  // builds the sampling tables. is_training: num_sample, else num_eval_sample when set.
  // Throws ConfigError for bad config fields, DataError / IoError for the tables (an item table
  // whose weights are all 0, an empty positive edge table, ...).
  static std::shared_ptr<const NegativeSampler> create(const NegativeSamplerConfig& config, bool is_training);

  SamplerKind kind() const { return config_.kind; }
  const NegativeSamplerConfig& config() const { return config_; }
  bool is_v2() const;
  bool is_hard() const;
  // Simple negatives per batch (num_sample, or num_eval_sample in evaluation when set).
  uint32_t num_sample() const { return num_sample_; }
  // TorchEasyRec's estimated_sample_num: num_sample, plus min(num_hard_sample, 8) * batch_size
  // for the hard samplers (a size hint; the hard count varies).
  int64_t estimated_sample_num(int64_t batch_size) const;

  // Key of an id of the batch: an integer id (hashed with USE_HASH_NODE_ID=1), or a text cell:
  // hashed ids hash its bytes; integer ids parse it, the empty cell (null) being 0 as in
  // TorchEasyRec (nullopt for a cell that is not an integer).
  int64_t key_of(int64_t id) const { return sampler_key_of_int(id, config_.hash_ids); }
  std::optional<int64_t> key_of(std::string_view cell) const;

  // The negatives of one batch into *out (cleared first; its buffers are reused). item_ids: the
  // batch's positive item ids (TorchEasyRec's flattened item_id_field); user_ids: the users,
  // row-aligned with item_ids for the v2 samplers; for the hard samplers the users whose hard
  // negatives are appended (ignored by negative_sampler). Throws DataError when the v2
  // samplers get user and item ids of different lengths.
  void sample(KeySpan item_ids, KeySpan user_ids, const SampleContext& ctx, SampledNegatives* out) const;

  const NodeTable& items() const { return *items_; }
  const NodeTable* users() const { return users_.get(); }
  const EdgeTable* pos_edges() const { return pos_edges_.get(); }
  const EdgeTable* hard_neg_edges() const { return hard_edges_.get(); }
  // The 64-bit seed of one call's stream.
  uint64_t stream_seed(const SampleContext& ctx) const;

  NegativeSampler() = default;  // use create()

 private:
  void sample_by_weight(KeySpan item_ids, SamplerRng* rng, std::vector<int64_t>* nodes, SampledNegatives* out) const;
  void sample_by_edge(KeySpan item_ids, KeySpan user_ids, SamplerRng* rng, std::vector<int64_t>* nodes,
                      SampledNegatives* out) const;
  void append_hard(KeySpan user_ids, std::vector<int64_t>* nodes, SampledNegatives* out) const;
  void fill_attrs(const std::vector<int64_t>& nodes, SampledNegatives* out) const;

  NegativeSamplerConfig config_;
  bool is_training_ = true;
  uint32_t num_sample_ = 0;
  std::shared_ptr<const NodeTable> items_;
  std::shared_ptr<const NodeTable> users_;
  std::shared_ptr<const EdgeTable> pos_edges_;
  std::shared_ptr<const EdgeTable> hard_edges_;
  AliasTable alias_;                 // item weights (negative_sampler, hard_negative_sampler)
  AliasTable uniform_;               // over pos_edges_->distinct_dst() (v2)
  std::vector<int64_t> candidates_;  // v2: per distinct destination, its key and item node (-1 if absent)
  std::vector<int64_t> hard_node_;   // hard: item node of each hard edge position, -1 if absent
};

}  // namespace tzrec::data
