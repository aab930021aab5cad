#include "dist/sharded_embedding_bags.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <cstdint>
#include <limits>
#include <unordered_map>

#include "base/error.h"
#include "embedding/table_memory.h"
#include "embedding/row_reset.h"

namespace tzrec::dist {

// The types ShardedEmbeddingBags::Impl holds (a named namespace: Impl has external linkage).
namespace sharded_embedding_bags_detail {

// One (feature, shard) pair: the shard's pooled contribution to the feature's output columns.
struct Slot {
  int feature = 0;
  int table = 0;
  int shard_index = 0;
  Shard shard;
  bool row_split = false;   // row_wise / table_row_wise: only ids of the row block, partial sums
  bool replicated = false;  // data_parallel
  int64_t z_col = 0;        // first column in the rank's output [B, total_dim]
  int64_t y_col = 0;        // first column in the owner's local output (non-replicated block, or
                            // within the replicated block for data_parallel slots)
  int64_t cols = 0;
};

// Loss scaling of the backward (set_gradient_scale), shared by the operator and its nodes.
struct LossScaleState {
  std::optional<double> scale;
  bool found_inf = false;  // the latest backward was skipped
};

}  // namespace sharded_embedding_bags_detail
using sharded_embedding_bags_detail::LossScaleState;
using sharded_embedding_bags_detail::Slot;

namespace {

using embedding::FusedFeatureInput;

// The exchange geometry of one forward call, shared with its backward.
struct StepRouting {
  std::shared_ptr<LossScaleState> loss_scale;
  std::shared_ptr<ProcessGroup> pg;
  const std::vector<std::vector<Slot>>* remote_slots = nullptr;  // per owner rank
  const std::vector<Slot>* dp_slots = nullptr;
  std::vector<int64_t> batch_sizes;   // per rank
  std::vector<int64_t> batch_offsets;  // per rank, into the local output rows
  std::vector<int64_t> owner_width;   // per owner rank: columns of its non-replicated block
  int64_t dp_width = 0;
  int64_t total_dim = 0;
  int rank = 0;
};

int64_t block_width(const std::vector<Slot>& slots) {
  int64_t w = 0;
  for (const Slot& s : slots) w += s.cols;
  return w;
}

// Columns of `z` [B, total_dim] for `slots`, side by side: [B, sum cols].
torch::Tensor gather_columns(const torch::Tensor& z, const std::vector<Slot>& slots) {
  std::vector<torch::Tensor> parts;
  for (const Slot& s : slots) parts.push_back(z.narrow(1, s.z_col, s.cols));
  if (parts.empty()) return torch::empty({z.size(0), 0}, z.options());
  return torch::cat(parts, 1);
}

// Output distribution forward: local pooled rows [sum_r B_r, width] → this rank's [B, total_dim].
torch::Tensor output_forward(const StepRouting& r, const torch::Tensor& y) {
  const int w = static_cast<int>(r.batch_sizes.size());
  const int64_t nd = r.owner_width[r.rank];
  const int64_t b = r.batch_sizes[r.rank];
  torch::Tensor send = y.narrow(1, 0, nd).contiguous().view({-1});
  std::vector<int64_t> send_counts(w), recv_counts(w);
  for (int d = 0; d < w; ++d) {
    send_counts[d] = r.batch_sizes[d] * nd;
    recv_counts[d] = b * r.owner_width[d];
  }
  torch::Tensor recv = r.pg->all_to_all(send, send_counts, nullptr, "pooled embeddings", &recv_counts);
  torch::Tensor z = torch::zeros({b, r.total_dim}, torch::kFloat32);
  int64_t pos = 0;
  for (int o = 0; o < w; ++o) {
    torch::Tensor block = recv.narrow(0, pos, recv_counts[o]).view({b, r.owner_width[o]});
    pos += recv_counts[o];
    for (const Slot& s : (*r.remote_slots)[o]) {
      z.narrow(1, s.z_col, s.cols).add_(block.narrow(1, s.y_col, s.cols));
    }
  }
  torch::Tensor mine = y.narrow(0, r.batch_offsets[r.rank], b);
  for (const Slot& s : *r.dp_slots) z.narrow(1, s.z_col, s.cols).copy_(mine.narrow(1, nd + s.y_col, s.cols));
  return z;
}

// Output distribution backward: this rank's output gradient [B, total_dim] → the gradient of the
// local pooled rows [sum_r B_r, width].
torch::Tensor output_backward(const StepRouting& r, const torch::Tensor& gz) {
  const int w = static_cast<int>(r.batch_sizes.size());
  const int64_t nd = r.owner_width[r.rank];
  const int64_t b = r.batch_sizes[r.rank];
  std::vector<torch::Tensor> parts;
  std::vector<int64_t> send_counts(w), recv_counts(w);
  int64_t total_rows = 0;
  for (int o = 0; o < w; ++o) {
    parts.push_back(gather_columns(gz, (*r.remote_slots)[o]).contiguous().view({-1}));
    send_counts[o] = b * r.owner_width[o];
    recv_counts[o] = r.batch_sizes[o] * nd;
    total_rows += r.batch_sizes[o];
  }
  torch::Tensor recv = r.pg->all_to_all(torch::cat(parts), send_counts, nullptr,
                                        "pooled embedding gradients", &recv_counts);
  torch::Tensor g_nd = recv.view({total_rows, nd});
  if (r.dp_width == 0) return g_nd;
  torch::Tensor g_dp_mine = gather_columns(gz, *r.dp_slots).contiguous();
  torch::Tensor g_dp = torch::cat(r.pg->all_gather(g_dp_mine, "replicated embedding gradients"), 0);
  return torch::cat({g_nd, g_dp}, 1);
}

class OutputDistBackward : public torch::autograd::Node {
 public:
  explicit OutputDistBackward(std::shared_ptr<StepRouting> routing) : routing_(std::move(routing)) {}
  std::string name() const override { return "ShardedEmbeddingOutputDistBackward"; }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    torch::NoGradGuard no_grad;
    const StepRouting& r = *routing_;
    torch::Tensor gz = grads.empty() || !grads[0].defined()
                           ? torch::zeros({r.batch_sizes[r.rank], r.total_dim}, torch::kFloat32)
                           : grads[0].to(torch::kFloat32).contiguous();
    torch::autograd::variable_list out(num_outputs());
    if (r.loss_scale->scale) {
      // Every rank runs this node, so all of them agree and skip (or not) together.
      torch::Tensor found_inf = torch::zeros({1}, torch::kInt32);
      if (!torch::isfinite(gz).all().item<bool>()) found_inf.fill_(1);
      r.pg->all_reduce(found_inf, ReduceOp::kMax, "embedding gradient found_inf");
      if (found_inf.item<int32_t>() != 0) {
        r.loss_scale->found_inf = true;
        return out;  // undefined: the local fused operator updates nothing
      }
    }
    torch::Tensor gy = output_backward(r, gz);
    if (num_outputs() > 0) out[0] = gy;
    return out;
  }

