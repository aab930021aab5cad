#include "dist/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>

#include "base/error.h"
#include "dist/planner_cost.h"

namespace tzrec::dist {
namespace {

// Candidate order; also the last tie-break.
constexpr ShardingType kOrder[] = {ShardingType::kTableWise, ShardingType::kColumnWise, ShardingType::kRowWise,
                                   ShardingType::kTableRowWise, ShardingType::kDataParallel};

bool is_allowed(const PlannerTable& t, ShardingType type) {
  return t.allowed.empty() || std::find(t.allowed.begin(), t.allowed.end(), type) != t.allowed.end();
}

std::string allowed_names(const PlannerTable& t) {
  std::string out;
  for (ShardingType type : kOrder) {
    if (is_allowed(t, type)) out += (out.empty() ? "" : ", ") + sharding_type_name(type);
  }
  return out;
}

// "3", "0-3" (ascending run) or "2,0,1".
std::string rank_list(const std::vector<Shard>& shards) {
  bool run = true;
  for (size_t i = 1; i < shards.size(); ++i) run = run && shards[i].rank == shards[i - 1].rank + 1;
  if (shards.size() > 1 && run) return fmt::format("{}-{}", shards.front().rank, shards.back().rank);
  std::string out;
  for (const Shard& s : shards) out += (out.empty() ? "" : ",") + std::to_string(s.rank);
  return out;
}

// Row blocks of ceil(rows / n) rows over `ranks` (TorchRec's block size); trailing ones may be
// smaller or empty (offset clamped to rows).
std::vector<Shard> row_blocks(const PlannerTable& t, const std::vector<int>& ranks) {
  const int64_t n = static_cast<int64_t>(ranks.size());
  const int64_t block = (t.num_embeddings + n - 1) / n;
  std::vector<Shard> out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t offset = std::min(i * block, t.num_embeddings);
    out.push_back({ranks[i], offset, std::min(block, t.num_embeddings - offset), 0, t.embedding_dim});
  }
  return out;
}

// Column blocks need embedding_dim > 4; they are multiples of 4 columns when dim is.
int64_t column_unit(int64_t dim) { return dim % 4 == 0 ? 4 : 1; }
int max_column_blocks(int64_t dim, int world_size) {
  if (dim <= 4) return 0;
  return static_cast<int>(std::min<int64_t>(world_size, dim / column_unit(dim)));
}

// k column blocks as equal as possible (the first ones one unit wider), on ranks[0..k).
std::vector<Shard> column_blocks(const PlannerTable& t, const std::vector<int>& ranks, int k) {
  const int64_t unit = column_unit(t.embedding_dim);
  const int64_t units = t.embedding_dim / unit;
  std::vector<Shard> out;
  int64_t offset = 0;
  for (int i = 0; i < k; ++i) {
    const int64_t cols = (units / k + (i < units % k ? 1 : 0)) * unit;
    out.push_back({ranks[i], 0, t.num_embeddings, offset, cols});
    offset += cols;
  }
  return out;
}

struct Candidate {
  ShardingType type;
  std::vector<Shard> shards;
  std::string label;  // "table_wise on rank 1"
};

// Time and memory already placed on each rank.
struct Loads {
  std::vector<double> seconds;
  std::vector<double> bytes;
};

std::vector<int> ranks_by(const std::vector<double>& key, int world_size) {
  std::vector<int> ranks(world_size);
  std::iota(ranks.begin(), ranks.end(), 0);
  std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) { return key[a] < key[b]; });
  return ranks;
}

