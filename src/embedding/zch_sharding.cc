#include "embedding/zch_sharding.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "embedding/id_exchange.h"
#include "embedding/zch_module.h"

namespace tzrec::embedding {
void check_zch_row_blocks(const std::vector<int64_t>& b, const std::string& field_path) {
  const int world = static_cast<int>(b.size()) - 1;
  for (int r = 0; r < world; ++r) {
    if (b[r + 1] - b[r] < 2) {
      throw ConfigError(fmt::format("{}.zch_size: {} rows split row-wise over {} ranks leave rank {} {} row(s); every "
                                    "rank needs at least 2 (one for its ids, one for the ids it does not hold): raise "
                                    "zch_size or use fewer ranks",
                                    field_path, b.back(), world, r, b[r + 1] - b[r]));
    }
  }
}

bool is_zch_place_buffer(const std::string& name) {
  return name == "_mch_sorted_raw_ids" || name == "_mch_remapped_ids_mapping" || name == "_mch_counts" ||
         name == "_mch_last_access_iter";
}

ZchShardState zch_shard_state(const std::map<std::string, torch::Tensor>& saved, const std::vector<std::string>& names,
                              int64_t offset, int64_t size, int rank, int world_size, const std::string& where) {
  torch::NoGradGuard no_grad;
  auto has = [&names](const char* name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  int64_t saved_size = -1;
  for (const std::string& name : names) {
    auto it = saved.find(name);
    if (it == saved.end()) {
      throw CheckpointError(fmt::format("{}: zero-collision hash state '{}' is missing", where, name));
    }
    if (it->second.dim() != 1 || (saved_size >= 0 && it->second.size(0) != saved_size)) {
      throw CheckpointError(fmt::format("{}: zero-collision hash state '{}' has shape [{}], expected [{}]", where,
                                        name, fmt::join(it->second.sizes(), ", "), saved_size));
    }
    saved_size = it->second.size(0);
  }
  const torch::Tensor ids = saved.at("_mch_sorted_raw_ids").to(torch::kInt64);
  const torch::Tensor slots = saved.at("_mch_remapped_ids_mapping").to(torch::kInt64);
  const torch::Tensor held_slots = slots.index({ids.ne(kZchEmptyId)});
  if (std::get<0>(torch::_unique(held_slots)).numel() != held_slots.numel()) {
    throw CheckpointError(fmt::format("{}: zero-collision hash state gives one row to several ids "
                                      "(a corrupt checkpoint)",
                                      where));
  }

  // The ids this block owns, in ascending id order.
  torch::Tensor mine = torch::nonzero(ids.ne(kZchEmptyId).logical_and(owner_ranks(ids, world_size).eq(rank)))
                           .flatten();
  mine = mine.index({torch::argsort(ids.index({mine}), /*stable=*/true, 0)});
  ZchShardState out;
  const int64_t capacity = size - 1;  // the last place is the sentinel
  if (mine.numel() > capacity) {
    // Keep the most frequent, then the most recent, then the smallest ids: successive stable sorts
    // by the keys of lowest precedence first.
    torch::Tensor order = mine;
    if (has("_mch_last_access_iter")) {
      const torch::Tensor key = saved.at("_mch_last_access_iter").to(torch::kInt64).index({order});
      order = order.index({torch::argsort(key, /*stable=*/true, 0, /*descending=*/true)});
    }
    if (has("_mch_counts")) {
      const torch::Tensor key = saved.at("_mch_counts").to(torch::kInt64).index({order});
      order = order.index({torch::argsort(key, /*stable=*/true, 0, /*descending=*/true)});
    }
    out.dropped = mine.numel() - capacity;
    mine = order.narrow(0, 0, capacity);
    mine = mine.index({torch::argsort(ids.index({mine}), /*stable=*/true, 0)});
  }
  const int64_t n = mine.numel();
  const torch::Tensor mine_slots = slots.index({mine});
  const torch::Tensor stays = mine_slots.ge(offset).logical_and(mine_slots.lt(offset + capacity));
  // Free places of the block: its slots (the sentinel's excepted) that no staying id holds.
  torch::Tensor taken = torch::zeros({capacity}, torch::kBool);
  taken.index_put_({mine_slots.index({stays}) - offset}, true);
  const torch::Tensor free_slots = torch::nonzero(taken.logical_not()).flatten() + offset;
  const torch::Tensor movers = torch::nonzero(stays.logical_not()).flatten();
  const int64_t m = movers.numel();
  torch::Tensor new_slots = mine_slots.clone();
  new_slots.index_put_({movers}, free_slots.narrow(0, 0, m));
  out.moved_from = mine_slots.index({movers});
  out.moved_to = free_slots.narrow(0, 0, m).clone();

  const torch::Tensor empty_slots = free_slots.narrow(0, m, free_slots.numel() - m);
  const torch::Tensor sentinel = torch::full({1}, offset + capacity, torch::kInt64);
  const torch::Tensor empties = torch::full({size - n}, kZchEmptyId, torch::kInt64);
  for (const std::string& name : names) {
    torch::Tensor value;
    if (name == "_mch_sorted_raw_ids") {
      value = torch::cat({ids.index({mine}), empties});
    } else if (name == "_mch_remapped_ids_mapping") {
      value = torch::cat({new_slots, empty_slots, sentinel});
    } else {  // metadata: the owned ids' own, 0 for the empty places and the sentinel
      value = torch::cat({saved.at(name).to(torch::kInt64).index({mine}), torch::zeros({size - n}, torch::kInt64)});
    }
    out.places.emplace(name, value);
  }
  return out;
}

}  // namespace tzrec::embedding
