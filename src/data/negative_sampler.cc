#include "data/negative_sampler.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "tzrec/protos/data.pb.h"

namespace tzrec::data {

namespace negative_sampler_internal {

// graphlearn's retry limits: NodeWeightNegativeSampler kRetryTimes = 3; the conditional
// sampler uses the SamplingRetryTimes flag (default 5). Rounds of `expand` draws with the
// exclusion before it is dropped.
constexpr int64_t kWeightRounds = 3;
constexpr int64_t kEdgeRounds = 5;

// Open-addressing set of int64 keys, reused across the calls of a thread: emptying it resets
// only the slots it filled.
class KeySet {
 public:
  // Empties the set, with room for about `expected` keys before it grows.
  void reset(size_t expected) {
    size_t cap = 64;
    while (cap < expected * 2) cap <<= 1;
    if (slots_.size() < cap || slots_.size() > cap * 8) {
      slots_.assign(cap, kEmpty);
      mask_ = cap - 1;
      used_.clear();
    } else {
      clear();
    }
    has_empty_key_ = false;
  }
  void clear() {
    for (uint32_t s : used_) slots_[s] = kEmpty;
    used_.clear();
    has_empty_key_ = false;
  }
  bool contains(int64_t key) const {
    if (key == kEmpty) return has_empty_key_;
    for (uint64_t s = hash(key) & mask_;; s = (s + 1) & mask_) {
      const int64_t v = slots_[s];
      if (v == key) return true;
      if (v == kEmpty) return false;
    }
  }
  void insert(int64_t key) {
    if (key == kEmpty) {
      has_empty_key_ = true;
      return;
    }
    if ((used_.size() + 1) * 2 > slots_.size()) grow();
    for (uint64_t s = hash(key) & mask_;; s = (s + 1) & mask_) {
      const int64_t v = slots_[s];
      if (v == key) return;
      if (v == kEmpty) {
        slots_[s] = key;
        used_.push_back(static_cast<uint32_t>(s));
        return;
      }
    }
  }

 private:
  static constexpr int64_t kEmpty = std::numeric_limits<int64_t>::min();
  static uint64_t hash(int64_t key) { return splitmix64(static_cast<uint64_t>(key)); }
  void grow() {
    std::vector<int64_t> keys;
    keys.reserve(used_.size());
    for (uint32_t s : used_) keys.push_back(slots_[s]);
    slots_.assign(slots_.size() * 2, kEmpty);
    mask_ = slots_.size() - 1;
    used_.clear();
    for (int64_t k : keys) insert(k);
  }
  std::vector<int64_t> slots_;
  std::vector<uint32_t> used_;  // filled slot positions
  uint64_t mask_ = 0;
  bool has_empty_key_ = false;
};

struct Scratch {
  KeySet exclude;
  std::vector<int64_t> nodes;
  std::vector<EdgeTable::Range> ranges;
  std::vector<int64_t> rows;
  std::vector<const char*> piece_ptr;  // [negative][attr]
  std::vector<uint32_t> piece_len;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// Draws with the random words and the table entries fetched ahead (the draws themselves are the
// plain sequence next(), next(), ...): words kWordAhead draws ahead have their alias entry
// prefetched, results kNodeAhead draws ahead have their key prefetched.
template <typename Source>
class DrawPipeline {
 public:
  DrawPipeline(const Source& source, SamplerRng* rng) : source_(source), rng_(rng) {
    for (int i = 0; i < kWordAhead; ++i) words_[i] = fresh_word();
    for (int i = 0; i < kNodeAhead; ++i) nodes_[i] = fresh_node();
  }
  uint32_t next() {
    const uint32_t n = nodes_[node_pos_];
    nodes_[node_pos_] = fresh_node();
    node_pos_ = (node_pos_ + 1) % kNodeAhead;
    return n;
  }

