#include "embedding/dynamic_embedding_bag_collection.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "embedding/demand_paged_tensor.h"
#include "embedding/dynamic_checkpoint_layout.h"
#include "embedding/id_owner.h"
#include "embedding/row_reset.h"
#include "embedding/sharded_lookup.h"

namespace tzrec::embedding {
namespace {

// Fills `out` as `init` says (DynamicEmbInitializerArgs). TRUNCATED_NORMAL: mean ± 2 std_dev.
void draw_rows(const DynamicEmbInitializer& init, torch::Tensor& out) {
  using Mode = DynamicEmbInitializer::Mode;
  switch (init.mode) {
    case Mode::kNormal:
      out.normal_(init.mean, init.std_dev);
      break;
    case Mode::kTruncatedNormal: {
      // Inverse-CDF sampling of the normal truncated to [mean - 2 std, mean + 2 std].
      torch::Tensor u = torch::empty(out.sizes(), out.options().dtype(torch::kFloat32));
      const double lo = 0.5 * (1.0 + std::erf(-2.0 / std::sqrt(2.0)));
      const double hi = 0.5 * (1.0 + std::erf(2.0 / std::sqrt(2.0)));
      u.uniform_(2.0 * lo - 1.0, 2.0 * hi - 1.0);
      out.copy_(u.erfinv_().mul_(init.std_dev * std::sqrt(2.0)).add_(init.mean));
      break;
    }
    case Mode::kUniform:
      out.uniform_(init.lower, init.upper);
      break;
    case Mode::kConstant:
      out.fill_(init.value);
      break;
  }
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

DynamicEmbeddingBagCollectionImpl::DynamicEmbeddingBagCollectionImpl(std::vector<DynamicEmbTableConfig> tables,
                                                                     std::vector<BagConfig> bags,
                                                                     const std::string& tables_module)
    : tables_(std::move(tables)),
      world_size_(DeferTableAllocation::active() ? DeferTableAllocation::world_size() : 1) {
  std::vector<std::string> names;
  for (const DynamicEmbTableConfig& t : tables_) names.push_back(t.table.name);
  bags_ = std::make_unique<RemappedBags>(names, std::move(bags));
  std::vector<TableConfig> plain_tables;
  for (DynamicEmbTableConfig& t : tables_) {
    const std::string& path = t.dynamic.table.field_path;
    if (t.dynamic.eval_init.mode != DynamicEmbInitializer::Mode::kConstant) {
      throw NotSupportedError(path + ".eval_initializer_args.mode other than CONSTANT");
    }
    if (t.dynamic.admission_init.mode != DynamicEmbInitializer::Mode::kConstant) {
      throw NotSupportedError(path + ".frequency_admission_strategy.initializer_args.mode other than CONSTANT");
    }
    t.dynamic.table.table_name = t.table.name;
    dynamic_.push_back(std::make_unique<DynamicTable>(world_size_ > 1 ? t.dynamic.table.per_rank(world_size_)
                                                                      : t.dynamic.table));
    t.table.num_embeddings = world_size_ * (dynamic_.back()->max_capacity() + 2);
    t.table.rows_on_demand = true;  // rows are drawn when handed out (below)
    plain_tables.push_back(t.table);
  }
  embedding_module_ = register_module(
      "_embedding_module", EmbeddingBagCollection(std::move(plain_tables), bags_->inner_bags(), tables_module));

  auto holders = register_module("dynamic_tables", torch::nn::ModuleDict());
  reserved_.resize(tables_.size());
  for (size_t t = 0; t < tables_.size(); ++t) {
    const int64_t rows = dynamic_[t]->max_capacity();
    const DynamicAdmissionCounter* counter = dynamic_[t]->admission_counter();
    const int64_t counter_slots = counter != nullptr ? counter->capacity() : 0;
    const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
    Buffers b;
    auto holder = std::make_shared<torch::nn::Module>();
    b.step = holder->register_buffer("step", torch::zeros({1}, i64));
    b.row_keys = holder->register_buffer("row_keys", demand_paged_zeros({rows}, torch::kInt64));
    b.row_scores = holder->register_buffer("row_scores", demand_paged_zeros({rows}, torch::kInt64));
    b.row_live = holder->register_buffer("row_live", demand_paged_zeros({rows}, torch::kUInt8));
    b.admission_keys = holder->register_buffer("admission_keys", demand_paged_zeros({counter_slots}, torch::kInt64));
    b.admission_counts =
        holder->register_buffer("admission_counts", demand_paged_zeros({counter_slots}, torch::kInt64));
    buffers_.push_back(b);
    using Entry = std::pair<std::string, std::shared_ptr<torch::nn::Module>>;
    holders->update(std::vector<Entry>{{tables_[t].table.name, holder}});
    if (!embedding_module_->tables_deferred()) reset_reserved_rows(t);
  }
}

DynamicTable& DynamicEmbeddingBagCollectionImpl::dynamic_table(const std::string& table) {
  for (size_t t = 0; t < tables_.size(); ++t) {
    if (tables_[t].table.name == table) return *dynamic_[t];
  }
  throw ConfigError(fmt::format("no dynamic embedding table '{}'", table));
}

int64_t DynamicEmbeddingBagCollectionImpl::step() const {
  return buffers_.empty() ? 0 : buffers_.front().step.item<int64_t>();
}

int64_t DynamicEmbeddingBagCollectionImpl::block_offset(size_t t) const {
  return static_cast<int64_t>(rank_) * (dynamic_[t]->max_capacity() + 2);
}

void DynamicEmbeddingBagCollectionImpl::reset_reserved_rows(size_t t) {
  ReservedRows& reserved = reserved_[t];
  const int64_t r = block_offset(t) + dynamic_[t]->max_capacity();
  if (reserved.first != r) {
    torch::NoGradGuard no_grad;
    const TableConfig& config = embedding_module_->table_configs().at(t);
    const DynamicEmbOptions& d = tables_[t].dynamic;
    reserved.first = r;
    reserved.rows = torch::tensor({r, r + 1}, torch::kInt64);
    reserved.values = torch::empty({2, config.embedding_dim}, torch::TensorOptions().dtype(config.dtype));
    reserved.values[0].fill_(d.admission_init.value);
    reserved.values[1].fill_(d.eval_init.value);
  }
  write_table_rows(embedding_module_, t, reserved.rows, reserved.values);
}

sparse::KeyedJaggedTensor DynamicEmbeddingBagCollectionImpl::remap(const sparse::KeyedJaggedTensor& kjt,
                                                                  bool training) {
  const int64_t time_ms = training ? now_ms() : 0;
  return bags_->remap(kjt, [&](const std::vector<torch::Tensor>& ids) {
    if (!exchange_) {
      std::vector<torch::Tensor> out(ids.size());
      for (size_t t = 0; t < ids.size(); ++t) {
        if (ids[t].defined()) out[t] = local_rows(t, ids[t], training, time_ms);
      }
      return out;
    }
    return route_to_owners(
        *exchange_, ids,
        [&](size_t t, const torch::Tensor& owned) { return local_rows(t, owned, training, time_ms); },
        "dynamic embedding tables");
  });
}

torch::Tensor DynamicEmbeddingBagCollectionImpl::local_rows(size_t t, const torch::Tensor& ids_in, bool training,
                                                            int64_t time_ms) {
  const torch::Tensor ids = ids_in.contiguous();
  const int64_t n = ids.size(0);
  const int64_t offset = block_offset(t);
  const int64_t reserved = offset + dynamic_[t]->max_capacity();
  torch::Tensor rows = torch::empty({n}, torch::kInt64);
  int64_t* out = rows.data_ptr<int64_t>();
  dynamic_[t]->set_probe_threads(at::get_num_threads());
  if (!training) {
    dynamic_[t]->find(ids.data_ptr<int64_t>(), static_cast<size_t>(n), DynamicRowsOut{out, offset, reserved + 1});
    return rows;
  }
  if (!touched_.empty()) touched_[t].add(ids);
  reset_reserved_rows(t);
  const int64_t step = ++*buffers_[t].step.data_ptr<int64_t>();  // the int64 [1] buffer, in place
  // The rows in the inner table's numbering straight from the probe threads (a serial pass over
  // the table's rows afterwards took 0.13-0.2 ms per 106k ids, bench/README.md
  // `dynamic_embedding_bench`).
  dynamic_[t]->find_or_insert(ids.data_ptr<int64_t>(), static_cast<size_t>(n), step, time_ms, scratch_,
                              DynamicRowsOut{out, offset, reserved});
  if (!scratch_.new_rows.empty()) {
    const DynamicEmbInitializer& init = tables_[t].dynamic.init;
    reset_table_rows(embedding_module_, t, torch::tensor(scratch_.new_rows, torch::kInt64) + offset,
                     block_step_seed(tables_[t].table.name, offset, step),
                     [&init](torch::Tensor& fresh) { draw_rows(init, fresh); });
  }
  return rows;
}

void DynamicEmbeddingBagCollectionImpl::track_touched_ids() {
  if (touched_.empty()) touched_.resize(tables_.size());
}

std::pair<torch::Tensor, torch::Tensor> DynamicEmbeddingBagCollectionImpl::take_touched(size_t t, int64_t* missing) {
  TORCH_CHECK(!touched_.empty(), "DynamicEmbeddingBagCollection::take_touched: tracking is off");
  const torch::Tensor ids = touched_.at(t).take();
  torch::Tensor rows = torch::empty_like(ids);
  dynamic_[t]->find(ids.data_ptr<int64_t>(), static_cast<size_t>(ids.numel()), rows.data_ptr<int64_t>());
  const torch::Tensor held = rows.ge(0);
  *missing = ids.numel() - held.sum().item<int64_t>();
  return {ids.index({held}), embedding_module_->read_rows(t, rows.index({held}) + block_offset(t))};
}

sparse::KeyedTensor DynamicEmbeddingBagCollectionImpl::forward(const sparse::KeyedJaggedTensor& kjt) {
  if (bags_->bags().empty()) return sparse::KeyedTensor();
  if (embedding_module_->tables_deferred() && !exchange_) {
    throw NotSupportedError(fmt::format("{} with more than one rank (the collection is not attached to its sharded "
                                        "tables)",
                                        tables_.front().dynamic.table.field_path));
  }
  return embedding_module_->forward(remap(kjt, is_training()));
}

void DynamicEmbeddingBagCollectionImpl::attach_sharded(std::shared_ptr<IdExchange> exchange) {
  TORCH_CHECK(exchange->world_size() == world_size_, "DynamicEmbeddingBagCollection::attach_sharded: built for ",
              world_size_, " ranks, the exchange has ", exchange->world_size());
  rank_ = exchange->rank();
  exchange_ = std::move(exchange);
  for (size_t t = 0; t < tables_.size(); ++t) reset_reserved_rows(t);
}

std::map<std::string, std::string> DynamicEmbeddingBagCollectionImpl::state_buffer_names(size_t t) const {
  return state_names(t, {"row_keys", "row_scores", "row_live", "admission_keys", "admission_counts"});
}

std::map<std::string, std::string> DynamicEmbeddingBagCollectionImpl::layout_tensor_names(size_t t) const {
  return state_names(t, {"rows_in_use", "capacity"});
}

std::map<std::string, std::string> DynamicEmbeddingBagCollectionImpl::state_names(
    size_t t, std::initializer_list<const char*> tensors) const {
  std::map<std::string, std::string> out;
  for (const char* b : tensors) out.emplace(b, fmt::format("dynamic_tables.{}.{}", tables_.at(t).table.name, b));
  return out;
}

std::vector<RowBlockBuffer> DynamicEmbeddingBagCollectionImpl::state_buffers() const {
  std::vector<RowBlockBuffer> out;
  for (size_t t = 0; t < tables_.size(); ++t) {
    const auto names = state_buffer_names(t);
    const Buffers& b = buffers_[t];
    const int64_t rows = b.row_keys.size(0), slots = b.admission_keys.size(0);
    for (const auto& [name, value] : {std::pair<const char*, torch::Tensor>{"row_keys", b.row_keys},
                                      {"row_scores", b.row_scores},
                                      {"row_live", b.row_live}}) {
      out.push_back({names.at(name), value, world_size_ * rows, rank_ * rows});
    }
    for (const auto& [name, value] : {std::pair<const char*, torch::Tensor>{"admission_keys", b.admission_keys},
                                      {"admission_counts", b.admission_counts}}) {
      out.push_back({names.at(name), value, world_size_ * slots, rank_ * slots});
    }
  }
  return out;
}

DynamicEmbeddingBagCollectionImpl::ShardRestore DynamicEmbeddingBagCollectionImpl::load_sharded_state(
    size_t t, const std::map<std::string, torch::Tensor>& saved, int64_t saved_weight_rows) {
  const std::string& table = tables_.at(t).table.name;
  const std::string where = fmt::format("dynamic embedding table '{}'", table);
  for (const char* b : {"row_keys", "row_scores", "row_live", "admission_keys", "admission_counts"}) {
    if (!saved.count(b)) throw CheckpointError(fmt::format("{}: state '{}' is missing", where, b));
  }
  const DynamicSavedLayout layout = read_dynamic_saved_layout(saved, saved_weight_rows, where);
  const torch::Tensor keys = saved.at("row_keys").to(torch::kInt64).contiguous();
  const torch::Tensor scores = saved.at("row_scores").to(torch::kInt64).contiguous();
  const torch::Tensor live = saved.at("row_live").to(torch::kUInt8).contiguous();
  const int64_t capacity = dynamic_[t]->max_capacity();
  const bool same_layout = layout.world == world_size_ && layout.capacity == capacity;

  DynamicTableState state;
  std::vector<int64_t> from;
  const int64_t* k = keys.data_ptr<int64_t>();
  const int64_t* sc = scores.data_ptr<int64_t>();
  const uint8_t* lv = live.data_ptr<uint8_t>();
  for (int64_t r = 0; r < layout.world; ++r) {
    const int64_t begin = layout.state_offsets[static_cast<size_t>(r)];
    for (int64_t row = 0; row < layout.rows_in_use[static_cast<size_t>(r)]; ++row) {
      const int64_t i = begin + row;
      if (lv[i] == 0 || id_owner_rank(k[i], world_size_) != rank_) continue;
      state.keys.push_back(k[i]);
      state.scores.push_back(sc[i]);
      state.rows.push_back(row);
      from.push_back(layout.weight_offsets[static_cast<size_t>(r)] + row);
    }
  }
  const torch::Tensor counter_keys = saved.at("admission_keys").to(torch::kInt64).contiguous();
  const torch::Tensor counts = saved.at("admission_counts").to(torch::kInt64).contiguous();
  if (counts.numel() != counter_keys.numel()) {
    throw CheckpointError(fmt::format("{}: admission_keys and admission_counts differ in length", where));
  }
  for (int64_t i = 0; i < counts.numel(); ++i) {
    const int64_t key = counter_keys.data_ptr<int64_t>()[i];
    if (counts.data_ptr<int64_t>()[i] == 0 || id_owner_rank(key, world_size_) != rank_) continue;
    state.counter.keys.push_back(key);
    state.counter.counts.push_back(counts.data_ptr<int64_t>()[i]);
  }
  const DynamicTableLoadResult result =
      dynamic_[t]->load(state, same_layout ? DynamicRowMode::kKeep : DynamicRowMode::kCompact);
  sync_state();
  ShardRestore out;
  out.dropped = result.dropped;
  out.counter_dropped = result.counter_dropped;
  std::vector<int64_t> moved_from, moved_to;
  const int64_t offset = block_offset(t);
  for (size_t j = 0; j < result.rows.size(); ++j) {
    if (result.rows[j] < 0) continue;
    moved_from.push_back(from[j]);
    moved_to.push_back(offset + result.rows[j]);
  }
  out.moved_from = torch::tensor(moved_from, torch::kInt64);
  out.moved_to = torch::tensor(moved_to, torch::kInt64);
  return out;
}

void DynamicEmbeddingBagCollectionImpl::sync_state() {
  torch::NoGradGuard no_grad;
  for (size_t t = 0; t < tables_.size(); ++t) {
    const DynamicTableState state = dynamic_[t]->export_state();
    Buffers& b = buffers_[t];
    // Only the prefixes written before hold anything: clearing them leaves the rest untouched
    // (demand-paged, so buffers of a large maximum capacity take memory for the rows in use).
    b.row_live.slice(0, 0, b.rows_written).zero_();
    b.row_keys.slice(0, 0, b.rows_written).zero_();
    b.row_scores.slice(0, 0, b.rows_written).zero_();
    b.rows_written = dynamic_[t]->num_rows();
    int64_t* keys = b.row_keys.data_ptr<int64_t>();
    int64_t* scores = b.row_scores.data_ptr<int64_t>();
    uint8_t* live = b.row_live.data_ptr<uint8_t>();
    for (size_t i = 0; i < state.keys.size(); ++i) {
      const int64_t row = state.rows[i];
      keys[row] = state.keys[i];
      scores[row] = state.scores[i];
      live[row] = 1;
      b.rows_written = std::max(b.rows_written, row + 1);
    }
    b.admission_keys.slice(0, 0, b.counter_written).zero_();
    b.admission_counts.slice(0, 0, b.counter_written).zero_();
    const int64_t slots = b.admission_keys.size(0);
    TORCH_CHECK(static_cast<int64_t>(state.counter.keys.size()) <= slots, "admission counter holds more entries than its capacity");
    b.counter_written = static_cast<int64_t>(state.counter.keys.size());
    std::copy(state.counter.keys.begin(), state.counter.keys.end(), b.admission_keys.data_ptr<int64_t>());
    std::copy(state.counter.counts.begin(), state.counter.counts.end(), b.admission_counts.data_ptr<int64_t>());
  }
}

void DynamicEmbeddingBagCollectionImpl::release_state_buffers() {
  torch::NoGradGuard no_grad;
  for (Buffers& b : buffers_) {
    for (torch::Tensor* t : {&b.row_keys, &b.row_scores, &b.row_live, &b.admission_keys, &b.admission_counts}) {
      release_pages(*t);
    }
    b.rows_written = 0;
    b.counter_written = 0;
  }
}

void DynamicEmbeddingBagCollectionImpl::reload_state() {
  for (size_t t = 0; t < tables_.size(); ++t) {
    Buffers& b = buffers_[t];
    // Whoever filled them: the prefixes up to their last non-zero entry may hold values.
    b.rows_written = 0;
    b.counter_written = 0;
    DynamicTableState state;
    const int64_t* keys = b.row_keys.data_ptr<int64_t>();
    const int64_t* scores = b.row_scores.data_ptr<int64_t>();
    const uint8_t* live = b.row_live.data_ptr<uint8_t>();
    for (int64_t row = 0; row < b.row_live.size(0); ++row) {
      if (live[row] != 0 || keys[row] != 0 || scores[row] != 0) b.rows_written = row + 1;
      if (live[row] == 0) continue;
      state.keys.push_back(keys[row]);
      state.rows.push_back(row);
      state.scores.push_back(scores[row]);
    }
    const int64_t* counter_keys = b.admission_keys.data_ptr<int64_t>();
    const int64_t* counts = b.admission_counts.data_ptr<int64_t>();
    for (int64_t i = 0; i < b.admission_keys.size(0); ++i) {
      if (counter_keys[i] != 0 || counts[i] != 0) b.counter_written = i + 1;
      if (counts[i] == 0) continue;
      state.counter.keys.push_back(counter_keys[i]);
      state.counter.counts.push_back(counts[i]);
    }
    dynamic_[t]->load(state, DynamicRowMode::kKeep);
  }
}

}  // namespace tzrec::embedding
