#include "retrieval/sid_bundle.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "data/csv_value_types.h"
#include "data/file_output.h"
#include "data/table_sources.h"
#include "retrieval/sid_codes.h"
#include "retrieval/sid_collision.h"
#include "retrieval/sid_quality.h"

namespace tzrec::retrieval {
namespace {

using parquet::PhysicalType;

const char* type_name_of(SidItemIds::Type t) {
  return t == SidItemIds::Type::kInt32 ? "int32" : t == SidItemIds::Type::kInt64 ? "int64" : "string";
}

void set_type(SidItemIds* ids, SidItemIds::Type type, const data::RecordBatch& batch, const std::string& field) {
  if (ids->type == SidItemIds::Type::kUnknown) ids->type = type;
  if (ids->type != type && batch.num_rows() > 0) {
    throw DataError(fmt::format("{}: the item ids of '{}' are {}, earlier ones {}: the item ID type changed",
                                batch.describe_row(0), field, type_name_of(type), type_name_of(ids->type)));
  }
}

// The codes of `batch`'s column `field`, every row `codebook.size()` codes inside the codebook.
SidCodeRows checked_codes(const data::RecordBatch& batch, const std::string& field,
                          const std::vector<int64_t>& codebook) {
  SidCodeRows rows = decode_sid_codes(batch, field, static_cast<int64_t>(codebook.size()));
  for (int64_t r = 0; r < rows.rows(); ++r) {
    if (const std::string problem = sid_row_problem(rows, r, codebook); !problem.empty()) {
      throw DataError(fmt::format("{}: field '{}': {} (not an artifact this tool wrote for the codebook {}?)",
                                  batch.describe_row(r), field, problem, fmt::join(codebook, ",")));
    }
  }
  return rows;
}

std::unique_ptr<data::BatchSource> open_artifact(data::TableFormat format, const std::string& pattern,
                                                 const std::vector<std::string>& columns, int64_t batch_size) {
  const std::vector<std::string> have = data::table_columns(format, pattern);
  for (const std::string& c : columns) {
    if (std::find(have.begin(), have.end(), c) == have.end()) {
      throw DataError(fmt::format("column '{}' is missing from '{}'; it is not an artifact this tool published", c,
                                  pattern));
    }
  }
  data::DatasetSources s = data::open_table(format, pattern, columns, batch_size, 1, 0, 1);
  return std::move(s.sources.at(0));
}

}  // namespace

std::string SidItemIds::type_name() const { return type_name_of(type); }

std::string SidItemIds::key(int64_t r) const {
  if (type == Type::kString) return strings[static_cast<size_t>(r)];
  return std::string(reinterpret_cast<const char*>(&ints[static_cast<size_t>(r)]), sizeof(int64_t));
}

std::string SidItemIds::text(int64_t r) const {
  return type == Type::kString ? strings[static_cast<size_t>(r)] : std::to_string(ints[static_cast<size_t>(r)]);
}

uint64_t SidItemIds::order_hash(int64_t r) const {
  return type == Type::kString ? sid_order_hash(std::string_view(strings[static_cast<size_t>(r)]))
                               : sid_order_hash(ints[static_cast<size_t>(r)]);
}

PhysicalType SidItemIds::physical_type() const {
  return type == Type::kString ? PhysicalType::kByteArray : type == Type::kInt32 ? PhysicalType::kInt32 : PhysicalType::kInt64;
}

void SidItemIds::append_to(parquet::ColumnBuilder& column, int64_t r) const {
  if (type == Type::kString) {
    column.append_string(strings[static_cast<size_t>(r)]);
  } else if (type == Type::kInt32) {
    column.append<int32_t>(static_cast<int32_t>(ints[static_cast<size_t>(r)]));
  } else {
    column.append<int64_t>(ints[static_cast<size_t>(r)]);
  }
}

void append_sid_item_ids(const data::RecordBatch& batch, const std::string& field, SidItemIds* ids) {
  const int64_t n = batch.num_rows();
  auto null_id = [&](int64_t r) {
    return DataError(fmt::format("{}: item id field '{}' is null; item IDs must not contain null values",
                                 batch.describe_row(r), field));
  };
  if (const int text = batch.column_index(field); text >= 0) {
    const data::StringColumn& c = batch.columns[static_cast<size_t>(text)];
    std::vector<std::string_view> cells;
    for (int64_t r = 0; r < n; ++r) cells.push_back(c.cell(r));
    const bool integers = data::infer_csv_value_type(cells) == data::CsvValueType::kInt64;
    set_type(ids, integers ? SidItemIds::Type::kInt64 : SidItemIds::Type::kString, batch, field);
    for (int64_t r = 0; r < n; ++r) {
      const std::string_view cell = cells[static_cast<size_t>(r)];
      int64_t v = 0;
      if (!integers) {
        ids->strings.emplace_back(cell);
      } else if (data::csv_null_text(cell) || !data::parse_csv_int64(cell, &v)) {
        throw null_id(r);
      } else {
        ids->ints.push_back(v);
      }
    }
    return;
  }
  const data::TypedColumn* typed = batch.typed_column(field);
  if (typed == nullptr) throw DataError(fmt::format("no column '{}' in the input", field));
  const parquet::ColumnData& c = typed->values;
  if (typed->list_depth() != 0 || typed->is_map() ||
      (c.type() != PhysicalType::kInt32 && c.type() != PhysicalType::kInt64 && c.type() != PhysicalType::kByteArray)) {
    throw DataError(fmt::format("{}: item id field '{}' is {}; item ids must be integers or strings",
                                batch.files.empty() ? "the input" : batch.files.front(), field,
                                typed->list_depth() ? "a list" : parquet::to_string(c.type())));
  }
  const SidItemIds::Type type = c.type() == PhysicalType::kInt32   ? SidItemIds::Type::kInt32
                                : c.type() == PhysicalType::kInt64 ? SidItemIds::Type::kInt64
                                                                   : SidItemIds::Type::kString;
  set_type(ids, type, batch, field);
  for (int64_t r = 0; r < n; ++r) {
    if (c.is_null(r)) throw null_id(r);
    if (type == SidItemIds::Type::kString) {
      ids->strings.emplace_back(c.bytes(r));
    } else {
      ids->ints.push_back(type == SidItemIds::Type::kInt32 ? c.data<int32_t>()[r] : c.data<int64_t>()[r]);
    }
  }
}

std::string sid_artifact_location(const std::string& root, const std::string& generation, const std::string& artifact) {
  return (std::filesystem::path(root) / generation / artifact).string();
}

const SidArtifact* SidManifest::artifact(const std::string& name) const {
  for (const SidArtifact& a : artifacts) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

void write_sid_manifest(const std::string& path, const SidManifest& m) {
  nlohmann::ordered_json j;
  j["bundle_uuid"] = m.bundle_uuid;
  j["codebook"] = m.codebook;
  j["capacity"] = m.capacity;
  j["max_observed_items_per_sid"] = m.max_observed_items_per_sid;
  nlohmann::ordered_json artifacts = nlohmann::ordered_json::object();
  for (const SidArtifact& a : m.artifacts) {
    artifacts[a.name] = {{"save_type", a.save_type}, {"rows", a.rows}, {"location", a.location}};
  }
  j["artifacts"] = artifacts;
  if (!m.since_bundle_uuid.empty()) j["since_bundle_uuid"] = m.since_bundle_uuid;
  if (!m.item_id_type.empty()) j["item_id_type"] = m.item_id_type;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  data::TextFileOutput out(path, "resolve_sid_collisions manifest");
  out.buffer() = j.dump(2);
  out.finish();
}

SidManifest read_sid_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw DataError(fmt::format("no manifest at '{}'; the manifest is written last, so its absence means that "
                                "generation did not finish",
                                path));
  }
  SidManifest m;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    for (const char* key : {"bundle_uuid", "codebook", "capacity", "max_observed_items_per_sid", "artifacts"}) {
      if (!j.contains(key)) throw DataError(fmt::format("the manifest at '{}' is missing the key '{}'", path, key));
    }
    m.bundle_uuid = j["bundle_uuid"].get<std::string>();
    m.codebook = j["codebook"].get<std::vector<int64_t>>();
    m.capacity = j["capacity"].get<int64_t>();
    m.max_observed_items_per_sid = j["max_observed_items_per_sid"].get<int64_t>();
    for (const auto& [name, a] : j["artifacts"].items()) {
      m.artifacts.push_back({name, a.at("save_type").get<std::string>(), a.at("rows").get<int64_t>(),
                             a.at("location").get<std::string>()});
      if ((name == "sid_to_items" || name == "delta_sid_to_items") && m.artifacts.back().save_type != "parquet") {
        throw DataError(fmt::format("the manifest at '{}' declares {} as '{}'; the serving set is always parquet", path,
                                    name, m.artifacts.back().save_type));
      }
    }
    if (j.contains("since_bundle_uuid")) m.since_bundle_uuid = j["since_bundle_uuid"].get<std::string>();
    if (j.contains("item_id_type")) m.item_id_type = j["item_id_type"].get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("the manifest at '{}' is not readable: {}", path, e.what()));
  }
  return m;
}