 private:
  std::shared_ptr<StepRouting> routing_;
};

}  // namespace

struct ShardedEmbeddingBags::Impl {
  std::vector<ShardedTableSpec> tables;
  std::vector<embedding::FusedFeatureSpec> features;
  ShardingPlan plan;
  std::shared_ptr<ProcessGroup> pg;
  int world = 1;
  int rank = 0;
  std::vector<int> feature_table;  // feature → table index
  std::vector<bool> feature_mean;
  std::vector<int64_t> feature_dim;
  int64_t total_dim = 0;
  std::vector<std::vector<Slot>> remote_slots;  // per owner rank, non-replicated slots
  std::vector<Slot> dp_slots;                   // replicated slots (held by every rank)
  std::vector<int64_t> owner_width;             // per rank: block_width(remote_slots[rank])
  int64_t dp_width = 0;
  bool any_row_mean = false;     // some row-split slot of a mean-pooled feature (needs weights)
  // Every table has fewer than 2^31 rows: ids travel as int32 (half the bytes; the same on
  // every rank, since every rank has the same tables).
  bool int32_ids = true;
  bool any_trainable = false;
  std::vector<LocalShard> shards;
  std::unique_ptr<embedding::FusedEmbeddingBags> local;
  double lr = 0;
  std::shared_ptr<LossScaleState> loss_scale = std::make_shared<LossScaleState>();

  // Slots sent to owner o: its non-replicated slots, then every replicated slot.
  std::vector<const Slot*> slots_to(int o) const {
    std::vector<const Slot*> out;
    for (const Slot& s : remote_slots[o]) out.push_back(&s);
    for (const Slot& s : dp_slots) out.push_back(&s);
    return out;
  }
};