 private:
  static constexpr int kWordAhead = 16;
  static constexpr int kNodeAhead = 8;
  uint64_t fresh_word() {
    const uint64_t w = rng_->next();
    if (const void* p = source_.alias.entry_address(w)) __builtin_prefetch(p);
    return w;
  }
  uint32_t fresh_node() {
    const uint64_t w = words_[word_pos_];
    words_[word_pos_] = fresh_word();
    word_pos_ = (word_pos_ + 1) % kWordAhead;
    const uint32_t n = source_.alias.draw(w);
    __builtin_prefetch(source_.key_address(n));
    if (const void* p = source_.node_address(n)) __builtin_prefetch(p);
    return n;
  }
  const Source& source_;
  SamplerRng* rng_;
  uint64_t words_[kWordAhead];
  uint32_t nodes_[kNodeAhead];
  int word_pos_ = 0;
  int node_pos_ = 0;
};

// Candidates of the weighted samplers: item nodes (their records also say where the attrs are,
// so the line fetched here serves fill_attrs too).
struct WeightSource {
  const AliasTable& alias;
  const NodeTable::Record* records;
  const void* key_address(uint32_t n) const { return records + n; }
  const void* node_address(uint32_t) const { return nullptr; }
  int64_t key(uint32_t n) const { return records[n].key; }
  int64_t node(uint32_t n) const { return n; }
};

// Candidates of the v2 samplers: distinct positive-edge destinations.
struct EdgeSource {
  const AliasTable& alias;
  const int64_t* pairs;  // per candidate: key (distinct_dst), item node (one cache line)
  const void* key_address(uint32_t n) const { return pairs + 2 * static_cast<size_t>(n); }
  const void* node_address(uint32_t) const { return nullptr; }
  int64_t key(uint32_t n) const { return pairs[2 * static_cast<size_t>(n)]; }
  int64_t node(uint32_t n) const { return pairs[2 * static_cast<size_t>(n) + 1]; }
};

std::string field(const std::string& path, const char* name) { return path + "." + name; }

void require(bool ok, const std::string& path, const char* name, const char* what) {
  if (!ok) throw ConfigError(fmt::format("{}: {}", field(path, name), what));
}

}  // namespace negative_sampler_internal

const char* sampler_kind_name(SamplerKind kind) {
  switch (kind) {
    case SamplerKind::kNegativeSampler: return "negative_sampler";
    case SamplerKind::kNegativeSamplerV2: return "negative_sampler_v2";
    case SamplerKind::kHardNegativeSampler: return "hard_negative_sampler";
    case SamplerKind::kHardNegativeSamplerV2: return "hard_negative_sampler_v2";
  }
  return "?";
}

std::string sampler_multival_sep(const protos::DataConfig& dc) {
  return dc.fg_mode() == protos::FG_NONE ? dc.fg_encoded_multival_sep() : "\x1d";
}

std::optional<NegativeSamplerConfig> negative_sampler_config(const protos::DataConfig& dc) {
  NegativeSamplerConfig c;
  c.hash_ids = use_hash_node_id_from_env();
  auto common = [&](const auto& m) {
    c.num_sample = m.num_sample();
    if (m.has_num_eval_sample()) c.num_eval_sample = m.num_eval_sample();
    c.attr_fields.assign(m.attr_fields().begin(), m.attr_fields().end());
    c.item_id_field = m.item_id_field();
    c.attr_delimiter = m.attr_delimiter();
    if (m.has_field_delimiter()) c.field_delimiter = m.field_delimiter();
  };
  switch (dc.sampler_case()) {
    case protos::DataConfig::kNegativeSampler: {
      const auto& m = dc.negative_sampler();
      c.kind = SamplerKind::kNegativeSampler;
      common(m);
      c.item_input_path = m.input_path();
      c.item_id_delim = m.item_id_delim();
      break;
    }
    case protos::DataConfig::kNegativeSamplerV2: {
      const auto& m = dc.negative_sampler_v2();
      c.kind = SamplerKind::kNegativeSamplerV2;
      common(m);
      c.item_input_path = m.item_input_path();
      c.user_input_path = m.user_input_path();
      c.pos_edge_input_path = m.pos_edge_input_path();
      c.user_id_field = m.user_id_field();
      break;
    }
    case protos::DataConfig::kHardNegativeSampler: {
      const auto& m = dc.hard_negative_sampler();
      c.kind = SamplerKind::kHardNegativeSampler;
      common(m);
      c.item_input_path = m.item_input_path();
      c.user_input_path = m.user_input_path();
      c.hard_neg_edge_input_path = m.hard_neg_edge_input_path();
      c.num_hard_sample = m.num_hard_sample();
      c.user_id_field = m.user_id_field();
      break;
    }
    case protos::DataConfig::kHardNegativeSamplerV2: {
      const auto& m = dc.hard_negative_sampler_v2();
      c.kind = SamplerKind::kHardNegativeSamplerV2;
      common(m);
      c.item_input_path = m.item_input_path();
      c.user_input_path = m.user_input_path();
      c.pos_edge_input_path = m.pos_edge_input_path();
      c.hard_neg_edge_input_path = m.hard_neg_edge_input_path();
      c.num_hard_sample = m.num_hard_sample();
      c.user_id_field = m.user_id_field();
      break;
    }
    // tdm_sampler expands the batch instead (tdm/tdm_sampler.h); it has no __NEG__ rows.
    default: return std::nullopt;
  }
  c.config_path = std::string("data_config.") + sampler_kind_name(c.kind);
  return c;
}

bool NegativeSampler::is_v2() const {
  return config_.kind == SamplerKind::kNegativeSamplerV2 || config_.kind == SamplerKind::kHardNegativeSamplerV2;
}

bool NegativeSampler::is_hard() const {
  return config_.kind == SamplerKind::kHardNegativeSampler || config_.kind == SamplerKind::kHardNegativeSamplerV2;
}

std::shared_ptr<const NegativeSampler> NegativeSampler::create(const NegativeSamplerConfig& config, bool is_training) {
  using namespace negative_sampler_internal;
  auto s = std::make_shared<NegativeSampler>();
  s->config_ = config;
  s->is_training_ = is_training;
  const std::string& path = config.config_path;
  const bool v1 = config.kind == SamplerKind::kNegativeSampler;
  require(!config.item_id_field.empty(), path, "item_id_field",
          "is empty; name the input column holding the batch's item ids");
  require(!config.item_input_path.empty(), path, v1 ? "input_path" : "item_input_path",
          "is empty; set it to the item table (id, weight, attrs)");
  if (!v1) {
    require(!config.user_id_field.empty(), path, "user_id_field",
            "is empty; name the input column holding the batch's user ids");
    require(!config.user_input_path.empty(), path, "user_input_path",
            "is empty; set it to the user table (id, weight)");
  }
  if (s->is_v2()) {
    require(!config.pos_edge_input_path.empty(), path, "pos_edge_input_path",
            "is empty; set it to the positive edge table (userid, itemid, weight)");
  }
  if (s->is_hard()) {
    require(!config.hard_neg_edge_input_path.empty(), path, "hard_neg_edge_input_path",
            "is empty; set it to the hard negative edge table (userid, itemid, weight)");
  }
  require(!config.field_delimiter.empty(), path, "field_delimiter", "is empty; leave it unset for a tab");
  require(config.attr_fields.empty() || !config.attr_delimiter.empty(), path, "attr_delimiter",
          "is empty; leave it unset for ':'");
  {
    std::vector<std::string> seen;
    for (const auto& f : config.attr_fields) {
      require(!f.empty(), path, "attr_fields", "has an empty name; list the item input columns of the attrs");
      require(std::find(seen.begin(), seen.end(), f) == seen.end(), path, "attr_fields",
              fmt::format("lists '{}' twice; list each item column once, in the order of the attrs values", f).c_str());
      seen.push_back(f);
    }
  }
  s->num_sample_ = config.num_sample;
  if (!is_training && config.num_eval_sample) s->num_sample_ = *config.num_eval_sample;

  SamplerTableOptions opts;
  opts.field_delimiter = config.field_delimiter;
  opts.attr_delimiter = config.attr_delimiter;
  opts.hash_ids = config.hash_ids;
  opts.num_threads = config.load_threads;
  opts.num_attrs = config.attr_fields.size();
  opts.config_field = field(path, v1 ? "input_path" : "item_input_path");
  s->items_ = NodeTable::load(config.item_input_path, NodeTable::Kind::kItem, opts);
  if (s->items_->size() == 0) {
    throw DataError(fmt::format("{} ({}): the item table has no rows; it needs one line per item after the header",
                                config.item_input_path, opts.config_field));
  }
  if (!v1) {
    opts.config_field = field(path, "user_input_path");
    s->users_ = NodeTable::load(config.user_input_path, NodeTable::Kind::kUser, opts);
  }
  if (s->is_v2()) {
    opts.config_field = field(path, "pos_edge_input_path");
    s->pos_edges_ = EdgeTable::load(config.pos_edge_input_path, EdgeTable::Order::kFileOrder, opts);
    const auto& cand = s->pos_edges_->distinct_dst();
    if (cand.empty()) {
      throw DataError(
          fmt::format("{} ({}): the positive edge table has no edges; {} draws negatives from its "
                      "item ids, so it needs one line per (user, item) positive after the header",
                      config.pos_edge_input_path, opts.config_field, sampler_kind_name(config.kind)));
    }
    s->uniform_ = AliasTable::uniform(cand.size());
    std::vector<int64_t> nodes(cand.size());
    s->items_->find_batch(cand.data(), cand.size(), nodes.data());
    reserve_huge(&s->candidates_, 2 * cand.size());
    s->candidates_.resize(2 * cand.size());
    int64_t missing = 0;
    for (size_t i = 0; i < cand.size(); ++i) {
      s->candidates_[2 * i] = cand[i];
      s->candidates_[2 * i + 1] = nodes[i];
      missing += nodes[i] < 0 ? 1 : 0;
    }
    if (missing > 0) {
      log::warning(
          "{}: {} of the {} item ids of the positive edge table {} are not in the item table {}; "
          "negatives drawn there get empty attributes",
          path, missing, cand.size(), config.pos_edge_input_path, config.item_input_path);
    }
    if (cand.size() < s->num_sample_) {
      log::warning("{}: {} distinct items to draw {} negatives from; negatives repeat within a batch", path,
                   cand.size(), s->num_sample_);
    }
  } else {
    const auto& w = s->items_->weights();
    double sum = 0.0;
    int64_t positive = 0;
    for (float x : w) {
      sum += x;
      positive += x > 0.0f ? 1 : 0;
    }
    if (!(sum > 0.0)) {
      throw DataError(
          fmt::format("{} ({}): all {} item weights are 0; items are drawn in proportion to their "
                      "weight, so give the items positive weights (1 for uniform)",
                      config.item_input_path, field(path, v1 ? "input_path" : "item_input_path"), w.size()));
    }
    s->alias_ = AliasTable(w);
    if (positive < static_cast<int64_t>(s->num_sample_)) {
      log::warning("{}: {} items with a positive weight to draw {} negatives from; negatives repeat within a batch",
                   path, positive, s->num_sample_);
    }
  }
  if (s->is_hard()) {
    opts.config_field = field(path, "hard_neg_edge_input_path");
    s->hard_edges_ = EdgeTable::load(config.hard_neg_edge_input_path, EdgeTable::Order::kWeightDescending, opts);
    const auto& dst = s->hard_edges_->dst_keys();
    reserve_huge(&s->hard_node_, dst.size());
    s->hard_node_.resize(dst.size());
    s->items_->find_batch(dst.data(), dst.size(), s->hard_node_.data());
    int64_t missing = 0;
    for (int64_t node : s->hard_node_) missing += node < 0 ? 1 : 0;
    if (missing > 0) {
      log::warning(
          "{}: {} of the {} edges of the hard negative edge table {} lead to items not in the item table "
          "{}; those hard negatives get empty attributes",
          path, missing, dst.size(), config.hard_neg_edge_input_path, config.item_input_path);
    }
  }
  return s;
}

int64_t NegativeSampler::estimated_sample_num(int64_t batch_size) const {
  int64_t n = num_sample_;
  if (is_hard()) n += std::min<int64_t>(config_.num_hard_sample, 8) * batch_size;
  return n;
}

std::optional<int64_t> NegativeSampler::key_of(std::string_view cell) const {
  return sampler_key_of_text(cell, config_.hash_ids);
}

uint64_t NegativeSampler::stream_seed(const SampleContext& ctx) const {
  return chain_seed(ctx.seed, {0x6e65675f73616d70ULL /* "neg_samp" */, is_training_ ? 1u : 2u,
                               static_cast<uint32_t>(ctx.rank), static_cast<uint32_t>(ctx.worker),
                               static_cast<uint64_t>(ctx.batch_index)});
}

void NegativeSampler::sample(KeySpan item_ids, KeySpan user_ids, const SampleContext& ctx,
                             SampledNegatives* out) const {
  using namespace negative_sampler_internal;
  out->ids.clear();
  out->num_simple = 0;
  out->num_missing = 0;
  out->hard_neg_indices.clear();
  if (is_v2() && user_ids.size != item_ids.size) {
    throw DataError(
        fmt::format("{}: {} user ids for {} item ids; {} needs one user id per item id "
                    "(user_id_field '{}' row-aligned with item_id_field '{}')",
                    config_.config_path, user_ids.size, item_ids.size, sampler_kind_name(config_.kind),
                    config_.user_id_field, config_.item_id_field));
  }
  SamplerRng rng(stream_seed(ctx));
  std::vector<int64_t>& nodes = scratch().nodes;
  nodes.clear();
  if (is_v2()) {
    sample_by_edge(item_ids, user_ids, &rng, &nodes, out);
  } else {
    sample_by_weight(item_ids, &rng, &nodes, out);
  }
  out->num_simple = static_cast<int64_t>(out->ids.size());
  if (is_hard()) append_hard(user_ids, &nodes, out);
  fill_attrs(nodes, out);
}

void NegativeSampler::sample_by_weight(KeySpan item_ids, SamplerRng* rng, std::vector<int64_t>* nodes,
                                       SampledNegatives* out) const {
  using namespace negative_sampler_internal;
  const int64_t b = static_cast<int64_t>(item_ids.size);
  const int64_t n = num_sample_;
  if (b == 0 || n == 0) return;
  const int64_t expand = std::max<int64_t>(1, (n + b - 1) / b);
  KeySet& exclude = scratch().exclude;
  exclude.reset(item_ids.size);
  for (size_t i = 0; i < item_ids.size; ++i) exclude.insert(item_ids.data[i]);
  bool excluding = true;
  const WeightSource source{alias_, items_->records()};
  DrawPipeline<WeightSource> draws(source, rng);
  out->ids.reserve(static_cast<size_t>(n));
  nodes->reserve(static_cast<size_t>(n) + 64);
  int64_t produced = 0;
  while (produced < n) {
    const int64_t want = std::min(expand, n - produced);
    int64_t accepted = 0;
    for (int64_t attempt = 0; accepted < want; ++attempt) {
      if (excluding && attempt == kWeightRounds * expand) excluding = false;  // for the rest of the batch
      const uint32_t c = draws.next();
      const int64_t key = source.key(c);
      if (excluding && exclude.contains(key)) continue;
      out->ids.push_back(key);
      nodes->push_back(c);
      ++accepted;
    }
    produced += want;
  }
}

void NegativeSampler::sample_by_edge(KeySpan item_ids, KeySpan user_ids, SamplerRng* rng, std::vector<int64_t>* nodes,
                                     SampledNegatives* out) const {
  using namespace negative_sampler_internal;
  const int64_t b = static_cast<int64_t>(item_ids.size);
  const int64_t n = num_sample_;
  if (b == 0 || n == 0) return;
  const int64_t expand = std::max<int64_t>(1, (n + b - 1) / b);
  KeySet& exclude = scratch().exclude;
  const int64_t rows_drawing = (n + expand - 1) / expand;
  const int64_t mean_degree = pos_edges_->num_edges() / std::max<int64_t>(1, pos_edges_->num_sources());
  exclude.reset(static_cast<size_t>(rows_drawing * (mean_degree + 1)));
  const EdgeSource source{uniform_, candidates_.data()};
  DrawPipeline<EdgeSource> draws(source, rng);
  out->ids.reserve(static_cast<size_t>(n));
  nodes->reserve(static_cast<size_t>(n) + 64);
  // The positive edges of the rows that draw (all rows' lookups overlapped).
  const int64_t rows = rows_drawing;
  std::vector<EdgeTable::Range>& ranges = scratch().ranges;
  ranges.resize(static_cast<size_t>(rows));
  pos_edges_->ranges_of(user_ids.data, static_cast<size_t>(rows), ranges.data(), &scratch().rows);
  const int64_t* dst = pos_edges_->dst_data();
  constexpr int64_t kRowsAhead = 4;
  int64_t produced = 0;
  for (int64_t row = 0; produced < n; ++row) {
    if (row + kRowsAhead < rows) __builtin_prefetch(dst + ranges[static_cast<size_t>(row + kRowsAhead)].begin);
    const EdgeTable::Range r = ranges[static_cast<size_t>(row)];
    for (int64_t e = r.begin; e < r.end; ++e) exclude.insert(dst[e]);
    exclude.insert(item_ids.data[row]);
    const int64_t want = std::min(expand, n - produced);
    int64_t accepted = 0;
    bool excluding = true;
    for (int64_t attempt = 0; accepted < want; ++attempt) {
      if (excluding && attempt == kEdgeRounds * expand) {
        exclude.clear();  // graphlearn empties the set; later rows add their positives again
        excluding = false;
      }
      const uint32_t c = draws.next();
      const int64_t key = source.key(c);
      if (excluding && exclude.contains(key)) continue;
      out->ids.push_back(key);
      nodes->push_back(source.node(c));
      ++accepted;
    }
    produced += want;
  }
}

void NegativeSampler::append_hard(KeySpan user_ids, std::vector<int64_t>* nodes, SampledNegatives* out) const {
  using namespace negative_sampler_internal;
  const int64_t limit = config_.num_hard_sample;
  std::vector<EdgeTable::Range>& ranges = scratch().ranges;
  ranges.resize(user_ids.size);
  hard_edges_->ranges_of(user_ids.data, user_ids.size, ranges.data(), &scratch().rows);
  for (size_t row = 0; row < user_ids.size; ++row) {
    const EdgeTable::Range r = ranges[row];
    const int64_t k = limit > 0 ? std::min(limit, r.size()) : r.size();
    for (int64_t j = 0; j < k; ++j) {
      const int64_t e = r.begin + j;
      out->ids.push_back(hard_edges_->dst(e));
      nodes->push_back(hard_node_[static_cast<size_t>(e)]);
      out->hard_neg_indices.push_back({static_cast<int64_t>(row), j});
    }
  }
}

void NegativeSampler::fill_attrs(const std::vector<int64_t>& nodes, SampledNegatives* out) const {
  using namespace negative_sampler_internal;
  const size_t k = config_.attr_fields.size();
  out->attrs.resize(k);
  const size_t n = nodes.size();
  for (size_t a = 0; a < k; ++a) {
    StringColumn& col = out->attrs[a];
    if (col.name != config_.attr_fields[a]) col.name = config_.attr_fields[a];
    col.offsets.resize(n + 1);
    col.offsets[0] = 0;
  }
  for (int64_t node : nodes) out->num_missing += node < 0 ? 1 : 0;
  if (k == 0) return;
  const NodeTable& items = *items_;
  bool is_delim[256] = {};
  for (unsigned char c : config_.attr_delimiter) is_delim[c] = true;
  static const char kEmpty[NodeTable::kAttrPadding] = {};
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const bool swar = config_.attr_delimiter.size() == 1;
#else
  const bool swar = false;
#endif
  const uint64_t pattern = 0x0101010101010101ULL * static_cast<unsigned char>(config_.attr_delimiter[0]);
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;

  // Pass 1: split each negative's attrs into its k cells (pointers into the table).
  Scratch& sc = scratch();
  sc.piece_ptr.resize(n * k);
  sc.piece_len.resize(n * k);
  const char** ptr = sc.piece_ptr.data();
  uint32_t* len = sc.piece_len.data();
  std::vector<int64_t> totals(k, 0);
  constexpr size_t kRecordAhead = 16;
  constexpr size_t kBytesAhead = 8;
  for (size_t i = 0; i < n; ++i) {
    if (i + kRecordAhead < n && nodes[i + kRecordAhead] >= 0) {
      __builtin_prefetch(items.record_address(nodes[i + kRecordAhead]));
    }
    if (i + kBytesAhead < n && nodes[i + kBytesAhead] >= 0) {
      __builtin_prefetch(items.attrs_address(nodes[i + kBytesAhead]));
    }
    const int64_t node = nodes[i];
    const char** cp = ptr + i * k;
    uint32_t* cl = len + i * k;
    if (node < 0) {
      for (size_t a = 0; a < k; ++a) {
        cp[a] = kEmpty;
        cl[a] = 0;
      }
      continue;
    }
    const std::string_view s = items.attrs(node);
    const char* p = s.data();
    const char* const end = p + s.size();
    // The table was checked to hold exactly k attributes (k - 1 separators) per item, so the
    // first k - 1 separators from the start are the item's own.
    if (swar) {
      // Eight bytes at a time (reading past the item stays inside the buffer and its padding).
      size_t a = 0;
      for (const char* w = p; a + 1 < k; w += 8) {
        uint64_t x;
        std::memcpy(&x, w, 8);
        const uint64_t y = x ^ pattern;
        uint64_t m = ~(((y & kLow7) + kLow7) | y | kLow7);  // 0x80 in each byte equal to the separator
        for (; m != 0 && a + 1 < k; m &= m - 1) {
          const char* q = w + (__builtin_ctzll(m) >> 3);
          cp[a] = p;
          cl[a] = static_cast<uint32_t>(q - p);
          totals[a] += q - p;
          p = q + 1;
          ++a;
        }
      }
    } else {
      for (size_t a = 0; a + 1 < k; ++a) {
        const char* q = p;
        while (!is_delim[static_cast<unsigned char>(*q)]) ++q;
        cp[a] = p;
        cl[a] = static_cast<uint32_t>(q - p);
        totals[a] += q - p;
        p = q + 1;
      }
    }
    cp[k - 1] = p;
    cl[k - 1] = static_cast<uint32_t>(end - p);
    totals[k - 1] += end - p;
  }
  // Pass 2: each column's bytes in one exact allocation. Cells of up to 16 bytes are moved 16 at
  // a time (the table keeps 16 readable bytes after every cell, the column 16 spare bytes).
  for (size_t a = 0; a < k; ++a) {
    StringColumn& col = out->attrs[a];
    col.bytes.resize(static_cast<size_t>(totals[a]) + NodeTable::kAttrPadding);
    char* dst = col.bytes.data();
    int64_t* off = col.offsets.data();
    int64_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      const char* src = ptr[i * k + a];
      const uint32_t l = len[i * k + a];
      if (l <= NodeTable::kAttrPadding) {
        std::memcpy(dst + at, src, NodeTable::kAttrPadding);
      } else {
        std::memcpy(dst + at, src, l);
      }
      at += l;
      off[i + 1] = at;
    }
    col.bytes.resize(static_cast<size_t>(totals[a]));
  }
}

}  // namespace tzrec::data