SidGroups read_sid_to_items(const std::string& pattern, const std::vector<int64_t>& codebook, int64_t batch_size) {
  SidGroups g;
  const int64_t L = static_cast<int64_t>(codebook.size());
  auto source = open_artifact(data::TableFormat::kParquet, pattern, {"codebook", "itemids"}, batch_size);
  while (std::optional<data::SourcedBatch> b = source->next()) {
    const data::RecordBatch& batch = b->records;
    const SidCodeRows codes = checked_codes(batch, "codebook", codebook);
    const data::TypedColumn* items = batch.typed_column("itemids");
    if (items == nullptr || items->list_depth() != 1) {
      throw DataError(fmt::format("{}: 'itemids' is not a list of item ids", batch.files.front()));
    }
    // The list's elements as a one-row-per-element batch of ids.
    data::RecordBatch elements;
    elements.files = batch.files;
    data::TypedColumn flat{"itemids", items->values, std::nullopt};
    flat.values.lists.clear();
    flat.values.num_rows = items->values.num_values();
    elements.typed_columns.push_back(std::move(flat));
    elements.origins.resize(static_cast<size_t>(items->values.num_values()));
    append_sid_item_ids(elements, "itemids", &g.items);
    const parquet::ListLevel& lists = items->values.lists[0];
    for (int64_t r = 0; r < codes.rows(); ++r) {
      const int64_t* c = codes.row(r);
      const int64_t key = sid_bucket_key(c, codebook);
      if (!g.keys.empty() && key <= g.keys.back()) {
        throw DataError(fmt::format("{}: sid_to_items must be ascending by SID with one row per SID; merging would "
                                    "emit duplicate SIDs",
                                    batch.describe_row(r)));
      }
      g.keys.push_back(key);
      g.codes.insert(g.codes.end(), c, c + L);
      g.offsets.push_back(g.offsets.back() + lists.offsets[static_cast<size_t>(r) + 1] - lists.offsets[static_cast<size_t>(r)]);
    }
  }
  return g;
}