ShardedEmbeddingBags::ShardedEmbeddingBags(std::vector<ShardedTableSpec> tables,
                                           std::vector<embedding::FusedFeatureSpec> features,
                                           embedding::FusedOptimizerOptions options, ShardingPlan plan,
                                           std::shared_ptr<ProcessGroup> process_group)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.tables = std::move(tables);
  m.features = std::move(features);
  m.plan = std::move(plan);
  m.pg = std::move(process_group);
  m.world = m.pg->world_size();
  m.rank = m.pg->rank();
  m.lr = options.lr;
  TORCH_CHECK(!m.features.empty(), "ShardedEmbeddingBags needs at least one feature");
  if (m.plan.world_size != m.world) {
    throw ConfigError(fmt::format("the sharding plan is for world size {} but the job has {} ranks",
                                  m.plan.world_size, m.world));
  }
  std::unordered_map<std::string, int> table_index;
  for (size_t t = 0; t < m.tables.size(); ++t) {
    const ShardedTableSpec& spec = m.tables[t];
    if (spec.num_embeddings > std::numeric_limits<int32_t>::max()) m.int32_ids = false;
    if (!table_index.emplace(spec.name, static_cast<int>(t)).second) {
      throw ConfigError(fmt::format("embedding table '{}' is defined twice", spec.name));
    }
    const TableSharding& ts = m.plan.table(spec.name);
    if (ts.num_embeddings != spec.num_embeddings || ts.embedding_dim != spec.embedding_dim) {
      throw ConfigError(fmt::format(
          "the sharding plan has embedding table '{}' as [{}, {}] but the model has [{}, {}]; plan "
          "again (a saved plan from another config cannot be reused)",
          spec.name, ts.num_embeddings, ts.embedding_dim, spec.num_embeddings, spec.embedding_dim));
    }
    m.any_trainable = m.any_trainable || spec.trainable;
  }
  for (const embedding::FusedFeatureSpec& f : m.features) {
    auto it = table_index.find(f.table_name);
    if (it == table_index.end()) {
      throw ConfigError(fmt::format("feature '{}' uses embedding table '{}', which is not defined", f.name,
                                    f.table_name));
    }
    if (f.pooling != "sum" && f.pooling != "mean") {
      throw ConfigError(fmt::format("feature '{}': pooling must be \"sum\" or \"mean\", got \"{}\"", f.name,
                                    f.pooling));
    }
    m.feature_table.push_back(it->second);
    m.feature_mean.push_back(f.pooling == "mean");
    m.feature_dim.push_back(m.tables[it->second].embedding_dim);
  }

  // Slots, feature by feature, shard by shard (the same order on every rank).
  m.remote_slots.assign(m.world, {});
  int64_t z = 0;
  for (size_t f = 0; f < m.features.size(); ++f) {
    const TableSharding& ts = m.plan.table(m.tables[m.feature_table[f]].name);
    for (size_t k = 0; k < ts.shards.size(); ++k) {
      const Shard& sh = ts.shards[k];
      if (sh.rows == 0 || sh.cols == 0) continue;  // an empty trailing row block gets no ids
      Slot s;
      s.feature = static_cast<int>(f);
      s.table = m.feature_table[f];
      s.shard_index = static_cast<int>(k);
      s.shard = sh;
      s.row_split = ts.type == ShardingType::kRowWise || ts.type == ShardingType::kTableRowWise;
      s.replicated = ts.type == ShardingType::kDataParallel;
      s.z_col = z + sh.col_offset;
      s.cols = sh.cols;
      if (s.replicated) {
        if (sh.rank != 0) continue;  // one slot per replicated feature; every rank holds it
        s.y_col = m.dp_width;
        m.dp_width += s.cols;
        m.dp_slots.push_back(s);
      } else {
        std::vector<Slot>& owner = m.remote_slots.at(sh.rank);
        s.y_col = block_width(owner);
        owner.push_back(s);
        if (s.row_split && m.feature_mean[f]) m.any_row_mean = true;
      }
    }
    z += m.feature_dim[f];
  }
  m.total_dim = z;
  for (int o = 0; o < m.world; ++o) m.owner_width.push_back(block_width(m.remote_slots[o]));

  // Local shards (allocated here only) and the local fused operator over them.
  std::vector<embedding::FusedTableSpec> local_tables;
  std::unordered_map<std::string, std::string> local_name_of;  // "<table>#<shard>" → local name
  for (const TableSharding& ts : m.plan.tables) {
    auto it = table_index.find(ts.table);
    if (it == table_index.end()) continue;  // a table of the plan this operator does not use
    const ShardedTableSpec& spec = m.tables[it->second];
    for (size_t k = 0; k < ts.shards.size(); ++k) {
      const Shard& sh = ts.shards[k];
      if (sh.rank != m.rank || sh.rows == 0 || sh.cols == 0) continue;
      LocalShard ls;
      ls.table = ts.table;
      ls.shard_index = static_cast<int>(k);
      ls.shard = sh;
      const bool whole = ts.type == ShardingType::kDataParallel || ts.type == ShardingType::kTableWise;
      ls.local_name = whole ? ts.table : fmt::format("{}@{}", ts.table, k);
      ls.weight = embedding::table_rows({sh.rows, sh.cols}, spec.dtype, spec.rows_on_demand);
      ls.trainable = spec.trainable;
      local_name_of[fmt::format("{}#{}", ts.table, k)] = ls.local_name;
      local_tables.push_back({ls.local_name, ls.weight, ls.trainable, spec.rows_on_demand});
      m.shards.push_back(std::move(ls));
    }
  }
  std::vector<embedding::FusedFeatureSpec> local_features;
  for (const Slot* s : m.slots_to(m.rank)) {
    embedding::FusedFeatureSpec lf;
    lf.name = m.features[s->feature].name;
    lf.table_name = local_name_of.at(fmt::format("{}#{}", m.tables[s->table].name,
                                                 s->replicated ? m.rank : s->shard_index));
    lf.pooling = s->row_split ? "sum" : m.features[s->feature].pooling;
    local_features.push_back(lf);
  }
  if (!local_features.empty()) {
    m.local = std::make_unique<embedding::FusedEmbeddingBags>(std::move(local_tables),
                                                              std::move(local_features), options);
  }
}

