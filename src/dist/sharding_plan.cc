#include "dist/sharding_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "base/error.h"

namespace tzrec::dist {
namespace {

constexpr ShardingType kAllTypes[] = {ShardingType::kDataParallel, ShardingType::kTableWise, ShardingType::kRowWise,
                                      ShardingType::kTableRowWise, ShardingType::kColumnWise};

std::optional<ShardingType> find_sharding_type(const std::string& name) {
  for (ShardingType t : kAllTypes) {
    if (sharding_type_name(t) == name) return t;
  }
  return std::nullopt;
}

std::string valid_type_names() {
  std::string out;
  for (ShardingType t : kAllTypes) {
    if (!out.empty()) out += ", ";
    out += sharding_type_name(t);
  }
  return out;
}

// Reads plan.json fields with errors that name the file, the table and the field.
class JsonReader {
 public:
  explicit JsonReader(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw CheckpointError(fmt::format("{}: {}: {}", source_, where, what));
  }

  const nlohmann::json& field(const nlohmann::json& obj, const std::string& key, const std::string& where) const {
    if (!obj.is_object()) fail(where, "expected a JSON object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(where, fmt::format("missing field '{}'", key));
    return *it;
  }

  int64_t integer(const nlohmann::json& obj, const std::string& key, const std::string& where) const {
    const nlohmann::json& v = field(obj, key, where);
    if (!v.is_number_integer()) {
      fail(where, fmt::format("field '{}' must be an integer, got {}", key, v.dump()));
    }
    return v.get<int64_t>();
  }

  std::string string(const nlohmann::json& obj, const std::string& key, const std::string& where) const {
    const nlohmann::json& v = field(obj, key, where);
    if (!v.is_string()) fail(where, fmt::format("field '{}' must be a string, got {}", key, v.dump()));
    return v.get<std::string>();
  }

 private:
  std::string source_;
};

std::string describe(const Shard& s) {
  return fmt::format("rank {} rows [{}, {}) cols [{}, {})", s.rank, s.row_offset, s.row_offset + s.rows, s.col_offset,
                     s.col_offset + s.cols);
}

// Checks the shard layout of one table (see ShardingPlan::from_json); `fail` throws.
void validate_table(const TableSharding& t, int world_size, const JsonReader& r) {
  const std::string where = fmt::format("table '{}'", t.table);
  if (t.num_embeddings <= 0 || t.embedding_dim <= 0) {
    r.fail(where,
           fmt::format("num_embeddings {} and embedding_dim {} must be positive", t.num_embeddings, t.embedding_dim));
  }
  if (t.shards.empty()) r.fail(where, "field 'shards' is empty");
  for (size_t i = 0; i < t.shards.size(); ++i) {
    const Shard& s = t.shards[i];
    const std::string sw = fmt::format("{} shards[{}]", where, i);
    if (s.rank < 0 || s.rank >= world_size) {
      r.fail(sw, fmt::format("rank {} is out of range [0, {}) (world_size {})", s.rank, world_size, world_size));
    }
    if (s.rows < 0 || s.cols < 0 || s.row_offset < 0 || s.col_offset < 0 || s.row_offset > t.num_embeddings ||
        s.rows > t.num_embeddings - s.row_offset || s.col_offset > t.embedding_dim ||
        s.cols > t.embedding_dim - s.col_offset) {
      r.fail(sw, fmt::format("{} lies outside the table [{}, {}]", describe(s), t.num_embeddings, t.embedding_dim));
    }
  }
  if (t.type == ShardingType::kDataParallel) {
    if (static_cast<int>(t.shards.size()) != world_size) {
      r.fail(where, fmt::format("data_parallel needs one full shard per rank: {} shards for world_size {}",
                                t.shards.size(), world_size));
    }
    for (int rank = 0; rank < world_size; ++rank) {
      const Shard full{rank, 0, t.num_embeddings, 0, t.embedding_dim};
      if (!(t.shards[rank] == full)) {
        r.fail(fmt::format("{} shards[{}]", where, rank),
               fmt::format("data_parallel shard {} must be the full table on rank {}, got {}", rank, rank,
                           describe(t.shards[rank])));
      }
    }
    return;
  }
  // Type-specific shape of the blocks.
  const bool row_blocks =
      t.type == ShardingType::kRowWise || t.type == ShardingType::kTableRowWise || t.type == ShardingType::kTableWise;
  const bool col_blocks = t.type == ShardingType::kColumnWise;
  if (t.type == ShardingType::kTableWise && t.shards.size() != 1) {
    r.fail(where, fmt::format("table_wise needs exactly one shard, got {}", t.shards.size()));
  }
  std::set<int> ranks;
  for (size_t i = 0; i < t.shards.size(); ++i) {
    const Shard& s = t.shards[i];
    const std::string sw = fmt::format("{} shards[{}]", where, i);
    if (row_blocks && (s.col_offset != 0 || s.cols != t.embedding_dim)) {
      r.fail(sw, fmt::format("{} block must span all {} columns, got {}", sharding_type_name(t.type), t.embedding_dim,
                             describe(s)));
    }
    if (col_blocks && (s.row_offset != 0 || s.rows != t.num_embeddings)) {
      r.fail(sw, fmt::format("column_wise block must span all {} rows, got {}", t.num_embeddings, describe(s)));
    }
    if (!ranks.insert(s.rank).second) {
      r.fail(sw, fmt::format("rank {} holds two blocks of the table", s.rank));
    }
    if (i > 0) {
      const Shard& p = t.shards[i - 1];
      if (std::make_pair(s.col_offset, s.row_offset) < std::make_pair(p.col_offset, p.row_offset)) {
        r.fail(sw, "shards must be ordered by (col_offset, row_offset)");
      }
    }
  }
  // Exact cover: row blocks (column blocks) tile [0, num_embeddings) ([0, embedding_dim)) in order.
  const int64_t extent = col_blocks ? t.embedding_dim : t.num_embeddings;
  int64_t end = 0;
  for (size_t i = 0; i < t.shards.size(); ++i) {
    const Shard& s = t.shards[i];
    const int64_t offset = col_blocks ? s.col_offset : s.row_offset;
    const int64_t size = col_blocks ? s.cols : s.rows;
    const char* axis = col_blocks ? "columns" : "rows";
    if (offset < end) {
      r.fail(where, fmt::format("shards[{}] ({}) overlaps shards[{}]: {} [{}, {}) are held twice", i, describe(s),
                                i - 1, axis, offset, end));
    }
    if (offset > end) {
      r.fail(where, fmt::format("shards leave a gap: {} [{}, {}) are held by no shard (before shards[{}])", axis, end,
                                offset, i));
    }
    end = offset + size;
  }
  if (end != extent) {
    r.fail(where, fmt::format("shards leave a gap: {} [{}, {}) are held by no shard", col_blocks ? "columns" : "rows",
                              end, extent));
  }
}

}  // namespace

std::string sharding_type_name(ShardingType type) {
  switch (type) {
    case ShardingType::kDataParallel:
      return "data_parallel";
    case ShardingType::kTableWise:
      return "table_wise";
    case ShardingType::kRowWise:
      return "row_wise";
    case ShardingType::kTableRowWise:
      return "table_row_wise";
    case ShardingType::kColumnWise:
      return "column_wise";
  }
  return "unknown";
}

ShardingType parse_sharding_type(const std::string& name, const std::string& what) {
  if (auto t = find_sharding_type(name)) return *t;
  throw ConfigError(fmt::format("{}: unknown sharding type '{}'; valid: {}", what, name, valid_type_names()));
}

const TableSharding& ShardingPlan::table(const std::string& name) const {
  for (const TableSharding& t : tables) {
    if (t.table == name) return t;
  }
  std::string known;
  for (const TableSharding& t : tables) known += (known.empty() ? "" : ", ") + t.table;
  throw ConfigError(fmt::format("the sharding plan has no embedding table '{}' (it has: {})", name, known));
}

nlohmann::json ShardingPlan::to_json() const {
  nlohmann::json out_tables = nlohmann::json::array();
  for (const TableSharding& t : tables) {
    nlohmann::json shards = nlohmann::json::array();
    for (const Shard& s : t.shards) {
      shards.push_back({{"rank", s.rank},
                        {"row_offset", s.row_offset},
                        {"rows", s.rows},
                        {"col_offset", s.col_offset},
                        {"cols", s.cols}});
    }
    out_tables.push_back({{"table", t.table},
                          {"num_embeddings", t.num_embeddings},
                          {"embedding_dim", t.embedding_dim},
                          {"sharding_type", sharding_type_name(t.type)},
                          {"reason", t.reason},
                          {"shards", std::move(shards)}});
  }
  return {{"world_size", world_size}, {"tables", std::move(out_tables)}};
}

ShardingPlan ShardingPlan::from_json(const nlohmann::json& json, const std::string& source) {
  const JsonReader r(source);
  ShardingPlan plan;
  const int64_t world = r.integer(json, "world_size", "plan");
  if (world < 1 || world > (1 << 20)) r.fail("plan", fmt::format("world_size {} must be at least 1", world));
  plan.world_size = static_cast<int>(world);
  const nlohmann::json& tables = r.field(json, "tables", "plan");
  if (!tables.is_array()) r.fail("plan", "field 'tables' must be an array");
  std::set<std::string> names;
  for (size_t i = 0; i < tables.size(); ++i) {
    const nlohmann::json& jt = tables[i];
    TableSharding t;
    t.table = r.string(jt, "table", fmt::format("tables[{}]", i));
    const std::string where = fmt::format("table '{}'", t.table);
    if (!names.insert(t.table).second) r.fail(where, "the table appears twice");
    t.num_embeddings = r.integer(jt, "num_embeddings", where);
    t.embedding_dim = r.integer(jt, "embedding_dim", where);
    const std::string type = r.string(jt, "sharding_type", where);
    const auto parsed = find_sharding_type(type);
    if (!parsed) {
      r.fail(where,
             fmt::format("field 'sharding_type': unknown sharding type '{}'; valid: {}", type, valid_type_names()));
    }
    t.type = *parsed;
    if (jt.contains("reason")) t.reason = r.string(jt, "reason", where);
    const nlohmann::json& shards = r.field(jt, "shards", where);
    if (!shards.is_array()) r.fail(where, "field 'shards' must be an array");
    for (size_t k = 0; k < shards.size(); ++k) {
      const std::string sw = fmt::format("{} shards[{}]", where, k);
      Shard s;
      const int64_t rank = r.integer(shards[k], "rank", sw);
      if (rank < 0 || rank >= world) {
        r.fail(sw, fmt::format("rank {} is out of range [0, {}) (world_size {})", rank, world, world));
      }
      s.rank = static_cast<int>(rank);
      s.row_offset = r.integer(shards[k], "row_offset", sw);
      s.rows = r.integer(shards[k], "rows", sw);
      s.col_offset = r.integer(shards[k], "col_offset", sw);
      s.cols = r.integer(shards[k], "cols", sw);
      t.shards.push_back(s);
    }
    validate_table(t, plan.world_size, r);
    plan.tables.push_back(std::move(t));
  }
  return plan;
}

}  // namespace tzrec::dist