SidItemRows read_item_to_sid(const std::string& pattern, const std::string& save_type,
                             const std::vector<int64_t>& codebook, int64_t batch_size) {
  SidItemRows rows;
  const data::TableFormat format = save_type == "csv" ? data::TableFormat::kCsv : data::TableFormat::kParquet;
  auto source =
      open_artifact(format, pattern, {"item_id", "origin_codebook", "codebook", "index"}, batch_size);
  while (std::optional<data::SourcedBatch> b = source->next()) {
    const data::RecordBatch& batch = b->records;
    append_sid_item_ids(batch, "item_id", &rows.ids);
    const SidCodeRows origin = checked_codes(batch, "origin_codebook", codebook);
    const SidCodeRows codes = checked_codes(batch, "codebook", codebook);
    rows.origin_codes.insert(rows.origin_codes.end(), origin.values.begin(), origin.values.end());
    rows.codes.insert(rows.codes.end(), codes.values.begin(), codes.values.end());
    const SidCodeRows index = decode_sid_codes(batch, "index", 1);
    for (int64_t r = 0; r < index.rows(); ++r) {
      if (!index.valid[static_cast<size_t>(r)]) {
        throw DataError(fmt::format("{}: 'index' is not a slot number", batch.describe_row(r)));
      }
      rows.slots.push_back(index.values[static_cast<size_t>(r)]);
    }
  }
  return rows;
}

}  // namespace tzrec::retrieval