ShardedEmbeddingBags::~ShardedEmbeddingBags() = default;

const std::vector<ShardedEmbeddingBags::LocalShard>& ShardedEmbeddingBags::local_shards() const {
  return impl_->shards;
}

embedding::FusedEmbeddingBags& ShardedEmbeddingBags::local() {
  TORCH_CHECK(impl_->local != nullptr, "rank ", impl_->rank, " holds no embedding shard");
  return *impl_->local;
}

const ShardingPlan& ShardedEmbeddingBags::plan() const { return impl_->plan; }
int64_t ShardedEmbeddingBags::total_dim() const { return impl_->total_dim; }
std::vector<int64_t> ShardedEmbeddingBags::feature_dims() const { return impl_->feature_dim; }

void ShardedEmbeddingBags::set_lr(double lr) {
  impl_->lr = lr;
  if (impl_->local) impl_->local->set_lr(lr);
}

double ShardedEmbeddingBags::lr() const { return impl_->lr; }

void ShardedEmbeddingBags::set_gradient_scale(std::optional<double> scale) {
  TORCH_CHECK(!scale || *scale > 0, "ShardedEmbeddingBags: gradient scale must be > 0, got ", *scale);
  impl_->loss_scale->scale = scale;
  if (impl_->local) impl_->local->set_gradient_scale(scale);
}

bool ShardedEmbeddingBags::last_backward_found_inf() const {
  return impl_->loss_scale->found_inf || (impl_->local && impl_->local->last_backward_found_inf());
}

