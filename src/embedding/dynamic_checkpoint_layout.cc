#include "embedding/dynamic_checkpoint_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "base/error.h"

namespace tzrec::embedding {

DynamicSavedLayout dynamic_saved_layout(std::vector<int64_t> rows_in_use, int64_t capacity) {
  DynamicSavedLayout layout;
  layout.world = static_cast<int64_t>(rows_in_use.size());
  layout.capacity = capacity;
  layout.rows_in_use = std::move(rows_in_use);
  for (const int64_t n : layout.rows_in_use) {
    layout.state_offsets.push_back(layout.state_rows);
    layout.weight_offsets.push_back(layout.weight_rows);
    layout.state_rows += n;
    layout.weight_rows += n + 2;
  }
  return layout;
}

DynamicSavedLayout read_dynamic_saved_layout(const std::map<std::string, torch::Tensor>& saved,
                                             int64_t saved_weight_rows, const std::string& where) {
  const int64_t state_rows = saved.at("row_live").numel();
  if (saved.at("row_keys").numel() != state_rows || saved.at("row_scores").numel() != state_rows) {
    throw CheckpointError(fmt::format("{}: row_keys, row_scores and row_live differ in length", where));
  }
  int64_t world = 0, capacity = 0;
  std::vector<int64_t> used;
  auto rows_in_use = saved.find("rows_in_use");
  auto capacity_entry = saved.find("capacity");
  if (rows_in_use == saved.end() || capacity_entry == saved.end()) {
    // The full layout: W_s blocks of R_s + 2 weight rows, the state W_s blocks of R_s rows.
    const int64_t extra = saved_weight_rows - state_rows;
    if (extra <= 0 || extra % 2 != 0 || state_rows % (extra / 2) != 0) {
      throw CheckpointError(fmt::format("{}: the checkpoint's state ({} rows) does not fit its weight ({} rows)",
                                        where, state_rows, saved_weight_rows));
    }
    world = extra / 2;
    capacity = state_rows / world;
    used.assign(static_cast<size_t>(world), capacity);
  } else {
    const torch::Tensor u = rows_in_use->second.to(torch::kInt64).contiguous();
    const torch::Tensor c = capacity_entry->second.to(torch::kInt64).contiguous();
    if (u.dim() != 1 || u.numel() == 0 || c.numel() != 1) {
      throw CheckpointError(fmt::format("{}: rows_in_use must be [ranks] and capacity [1], got [{}] and [{}]", where,
                                        fmt::join(u.sizes(), ", "), fmt::join(c.sizes(), ", ")));
    }
    world = u.numel();
    capacity = c.item<int64_t>();
    used.assign(u.data_ptr<int64_t>(), u.data_ptr<int64_t>() + u.numel());
  }
  for (int64_t r = 0; r < world; ++r) {
    const int64_t n = used[static_cast<size_t>(r)];
    if (n < 0 || n > capacity) {
      throw CheckpointError(fmt::format("{}: rank {} has {} rows in use, outside [0, capacity {}]", where, r, n,
                                        capacity));
    }
  }
  DynamicSavedLayout layout = dynamic_saved_layout(std::move(used), capacity);
  if (layout.state_rows != state_rows || layout.weight_rows != saved_weight_rows) {
    throw CheckpointError(fmt::format("{}: rows_in_use adds up to {} state and {} weight rows, the checkpoint has {} "
                                      "and {}",
                                      where, layout.state_rows, layout.weight_rows, state_rows, saved_weight_rows));
  }
  return layout;
}

torch::Tensor rows_in_use_block(const torch::Tensor& rows, int64_t rows_in_use, int64_t capacity) {
  TORCH_CHECK(rows.size(0) == capacity + 2, "a dynamic table's block has ", rows.size(0), " rows, expected ",
              capacity + 2);
  if (rows_in_use == capacity) return rows;
  return torch::cat({rows.narrow(0, 0, rows_in_use), rows.narrow(0, capacity, 2)});
}

}  // namespace tzrec::embedding
