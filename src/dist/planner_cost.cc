#include "dist/planner_cost.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace tzrec::dist {
namespace {

// A positive finite number from environment variable `name`, or `fallback` when unset.
double env_number(const char* name, double fallback) {
  const char* raw = std::getenv(name);
  if (raw == nullptr) return fallback;
  const std::string text(raw);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  while (end != nullptr && (*end == ' ' || *end == '\t')) ++end;
  if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
    throw ConfigError(
        fmt::format("environment variable {}='{}' is not a number; unset it or set a number", name, text));
  }
  return v;
}

// MemTotal of /proc/meminfo in bytes.
int64_t mem_total_bytes() {
  const char* path = "/proc/meminfo";
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("cannot read {} to size the embedding memory budget", path));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    if (fields >> key >> kib && key == "MemTotal:" && kib > 0) return kib * 1024;
  }
  throw IoError(fmt::format("{} has no MemTotal line; cannot size the embedding memory budget", path));
}

}  // namespace

ShardMemory shard_memory(const PlannerTable& table, const Shard& shard) {
  ShardMemory m;
  const double rows = static_cast<double>(shard.rows);
  const double cols = static_cast<double>(shard.cols);
  m.weights = rows * cols * static_cast<double>(table.bytes_per_value);
  if (table.trainable) {
    m.optimizer = rows * (table.optimizer_bytes_per_row * cols / static_cast<double>(table.embedding_dim) +
                          table.optimizer_rowwise_bytes_per_row);
  }
  return m;
}

double table_bytes(const PlannerTable& table) {
  return shard_memory(table, Shard{0, 0, table.num_embeddings, 0, table.embedding_dim}).total();
}

double shard_seconds(const PlannerTable& table, ShardingType type, const Shard& shard, const PlannerTopology& topo) {
  const double batch = static_cast<double>(topo.batch_size);
  const double global_batch = batch * topo.world_size;
  const double features = table.num_features;
  const double cols = static_cast<double>(shard.cols);
  // Share of the table's ids this shard looks up: a row block its rows' share (ids assumed uniform).
  const bool row_block = type == ShardingType::kRowWise || type == ShardingType::kTableRowWise;
  const double id_share = row_block ? static_cast<double>(shard.rows) / static_cast<double>(table.num_embeddings) : 1.0;
  const double ids_per_rank = batch * table.pooling_factor * id_share;
  // Forward read + backward update of the looked-up rows.
  const double lookup = 2.0 * global_batch * table.pooling_factor * id_share * cols *
                        static_cast<double>(table.bytes_per_value) / kLookupMemoryBandwidth;
  // Bytes exchanged with each other rank.
  double per_peer;
  if (type == ShardingType::kDataParallel) {
    // All-gather of ids and lengths; all-gather of the pooled gradients in backward.
    per_peer = ids_per_rank * kIdBytes + batch * features * kLengthBytes + batch * features * cols * kPooledBytes;
  } else {
    // Ids and lengths in; pooled vectors out (forward) and their gradients in (backward).
    per_peer = ids_per_rank * kIdBytes + batch * features * kLengthBytes + 2.0 * batch * features * cols * kPooledBytes;
  }
  // Every node has local_world_size ranks: local_world_size - 1 peers on the shard's node, the
  // others on other nodes. The cost does not depend on which rank holds the shard.
  const double intra_peers = topo.local_world_size - 1;
  const double cross_peers = topo.world_size - topo.local_world_size;
  return lookup + per_peer * (intra_peers / topo.intra_node_bandwidth + cross_peers / topo.cross_node_bandwidth);
}

double rank_budget_bytes(const PlannerTopology& topo) {
  return static_cast<double>(topo.memory_per_rank_bytes) * (1.0 - topo.storage_reserve_percent);
}

std::string format_bytes(double bytes) {
  const double kib = 1024.0;
  if (bytes >= kib * kib * kib) return fmt::format("{:.1f} GiB", bytes / (kib * kib * kib));
  if (bytes >= kib * kib) return fmt::format("{:.1f} MiB", bytes / (kib * kib));
  if (bytes >= kib) return fmt::format("{:.1f} KiB", bytes / kib);
  return fmt::format("{:.0f} B", bytes);
}

PlannerTopology topology_from_env(int world_size, int local_world_size, int64_t batch_size) {
  PlannerTopology topo;
  topo.world_size = world_size;
  topo.local_world_size = local_world_size;
  topo.batch_size = batch_size;
  // TorchEasyRec passes these to TorchRec's Topology, whose unit is bytes per millisecond.
  const double intra = env_number("INTRA_NODE_BANDWIDTH", kDefaultIntraNodeBandwidth / 1000.0);
  const double cross = env_number("CROSS_NODE_BANDWIDTH", kDefaultCrossNodeBandwidth / 1000.0);
  if (!(intra > 0)) {
    throw ConfigError(
        fmt::format("environment variable INTRA_NODE_BANDWIDTH={} must be positive (bytes per ms)", intra));
  }
  if (!(cross > 0)) {
    throw ConfigError(
        fmt::format("environment variable CROSS_NODE_BANDWIDTH={} must be positive (bytes per ms)", cross));
  }
  topo.intra_node_bandwidth = intra * 1000.0;
  topo.cross_node_bandwidth = cross * 1000.0;
  topo.storage_reserve_percent = env_number("STORAGE_RESERVE_PERCENT", 0.15);
  if (!(topo.storage_reserve_percent >= 0 && topo.storage_reserve_percent < 1)) {
    throw ConfigError(fmt::format(
        "environment variable STORAGE_RESERVE_PERCENT={} must be a fraction in [0, 1) (e.g. 0.15 keeps 15% free)",
        topo.storage_reserve_percent));
  }
  if (local_world_size < 1) {
    throw ConfigError(fmt::format("local_world_size {} must be at least 1", local_world_size));
  }
  topo.memory_per_rank_bytes = mem_total_bytes() / local_world_size;
  return topo;
}

}  // namespace tzrec::dist