// The placements the planner compares for `t` (data_parallel only when requested: see planner.h).
std::vector<Candidate> candidates(const PlannerTable& t, const PlannerTopology& topo, const Loads& loads,
                                  bool with_data_parallel) {
  const int w = topo.world_size;
  std::vector<Candidate> out;
  if (is_allowed(t, ShardingType::kTableWise)) {
    for (int r = 0; r < w; ++r) {
      out.push_back({ShardingType::kTableWise,
                     {{r, 0, t.num_embeddings, 0, t.embedding_dim}},
                     fmt::format("table_wise on rank {}", r)});
    }
  }
  if (is_allowed(t, ShardingType::kColumnWise)) {
    // The k least-loaded ranks by time, and by memory used (when different).
    const std::vector<int> by_time = ranks_by(loads.seconds, w);
    const std::vector<int> by_bytes = ranks_by(loads.bytes, w);
    for (int k = 2; k <= max_column_blocks(t.embedding_dim, w); ++k) {
      for (const std::vector<int>* ranks : {&by_time, &by_bytes}) {
        auto shards = column_blocks(t, *ranks, k);
        if (ranks == &by_bytes && std::equal(by_time.begin(), by_time.begin() + k, by_bytes.begin())) continue;
        const std::string label = fmt::format("column_wise in {} blocks on ranks {}", k, rank_list(shards));
        out.push_back({ShardingType::kColumnWise, std::move(shards), label});
      }
    }
  }
  std::vector<int> all(w);
  std::iota(all.begin(), all.end(), 0);
  if (is_allowed(t, ShardingType::kRowWise)) {
    out.push_back({ShardingType::kRowWise, row_blocks(t, all), fmt::format("row_wise over ranks 0-{}", w - 1)});
  }
  if (is_allowed(t, ShardingType::kTableRowWise)) {
    const int l = topo.local_world_size;
    for (int node = 0; node < w / l; ++node) {
      std::vector<int> ranks(all.begin() + node * l, all.begin() + (node + 1) * l);
      auto shards = row_blocks(t, ranks);
      const std::string label = fmt::format("table_row_wise over node {} (ranks {})", node, rank_list(shards));
      out.push_back({ShardingType::kTableRowWise, std::move(shards), label});
    }
  }
  if (with_data_parallel && is_allowed(t, ShardingType::kDataParallel)) {
    std::vector<Shard> shards;
    for (int r = 0; r < w; ++r) shards.push_back({r, 0, t.num_embeddings, 0, t.embedding_dim});
    out.push_back({ShardingType::kDataParallel, std::move(shards), "data_parallel"});
  }
  return out;
}

struct Evaluation {
  bool fits = true;
  double score = 0;        // max(busiest rank, average rank incl. tables still to place), seconds
  double total = 0;        // seconds added over all ranks
  double touched_max = 0;  // highest time of a rank holding a shard, after placement
  double memory_max = 0;   // highest memory of a rank holding a shard, after placement
  double shard_max = 0;    // highest time a shard adds to its rank
  // The shard that misses its rank's free memory the most (when !fits).
  int short_rank = -1;
  double short_by = 0;
  ShardMemory short_need;
};

Evaluation evaluate(const PlannerTable& t, const Candidate& c, const PlannerTopology& topo, const Loads& loads,
                    double busiest, double placed_total, double remaining) {
  const double budget = rank_budget_bytes(topo);
  Evaluation e;
  double new_max = busiest;
  for (const Shard& s : c.shards) {
    const double secs = shard_seconds(t, c.type, s, topo);
    const ShardMemory mem = shard_memory(t, s);
    const double after = loads.seconds[s.rank] + secs;
    const double used = loads.bytes[s.rank] + mem.total();
    e.total += secs;
    e.shard_max = std::max(e.shard_max, secs);
    e.touched_max = std::max(e.touched_max, after);
    e.memory_max = std::max(e.memory_max, used);
    new_max = std::max(new_max, after);
    if (used > budget && (e.fits || used - budget > e.short_by)) {
      e.fits = false;
      e.short_rank = s.rank;
      e.short_by = used - budget;
      e.short_need = mem;
    }
  }
  e.score = std::max(new_max, (placed_total + e.total + remaining) / topo.world_size);
  return e;
}

// a < b with a relative tolerance, so that sums in another order do not flip a tie.
int compare(double a, double b) {
  const double tol = 1e-9 * std::max({std::fabs(a), std::fabs(b), 1e-30});
  return a < b - tol ? -1 : (a > b + tol ? 1 : 0);
}

bool better(const Evaluation& a, const Evaluation& b) {
  for (int c : {compare(a.score, b.score), compare(a.total, b.total), compare(a.touched_max, b.touched_max),
                compare(a.memory_max, b.memory_max)}) {
    if (c != 0) return c < 0;
  }
  return false;  // keep the earlier candidate
}

std::string ms(double seconds) { return fmt::format("{:.3f} ms", seconds * 1e3); }