namespace {

// One feature's batch, normalised: ids int64, lengths int64 [B], weights float32 or undefined.
struct FeatureBatch {
  torch::Tensor ids, lengths, weights;
};

FeatureBatch normalise(const FusedFeatureInput& in, const embedding::FusedFeatureSpec& f,
                       const ShardedTableSpec& table, int64_t& batch_size) {
  FeatureBatch out;
  out.ids = in.ids.to(torch::kInt64).contiguous();
  if (in.lengths.defined()) {
    out.lengths = in.lengths.to(torch::kInt64).contiguous();
  } else {
    TORCH_CHECK(in.offsets.defined() && in.offsets.numel() >= 1, "feature ", f.name,
                ": give lengths or offsets");
    torch::Tensor o = in.offsets.to(torch::kInt64);
    out.lengths = (o.slice(0, 1) - o.slice(0, 0, -1)).contiguous();
  }
  if (batch_size < 0) batch_size = out.lengths.size(0);
  if (out.lengths.size(0) != batch_size) {
    throw DataError(fmt::format("feature '{}' has {} rows but the batch has {}", f.name,
                                out.lengths.size(0), batch_size));
  }
  const int64_t n = out.lengths.sum().item<int64_t>();
  if (n != out.ids.numel()) {
    throw DataError(fmt::format("feature '{}': lengths sum to {} but there are {} ids", f.name, n,
                                out.ids.numel()));
  }
  if (out.ids.numel() > 0) {
    const int64_t lo = out.ids.min().item<int64_t>();
    const int64_t hi = out.ids.max().item<int64_t>();
    if (lo < 0 || hi >= table.num_embeddings) {
      throw DataError(fmt::format(
          "feature '{}': id {} is outside embedding table '{}' with num_embeddings {}; ids must be in "
          "[0, {}) (check the feature's num_buckets / hash_bucket_size)",
          f.name, lo < 0 ? lo : hi, table.name, table.num_embeddings, table.num_embeddings));
    }
  }
  if (in.weights.defined()) out.weights = in.weights.to(torch::kFloat32).contiguous();
  return out;
}

}  // namespace

namespace {

// Calls fn(shard, mask, local_rows) for each of this rank's shards of table `table` that holds some
// of `rows` (row numbers of the whole table): `mask` picks those rows, `local_rows` are their
// numbers in the shard. Every row must lie, whole, in a local shard (TORCH_CHECK naming `what`).
template <typename Fn>
void for_each_local_block(const ShardedEmbeddingBags::Impl& m, size_t table, const torch::Tensor& rows,
                          const char* what, Fn&& fn) {
  const ShardedTableSpec& spec = m.tables.at(table);
  int64_t done = 0;
  for (const ShardedEmbeddingBags::LocalShard& ls : m.shards) {
    if (ls.table != spec.name) continue;
    const Shard& sh = ls.shard;
    const torch::Tensor mask = rows.ge(sh.row_offset).logical_and(rows.lt(sh.row_offset + sh.rows));
    const torch::Tensor local_rows = rows.index({mask}) - sh.row_offset;
    if (local_rows.numel() == 0) continue;
    TORCH_CHECK(sh.col_offset == 0 && sh.cols == spec.embedding_dim, "ShardedEmbeddingBags::", what, ": table '",
                spec.name, "' is split by columns");
    fn(ls, mask, local_rows);
    done += local_rows.numel();
  }
  TORCH_CHECK(done == rows.numel(), "ShardedEmbeddingBags::", what, ": rows of table '", spec.name,
              "' outside this rank's shards");
}

}  // namespace

void ShardedEmbeddingBags::reset_rows(size_t table, const torch::Tensor& rows_in, const torch::Tensor& values) {
  Impl& m = *impl_;
  torch::NoGradGuard no_grad;
  for_each_local_block(m, table, rows_in.to(torch::kInt64), "reset_rows",
                       [&](const LocalShard& ls, const torch::Tensor& mask, const torch::Tensor& local_rows) {
                         torch::Tensor weight = ls.weight;
                         weight.index_copy_(0, local_rows, values.index({mask}).to(weight.scalar_type()));
                         m.local->reset_state_rows(ls.local_name, local_rows);
                       });
}

void ShardedEmbeddingBags::track_touched_rows() {
  Impl& m = *impl_;
  for (const ShardedTableSpec& spec : m.tables) {
    const TableSharding& ts = m.plan.table(spec.name);
    if (ts.type == ShardingType::kColumnWise) {
      throw ConfigError(fmt::format(
          "delta_embedding_dump_config: embedding table '{}' is sharded column_wise, so its rows are split "
          "across ranks; constrain it to table_wise, row_wise, table_row_wise or data_parallel "
          "(train_config.global_embedding_constraints.sharding_types)",
          spec.name));
    }
  }
  if (m.local) m.local->track_touched_rows();
}

torch::Tensor ShardedEmbeddingBags::take_touched_rows(size_t table) {
  Impl& m = *impl_;
  const ShardedTableSpec& spec = m.tables.at(table);
  std::vector<torch::Tensor> parts;
  for (size_t i = 0; i < m.shards.size(); ++i) {
    if (m.shards[i].table != spec.name) continue;
    parts.push_back(m.local->take_touched_rows(i) + m.shards[i].shard.row_offset);
  }
  if (parts.empty()) return torch::empty({0}, torch::kInt64);
  return parts.size() == 1 ? parts[0] : std::get<0>(torch::sort(torch::cat(parts)));
}

