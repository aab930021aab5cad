#include "embedding/zch_module.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/torch.h>

#include "base/error.h"
#include "base/text.h"

namespace tzrec::embedding {
namespace {

using torch::indexing::None;
using torch::indexing::Slice;

constexpr int64_t kMaxOutputSegments = 1025;  // TorchRec: at most 1024 row-wise shards

// For each value, the position of the first entry >= it among the first S - 1 entries of the
// sorted buffer (so S - 1 at most), and whether the entry there equals it.
std::pair<torch::Tensor, torch::Tensor> search_sorted(const torch::Tensor& sorted_ids,
                                                      const torch::Tensor& values) {
  const torch::Tensor head = sorted_ids.index({Slice(None, -1)});
  const torch::Tensor positions = torch::searchsorted(head, values);
  const torch::Tensor matched = sorted_ids.index({positions}).eq(values);
  return {positions, matched};
}

}  // namespace

ZchModule::ZchModule(ZchOptions options) : options_(std::move(options)) {
  const ZchOptions& o = options_;
  if (o.zch_size <= 0) {
    throw ConfigError(fmt::format("{}.zch_size must be > 0, got {}", o.field_path, o.zch_size));
  }
  if (o.eviction_interval <= 0) {
    throw ConfigError(
        fmt::format("{}.eviction_interval must be > 0, got {}", o.field_path, o.eviction_interval));
  }
  std::vector<int64_t> segments = o.output_segments;
  if (segments.empty()) segments = {o.output_global_offset, o.output_global_offset + o.zch_size};
  if (static_cast<int64_t>(segments.size()) > kMaxOutputSegments) {
    throw ConfigError(fmt::format("{}: at most {} output segments (1024 row-wise shards), got {}",
                                  o.field_path, kMaxOutputSegments, segments.size()));
  }
  segments.resize(kMaxOutputSegments, -1);

  std::optional<ZchThresholdFilter> filter;
  if (!o.threshold_filtering_func.empty()) {
    filter = ZchThresholdFilter::parse(o.threshold_filtering_func,
                                       o.field_path + ".threshold_filtering_func");
  }
  policy_ = make_zch_eviction_policy(o.eviction, o.decay_exponent, std::move(filter));

  const auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(o.device);
  init_output_segments_ =
      torch::tensor(segments, torch::TensorOptions().dtype(torch::kInt64)).to(o.device);
  output_segments_ = init_output_segments_.clone();
  current_iter_tensor_ = torch::zeros({1}, i64);
  sorted_raw_ids_ = torch::full({o.zch_size}, kZchEmptyId, i64);
  remapped_ids_mapping_ =
      torch::arange(o.output_global_offset, o.output_global_offset + o.zch_size, i64);
  if (policy_->uses_counts()) metadata_.counts = torch::zeros({o.zch_size}, i64);
  if (policy_->uses_last_access_iter())
    metadata_.last_access_iter = torch::zeros({o.zch_size}, i64);
}

torch::Tensor ZchModule::remap(const torch::Tensor& values) const {
  TORCH_CHECK(values.dim() == 1 && values.scalar_type() == torch::kInt64,
              "ZchModule::remap: values must be [N] int64");
  torch::NoGradGuard no_grad;
  const auto [positions, matched] = search_sorted(sorted_raw_ids_, values);
  const int64_t default_slot = options_.output_global_offset + options_.zch_size - 1;
  return torch::where(matched, remapped_ids_mapping_.index({positions}),
                      torch::full_like(values, default_slot));
}

void ZchModule::init_history(int64_t first_batch_size) {
  // Python's int(n * eviction_interval * 1.25).
  history_capacity_ = static_cast<int64_t>(static_cast<double>(first_batch_size) *
                                           static_cast<double>(options_.eviction_interval) * 1.25);
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(options_.device);
  history_ids_ = torch::empty({history_capacity_}, i64);
  if (policy_->uses_last_access_iter())
    history_last_access_iter_ = torch::zeros({history_capacity_}, i64);
  history_size_ = 0;
}

void ZchModule::profile(const torch::Tensor& values) {
  TORCH_CHECK(values.dim() == 1 && values.scalar_type() == torch::kInt64,
              "ZchModule::profile: values must be [N] int64");
  torch::NoGradGuard no_grad;
  if (current_iter_ == -1) {
    current_iter_ = current_iter_tensor_.item<int64_t>();
    last_eviction_iter_ = current_iter_;
  }
  ++current_iter_;
  current_iter_tensor_.add_(1);

  if (history_capacity_ < 0) init_history(values.numel());
  const int64_t n = std::min<int64_t>(values.numel(), history_capacity_ - history_size_);
  if (n > 0) {
    const Slice dst(history_size_, history_size_ + n);
    history_ids_.index_put_({dst}, values.index({Slice(0, n)}));
    if (policy_->uses_last_access_iter())
      history_last_access_iter_.index_put_({dst}, current_iter_);
    history_size_ += n;
  }

  if (current_iter_ - last_eviction_iter_ == options_.eviction_interval) {
    coalesce_history();
    last_eviction_iter_ = current_iter_;
  }
}

void ZchModule::reserve_history(int64_t first_batch_size) {
  if (history_capacity_ < 0) init_history(first_batch_size);
}

torch::Tensor ZchModule::forward(const torch::Tensor& values, bool training) {
  if (training && touched_) touched_->add(values);
  if (training) profile(values);
  return remap(values);
}

void ZchModule::coalesce_history() {
  const torch::Tensor history = history_ids_.index({Slice(0, history_size_)});
  auto [ids, inverse, counts] = at::_unique2(history, /*sorted=*/true, /*return_inverse=*/false,
                                             /*return_counts=*/true);
  torch::Tensor mask;
  if (policy_->threshold_filter()) {
    mask = policy_->threshold_filter()->apply(counts, options_.generator).mask;
  }
  torch::Tensor last_access;
  if (policy_->uses_last_access_iter()) {
    // The last step each distinct id was seen (TorchRec: a scatter "amax" over the history). The
    // history's steps never decrease along the buffer, so that is the step of the id's last
    // occurrence: the last of its group once the history is stably sorted by id.
    const torch::Tensor by_id = torch::argsort(history, /*stable=*/true, /*dim=*/0);
    const torch::Tensor last_of_group = by_id.index({torch::cumsum(counts, 0) - 1});
    last_access = history_last_access_iter_.index({last_of_group});
    if (mask.defined()) last_access = last_access.index({mask});
  }
  if (mask.defined()) {
    ids = ids.index({mask});
    counts = counts.index({mask});
  }
  update_and_evict(ids, counts, last_access);
  history_size_ = 0;
}

void ZchModule::update_and_evict(const torch::Tensor& ids, const torch::Tensor& counts,
                                 const torch::Tensor& last_access_iter) {
  // Candidates by count descending; ties keep ascending id order.
  const torch::Tensor order =
      torch::argsort(counts, /*stable=*/true, /*dim=*/0, /*descending=*/true);
  const torch::Tensor sorted_ids = ids.index({order});
  ZchCandidates c;
  c.counts = counts.index({order});
  if (last_access_iter.defined()) c.last_access_iter = last_access_iter.index({order});
  const auto [positions, matched] = search_sorted(sorted_raw_ids_, sorted_ids);
  c.matched = matched;
  c.matched_positions = positions.index({matched});
  const torch::Tensor newcomer_ids = sorted_ids.index({matched.logical_not()});

  const ZchEvictionDecision d = policy_->update_and_select(current_iter_, c, metadata_);
  if (touched_) {
    const torch::Tensor evicted_ids = sorted_raw_ids_.index({d.evicted_positions});
    touched_->add(evicted_ids.index({evicted_ids.ne(kZchEmptyId)}));
    touched_->add(newcomer_ids.index({d.selected_newcomers}));
  }
  sorted_raw_ids_.index_put_({d.evicted_positions}, newcomer_ids.index({d.selected_newcomers}));

  // Slots to reset; evictions not yet taken by evict() accumulate (sorted, distinct).
  const torch::Tensor slots = remapped_ids_mapping_.index({d.evicted_positions});
  if (evicted_) {
    evicted_slots_ = std::get<0>(at::_unique2(torch::cat({evicted_slots_, slots})));
  } else {
    evicted_slots_ = slots;
  }
  evicted_ = true;
  sort_buffers();
}

void ZchModule::sort_buffers() {
  const torch::Tensor order = torch::argsort(sorted_raw_ids_, /*stable=*/true, /*dim=*/0);
  sorted_raw_ids_.copy_(sorted_raw_ids_.index({order}));
  remapped_ids_mapping_.copy_(remapped_ids_mapping_.index({order}));
  if (metadata_.counts.defined()) metadata_.counts.copy_(metadata_.counts.index({order}));
  if (metadata_.last_access_iter.defined()) {
    metadata_.last_access_iter.copy_(metadata_.last_access_iter.index({order}));
  }
}

void ZchModule::track_touched_ids() {
  if (!touched_) touched_ = std::make_shared<TouchedIds>();
}

torch::Tensor ZchModule::take_touched_ids() {
  TORCH_CHECK(touched_, "ZchModule::take_touched_ids: tracking is off");
  return touched_->take();
}

std::optional<torch::Tensor> ZchModule::evict() {
  if (!evicted_) return std::nullopt;
  evicted_ = false;
  return evicted_slots_;
}

int64_t ZchModule::open_slots() const {
  // Entries before the first INT64_MAX are taken; the sentinel is not a slot to open.
  const torch::Tensor first_empty =
      torch::searchsorted(sorted_raw_ids_, torch::full({1}, kZchEmptyId, sorted_raw_ids_.options()));
  return (options_.zch_size - 1) - first_empty.item<int64_t>();
}

int64_t ZchModule::current_iter() const {
  return current_iter_ == -1 ? current_iter_tensor_.item<int64_t>() : current_iter_;
}

std::vector<std::pair<std::string, torch::Tensor>> ZchModule::state() const {
  std::vector<std::pair<std::string, torch::Tensor>> out = {
      {"_output_segments_tensor", output_segments_},
      {"_current_iter_tensor", current_iter_tensor_},
      {"_mch_sorted_raw_ids", sorted_raw_ids_},
      {"_mch_remapped_ids_mapping", remapped_ids_mapping_},
  };
  if (metadata_.counts.defined()) out.emplace_back("_mch_counts", metadata_.counts);
  if (metadata_.last_access_iter.defined()) {
    out.emplace_back("_mch_last_access_iter", metadata_.last_access_iter);
  }
  return out;
}

void ZchModule::load_state(const std::map<std::string, torch::Tensor>& tensors,
                           const std::string& where) {
  torch::NoGradGuard no_grad;
  const auto own = state();
  for (const auto& [name, dst] : own) {
    const auto it = tensors.find(name);
    if (it == tensors.end()) {
      throw CheckpointError(
          fmt::format("{}: zero-collision hash state '{}' is missing", where, name));
    }
    if (it->second.sizes() != dst.sizes()) {
      throw CheckpointError(
          fmt::format("{}: zero-collision hash state '{}' has shape {}, expected {}", where, name,
                      format_shape(it->second.sizes().vec()), format_shape(dst.sizes().vec())));
    }
  }
  // TorchRec's validate_state: this module's range must be one of the saved segments' ranges.
  const torch::Tensor saved_segments = tensors.at("_output_segments_tensor");
  const int64_t start = options_.output_global_offset;
  const int64_t end = start + options_.zch_size;
  if (!saved_segments.eq(start).any().item<bool>() || !saved_segments.eq(end).any().item<bool>()) {
    throw CheckpointError(fmt::format(
        "{}: zero-collision hash slots [{}, {}) cannot be built from the saved output segments",
        where, start, end));
  }
  for (const auto& [name, dst] : own) dst.copy_(tensors.at(name));
  output_segments_.copy_(init_output_segments_);
  sort_buffers();
  current_iter_ = -1;
  last_eviction_iter_ = -1;
  history_size_ = 0;
  evicted_ = false;
}

}  // namespace tzrec::embedding