void validate(const std::vector<PlannerTable>& tables, const PlannerTopology& topo) {
  if (topo.world_size < 1 || topo.local_world_size < 1 || topo.world_size % topo.local_world_size != 0) {
    throw ConfigError(fmt::format("sharding planner: local_world_size {} must divide world_size {} (both >= 1)",
                                  topo.local_world_size, topo.world_size));
  }
  if (topo.batch_size < 1)
    throw ConfigError(fmt::format("sharding planner: batch_size {} must be >= 1", topo.batch_size));
  if (topo.memory_per_rank_bytes <= 0 || !(topo.storage_reserve_percent >= 0 && topo.storage_reserve_percent < 1) ||
      !(topo.intra_node_bandwidth > 0) || !(topo.cross_node_bandwidth > 0)) {
    throw ConfigError(
        fmt::format("sharding planner: memory_per_rank {} must be positive, storage_reserve_percent {} in [0, 1) and "
                    "bandwidths {} / {} positive",
                    topo.memory_per_rank_bytes, topo.storage_reserve_percent, topo.intra_node_bandwidth,
                    topo.cross_node_bandwidth));
  }
  std::set<std::string> names;
  for (const PlannerTable& t : tables) {
    if (!names.insert(t.name).second) {
      throw ConfigError(fmt::format("sharding planner: embedding table '{}' appears twice", t.name));
    }
    if (t.num_embeddings < 1 || t.embedding_dim < 1 || t.bytes_per_value < 1 || t.num_features < 1 ||
        !(t.pooling_factor >= 0) || !(t.optimizer_bytes_per_row >= 0) || !(t.optimizer_rowwise_bytes_per_row >= 0)) {
      throw ConfigError(fmt::format(
          "sharding planner: embedding table '{}' has num_embeddings {}, embedding_dim {}, bytes_per_value {}, "
          "num_features {} (must be >= 1), pooling_factor {}, optimizer bytes {} / {} (must be >= 0)",
          t.name, t.num_embeddings, t.embedding_dim, t.bytes_per_value, t.num_features, t.pooling_factor,
          t.optimizer_bytes_per_row, t.optimizer_rowwise_bytes_per_row));
    }
    if (topo.world_size > 1 && !t.allowed.empty() && max_column_blocks(t.embedding_dim, topo.world_size) == 0 &&
        std::all_of(t.allowed.begin(), t.allowed.end(),
                    [](ShardingType s) { return s == ShardingType::kColumnWise; })) {
      throw ConfigError(fmt::format(
          "embedding table '{}': its only allowed sharding type column_wise is impossible: embedding_dim {} cannot "
          "be split into column blocks (needs more than 4 columns); allow another sharding type in its "
          "embedding_constraints",
          t.name, t.embedding_dim));
    }
  }
}

[[noreturn]] void throw_no_room(const PlannerTable& t, const Candidate& c, const Evaluation& e,
                                const PlannerTopology& topo, const Loads& loads) {
  const auto bytes = [](double b) { return static_cast<long long>(std::llround(b)); };
  const double budget = rank_budget_bytes(topo);
  const double placed = loads.bytes[e.short_rank];
  std::string hint =
      "add ranks (`tzrec launch --nproc-per-node N` shards the tables over them) or memory, give the table fewer "
      "rows (its features' hash_bucket_size / num_buckets), ";
  if (!is_allowed(t, ShardingType::kRowWise)) hint += "allow row_wise sharding, ";
  if (t.bytes_per_value > 2) hint += "use data_type FP16, ";
  if (t.trainable && t.optimizer_bytes_per_row + t.optimizer_rowwise_bytes_per_row > 0) {
    hint += "use a sparse optimizer with less state (e.g. rowwise_adagrad), ";
  }
  hint += "or lower STORAGE_RESERVE_PERCENT";
  throw ConfigError(fmt::format(
      "embedding table '{}' needs {} bytes ({}: weights {} + optimizer state {}) per shard as {} but rank {} has "
      "only {} bytes ({}) available (memory_per_rank {} minus reserve {:g}% minus {} bytes of tables already "
      "placed); {}",
      t.name, bytes(e.short_need.total()), format_bytes(e.short_need.total()), bytes(e.short_need.weights),
      bytes(e.short_need.optimizer), c.label, e.short_rank, bytes(std::max(0.0, budget - placed)),
      format_bytes(std::max(0.0, budget - placed)), topo.memory_per_rank_bytes, topo.storage_reserve_percent * 100,
      bytes(placed), hint));
}