torch::Tensor ShardedEmbeddingBags::read_rows(size_t table, const torch::Tensor& rows_in) {
  Impl& m = *impl_;
  torch::NoGradGuard no_grad;
  const torch::Tensor rows = rows_in.to(torch::kInt64);
  torch::Tensor out = torch::empty({rows.numel(), m.tables.at(table).embedding_dim}, torch::kFloat32);
  for_each_local_block(m, table, rows, "read_rows",
                       [&](const LocalShard& ls, const torch::Tensor& mask, const torch::Tensor& local_rows) {
                         out.index_put_({mask}, ls.weight.index_select(0, local_rows).to(torch::kFloat32));
                       });
  return out;
}

torch::Tensor ShardedEmbeddingBags::forward(const std::vector<FusedFeatureInput>& inputs) {
  Impl& m = *impl_;
  TORCH_CHECK(inputs.size() == m.features.size(), "ShardedEmbeddingBags: ", inputs.size(),
              " inputs for ", m.features.size(), " features");
  int64_t b = -1;
  std::vector<FeatureBatch> batches;
  bool has_weights = m.any_row_mean;
  for (size_t f = 0; f < inputs.size(); ++f) {
    batches.push_back(normalise(inputs[f], m.features[f], m.tables[m.feature_table[f]], b));
    has_weights = has_weights || batches.back().weights.defined();
  }
  const int w = m.world;

  // 1. Batch sizes of all ranks, and whether any rank sends per-id weights.
  torch::Tensor sizes = torch::zeros({w + 1}, torch::kInt64);
  sizes[m.rank] = b;
  sizes[w] = has_weights ? 1 : 0;
  m.pg->all_reduce(sizes, ReduceOp::kSum, "embedding batch sizes");
  auto routing = std::make_shared<StepRouting>();
  routing->pg = m.pg;
  routing->loss_scale = m.loss_scale;
  routing->remote_slots = &m.remote_slots;
  routing->dp_slots = &m.dp_slots;
  routing->owner_width = m.owner_width;
  routing->dp_width = m.dp_width;
  routing->total_dim = m.total_dim;
  routing->rank = m.rank;
  int64_t total_rows = 0;
  for (int r = 0; r < w; ++r) {
    routing->batch_sizes.push_back(sizes[r].item<int64_t>());
    routing->batch_offsets.push_back(total_rows);
    total_rows += routing->batch_sizes.back();
  }
  const bool send_weights = sizes[w].item<int64_t>() > 0;

  // 2. Input distribution: lengths, then ids (and weights) of every slot, grouped by owner.
  std::vector<torch::Tensor> send_len, send_ids, send_w;
  std::vector<int64_t> len_counts(w), id_counts(w);
  for (int o = 0; o < w; ++o) {
    const std::vector<const Slot*> slots = m.slots_to(o);
    len_counts[o] = static_cast<int64_t>(slots.size()) * b;
    int64_t ids_to_o = 0;
    for (const Slot* s : slots) {
      const FeatureBatch& fb = batches[s->feature];
      torch::Tensor lengths = fb.lengths, ids = fb.ids, weights = fb.weights;
      if (s->row_split) {
        torch::Tensor in_block = (ids >= s->shard.row_offset) & (ids < s->shard.row_offset + s->shard.rows);
        torch::Tensor sample = torch::repeat_interleave(torch::arange(b, torch::kInt64), fb.lengths);
        if (send_weights) {
          if (!weights.defined()) weights = torch::ones({ids.numel()}, torch::kFloat32);
          if (m.feature_mean[s->feature]) {
            // sum(w_i e_i) / L as a sum of partial sums: weights w_i / L of the whole bag.
            weights = weights / torch::repeat_interleave(fb.lengths, fb.lengths).to(torch::kFloat32);
          }
          weights = weights.masked_select(in_block);
        }
        lengths = torch::zeros({b}, torch::kInt64).index_add_(0, sample, in_block.to(torch::kInt64));
        ids = ids.masked_select(in_block) - s->shard.row_offset;
      } else if (send_weights && !weights.defined()) {
        weights = torch::ones({ids.numel()}, torch::kFloat32);
      }
      send_len.push_back(lengths);
      send_ids.push_back(ids);
      if (send_weights) send_w.push_back(weights);
      ids_to_o += ids.numel();
    }
    id_counts[o] = ids_to_o;
  }
  auto cat_or_empty = [](const std::vector<torch::Tensor>& v, torch::ScalarType t) {
    return v.empty() ? torch::empty({0}, t) : torch::cat(v);
  };
  const std::vector<const Slot*> mine = m.slots_to(m.rank);
  const int64_t n_local = static_cast<int64_t>(mine.size());
  std::vector<int64_t> recv_len_counts(w);
  for (int s = 0; s < w; ++s) recv_len_counts[s] = n_local * routing->batch_sizes[s];
  // Lengths (ids per bag) always fit int32; they travel as int32.
  torch::Tensor recv_len = m.pg->all_to_all(cat_or_empty(send_len, torch::kInt64).to(torch::kInt32), len_counts,
                                            nullptr, "embedding lengths", &recv_len_counts)
                               .to(torch::kInt64);
  // Ids per (source, local slot): the sums of the received lengths.
  std::vector<torch::Tensor> len_blocks(w);  // [n_local, B_s]
  std::vector<int64_t> recv_id_counts(w);
  std::vector<std::vector<int64_t>> ids_per_slot(w);
  int64_t pos = 0;
  for (int s = 0; s < w; ++s) {
    len_blocks[s] = recv_len.narrow(0, pos, recv_len_counts[s]).view({n_local, routing->batch_sizes[s]});
    pos += recv_len_counts[s];
    torch::Tensor per_slot = len_blocks[s].sum(1);
    ids_per_slot[s].assign(per_slot.data_ptr<int64_t>(), per_slot.data_ptr<int64_t>() + n_local);
    recv_id_counts[s] = 0;
    for (int64_t c : ids_per_slot[s]) recv_id_counts[s] += c;
  }
  const auto id_type = m.int32_ids ? torch::kInt32 : torch::kInt64;
  torch::Tensor recv_ids = m.pg->all_to_all(cat_or_empty(send_ids, torch::kInt64).to(id_type), id_counts, nullptr,
                                            "embedding ids", &recv_id_counts)
                               .to(torch::kInt64);
  torch::Tensor recv_w;
  if (send_weights) {
    recv_w = m.pg->all_to_all(cat_or_empty(send_w, torch::kFloat32), id_counts, nullptr,
                              "embedding id weights", &recv_id_counts);
  }

  // 3. Local lookup over the batches of all ranks.
  torch::Tensor y;
  if (m.local) {
    std::vector<FusedFeatureInput> local_inputs(n_local);
    std::vector<std::vector<torch::Tensor>> ids_parts(n_local), w_parts(n_local), len_parts(n_local);
    int64_t id_pos = 0;
    for (int s = 0; s < w; ++s) {
      for (int64_t j = 0; j < n_local; ++j) {
        const int64_t c = ids_per_slot[s][j];
        ids_parts[j].push_back(recv_ids.narrow(0, id_pos, c));
        if (send_weights) w_parts[j].push_back(recv_w.narrow(0, id_pos, c));
        len_parts[j].push_back(len_blocks[s][j]);
        id_pos += c;
      }
    }
    for (int64_t j = 0; j < n_local; ++j) {
      local_inputs[j].ids = torch::cat(ids_parts[j]);
      local_inputs[j].lengths = torch::cat(len_parts[j]);
      if (send_weights) local_inputs[j].weights = torch::cat(w_parts[j]);
    }
    y = m.local->forward(local_inputs);
  } else {
    y = torch::zeros({total_rows, 0}, torch::kFloat32);
  }

  // 4. Output distribution (an autograd node whose backward is the reverse exchange).
  torch::Tensor z;
  {
    torch::NoGradGuard no_grad;
    z = output_forward(*routing, y);
  }
  // Every rank must take part in the backward exchange, whether or not its own shards train.
  if (torch::GradMode::is_enabled() && m.any_trainable) {
    auto node = std::shared_ptr<OutputDistBackward>(new OutputDistBackward(routing),
                                                    torch::autograd::deleteNode);
    if (y.requires_grad()) node->set_next_edges(torch::autograd::collect_next_edges(y));
    torch::autograd::set_history(z, node);
    m.loss_scale->found_inf = false;
  }
  return z;
}

}  // namespace tzrec::dist