// Places one table (world_size > 1) and updates `loads`.
TableSharding place(const PlannerTable& t, const PlannerTopology& topo, Loads& loads, double remaining) {
  const double busiest = *std::max_element(loads.seconds.begin(), loads.seconds.end());
  const double placed_total = std::accumulate(loads.seconds.begin(), loads.seconds.end(), 0.0);
  const double size = table_bytes(t);
  const double budget = rank_budget_bytes(topo);

  std::vector<Candidate> cands;
  std::string why;
  const bool small = size <= kDataParallelMaxBytes;
  if (small && is_allowed(t, ShardingType::kDataParallel)) {
    PlannerTable only_dp = t;
    only_dp.allowed = {ShardingType::kDataParallel};
    auto dp = candidates(only_dp, topo, loads, true);
    if (evaluate(t, dp[0], topo, loads, busiest, placed_total, remaining).fits) {
      cands = std::move(dp);
      why =
          fmt::format("{} with optimizer state <= 1 MiB, replicated on every rank (no all-to-all)", format_bytes(size));
    }
  }
  if (cands.empty()) cands = candidates(t, topo, loads, false);
  if (cands.empty()) {  // data_parallel is the only allowed type
    cands = candidates(t, topo, loads, true);
    why = "the only possible allowed sharding type";
  }
  if (cands.empty()) {
    throw ConfigError(fmt::format("embedding table '{}': none of its allowed sharding types ({}) is possible",
                                  t.name, allowed_names(t)));
  }
  std::optional<size_t> best, best_tw, worst_short;
  std::vector<Evaluation> evals;
  for (size_t i = 0; i < cands.size(); ++i) {
    evals.push_back(evaluate(t, cands[i], topo, loads, busiest, placed_total, remaining));
    const Evaluation& e = evals.back();
    if (!e.fits) {
      if (!worst_short || e.short_by < evals[*worst_short].short_by) worst_short = i;
      continue;
    }
    if (!best || better(e, evals[*best])) best = i;
    if (cands[i].type == ShardingType::kTableWise && (!best_tw || better(e, evals[*best_tw]))) best_tw = i;
  }
  if (!best) throw_no_room(t, cands[*worst_short], evals[*worst_short], topo, loads);
  const Candidate& c = cands[*best];
  const Evaluation& e = evals[*best];
  if (why.empty()) {
    if (c.type == ShardingType::kTableWise) {
      why = "fits in one rank, lowest estimated step time";
    } else if (!t.forced_reason.empty()) {
      why = t.forced_reason;
    } else if (!is_allowed(t, ShardingType::kTableWise)) {
      why = fmt::format("lowest estimated step time of the allowed types ({})", allowed_names(t));
    } else if (!best_tw) {
      const double most_free = budget - *std::min_element(loads.bytes.begin(), loads.bytes.end());
      why =
          fmt::format("{} does not fit one rank ({} free)", format_bytes(size), format_bytes(std::max(0.0, most_free)));
    } else {
      why = fmt::format("lower estimated step time than table_wise ({} vs {})", ms(e.score), ms(evals[*best_tw].score));
    }
  }
  for (const Shard& s : c.shards) {
    loads.seconds[s.rank] += shard_seconds(t, c.type, s, topo);
    loads.bytes[s.rank] += shard_memory(t, s).total();
  }
  TableSharding out{t.name, t.num_embeddings, t.embedding_dim, c.type, c.shards, ""};
  out.reason = fmt::format("{}: {}; {} per shard", c.label, why, ms(e.shard_max));
  return out;
}

// One process: every table on rank 0, table_wise when allowed, else the first allowed type as one block.
TableSharding place_single(const PlannerTable& t, const PlannerTopology& topo, Loads& loads) {
  ShardingType type = ShardingType::kTableWise;
  if (!is_allowed(t, type)) {
    for (ShardingType s : kOrder) {
      if (is_allowed(t, s)) {
        type = s;
        break;
      }
    }
  }
  const Candidate c{type, {{0, 0, t.num_embeddings, 0, t.embedding_dim}}, sharding_type_name(type) + " on rank 0"};
  const Evaluation e = evaluate(t, c, topo, loads, 0, 0, 0);
  if (!e.fits) throw_no_room(t, c, e, topo, loads);
  loads.bytes[0] += shard_memory(t, c.shards[0]).total();
  loads.seconds[0] += e.total;
  std::string reason = c.label + ": single process";
  if (type != ShardingType::kTableWise) reason += fmt::format(" (allowed: {})", allowed_names(t));
  return {t.name, t.num_embeddings, t.embedding_dim, type, c.shards, reason};
}

// The cheapest total time of a table over its allowed sharding types, ignoring memory.
double cheapest_total(const PlannerTable& t, const PlannerTopology& topo) {
  const Loads empty{std::vector<double>(topo.world_size, 0.0), std::vector<double>(topo.world_size, 0.0)};
  const bool dp = is_allowed(t, ShardingType::kDataParallel) &&
                  (table_bytes(t) <= kDataParallelMaxBytes || candidates(t, topo, empty, false).empty());
  double best = -1;
  for (const Candidate& c : candidates(t, topo, empty, dp)) {
    double total = 0;
    for (const Shard& s : c.shards) total += shard_seconds(t, c.type, s, topo);
    if (best < 0 || total < best) best = total;
  }
  return std::max(best, 0.0);
}

}  // namespace

ShardingPlan plan_sharding(const std::vector<PlannerTable>& tables, const PlannerTopology& topo) {
  validate(tables, topo);
  const int w = topo.world_size;
  ShardingPlan plan;
  plan.world_size = w;
  plan.tables.resize(tables.size());
  Loads loads{std::vector<double>(w, 0.0), std::vector<double>(w, 0.0)};
  // Largest first (memory, then cost, then name): big tables pack first, small ones fill the gaps.
  std::vector<double> cheapest(tables.size()), size(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    cheapest[i] = w > 1 ? cheapest_total(tables[i], topo) : 0;
    size[i] = table_bytes(tables[i]);
  }
  std::vector<size_t> order(tables.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (size[a] != size[b]) return size[a] > size[b];
    if (cheapest[a] != cheapest[b]) return cheapest[a] > cheapest[b];
    return tables[a].name < tables[b].name;
  });
  double remaining = std::accumulate(cheapest.begin(), cheapest.end(), 0.0);
  for (size_t i : order) {
    remaining -= cheapest[i];
    plan.tables[i] =
        w == 1 ? place_single(tables[i], topo, loads) : place(tables[i], topo, loads, std::max(0.0, remaining));
  }
  return plan;
}

std::string format_plan(const ShardingPlan& plan, const std::vector<PlannerTable>& tables,
                        const PlannerTopology& topo) {
  const int w = plan.world_size;
  std::vector<double> rank_bytes(w, 0.0), rank_seconds(w, 0.0);
  std::vector<std::vector<std::string>> rows = {
      {"table", "rows x dim", "ids/sample", "sharding", "ranks", "MiB per shard", "reason"}};
  for (const TableSharding& ts : plan.tables) {
    const PlannerTable* t = nullptr;
    for (const PlannerTable& c : tables) {
      if (c.name == ts.table) t = &c;
    }
    std::string mib = "?", ids = "?";
    if (t != nullptr) {
      ids = t->pooling_measured ? fmt::format("{:.2f}", t->pooling_factor)
                                : fmt::format("{:g} (est.)", t->pooling_factor);
      double lo = -1, hi = 0;
      for (const Shard& s : ts.shards) {
        const double b = shard_memory(*t, s).total();
        lo = lo < 0 ? b : std::min(lo, b);
        hi = std::max(hi, b);
        if (s.rank >= 0 && s.rank < w) {
          rank_bytes[s.rank] += b;
          rank_seconds[s.rank] += shard_seconds(*t, ts.type, s, topo);
        }
      }
      const double m = 1024.0 * 1024.0;
      mib = compare(lo, hi) == 0 ? fmt::format("{:.1f}", hi / m) : fmt::format("{:.1f}..{:.1f}", lo / m, hi / m);
    }
    rows.push_back({ts.table, fmt::format("{} x {}", ts.num_embeddings, ts.embedding_dim), ids,
                    sharding_type_name(ts.type),
                    rank_list(ts.shards), mib, ts.reason});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out = fmt::format("embedding sharding plan: {} ranks ({} per node), batch size {} per rank\n", w,
                                topo.local_world_size, topo.batch_size);
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (size_t c = 0; c < rows[i].size(); ++c) {
      line += c + 1 < rows[i].size() ? fmt::format("{:<{}}  ", rows[i][c], width[c]) : rows[i][c];
    }
    out += line + "\n";
    if (i == 0) out += std::string(line.size(), '-') + "\n";
  }
  const double budget = rank_budget_bytes(topo) / (1024.0 * 1024.0);
  for (int r = 0; r < w; ++r) {
    out += fmt::format("rank {}: {:.1f} MiB of {:.1f} MiB available, estimated {} per step\n", r,
                       rank_bytes[r] / (1024.0 * 1024.0), budget, ms(rank_seconds[r]));
  }
  return out;
}

}  // namespace tzrec::dist
