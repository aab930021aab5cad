#include "retrieval/sid_collision_job.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/logging.h"
#include "data/csv_value_types.h"
#include "data/file_output.h"
#include "data/path_conflict.h"
#include "data/prediction_writer.h"
#include "data/table_sources.h"
#include "data/typed_output_table.h"
#include "parquet/writer.h"
#include "retrieval/sid_codes.h"
#include "retrieval/sid_quality.h"

namespace tzrec::retrieval {
namespace {

using parquet::PhysicalType;

// The input's item ids, integers or strings, as the input types them.
struct ItemIds {
  enum class Type { kUnknown, kInt32, kInt64, kString };
  Type type = Type::kUnknown;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;

  int64_t size() const { return static_cast<int64_t>(type == Type::kString ? strings.size() : ints.size()); }
  // pyarrow's name of the type (the manifest's item_id_type).
  std::string type_name() const { return type == Type::kInt32 ? "int32" : type == Type::kInt64 ? "int64" : "string"; }
  uint64_t order_hash(int64_t r) const {
    return type == Type::kString ? sid_order_hash(std::string_view(strings[static_cast<size_t>(r)]))
                                 : sid_order_hash(ints[static_cast<size_t>(r)]);
  }
  // A byte key of row r for lookups.
  std::string key(int64_t r) const {
    if (type == Type::kString) return strings[static_cast<size_t>(r)];
    return std::string(reinterpret_cast<const char*>(&ints[static_cast<size_t>(r)]), sizeof(int64_t));
  }
};

// Appends the item ids of `batch` to `ids` (checking the type stays the same). Throws DataError
// for a null id, a type change and a column of another type.
void append_item_ids(const data::RecordBatch& batch, const std::string& field, ItemIds* ids) {
  ItemIds::Type type;
  ItemIds batch_ids;
  const int64_t n = batch.num_rows();
  auto null_id = [&](int64_t r) {
    return DataError(fmt::format("{}: item id field '{}' is null; item IDs must not contain null values",
                                 batch.describe_row(r), field));
  };
  if (const int text = batch.column_index(field); text >= 0) {
    const data::StringColumn& c = batch.columns[static_cast<size_t>(text)];
    std::vector<std::string_view> cells;
    for (int64_t r = 0; r < n; ++r) cells.push_back(c.cell(r));
    type = data::infer_csv_value_type(cells) == data::CsvValueType::kInt64 ? ItemIds::Type::kInt64
                                                                             : ItemIds::Type::kString;
    for (int64_t r = 0; r < n; ++r) {
      if (type == ItemIds::Type::kString) {
        ids->strings.emplace_back(cells[static_cast<size_t>(r)]);
        continue;
      }
      int64_t v = 0;
      if (data::csv_null_text(cells[static_cast<size_t>(r)]) || !data::parse_csv_int64(cells[static_cast<size_t>(r)], &v)) {
        throw null_id(r);
      }
      ids->ints.push_back(v);
    }
  } else {
    const data::TypedColumn* typed = batch.typed_column(field);
    if (typed == nullptr) throw DataError(fmt::format("no column '{}' in the input", field));
    const parquet::ColumnData& c = typed->values;
    if (typed->list_depth() != 0 || typed->is_map() ||
        (c.type() != PhysicalType::kInt32 && c.type() != PhysicalType::kInt64 && c.type() != PhysicalType::kByteArray)) {
      throw DataError(fmt::format("{}: item id field '{}' is {}; item ids must be integers or strings",
                                  batch.files.empty() ? "the input" : batch.files.front(), field,
                                  typed->list_depth() ? "a list" : parquet::to_string(c.type())));
    }
    type = c.type() == PhysicalType::kInt32   ? ItemIds::Type::kInt32
           : c.type() == PhysicalType::kInt64 ? ItemIds::Type::kInt64
                                              : ItemIds::Type::kString;
    for (int64_t r = 0; r < n; ++r) {
      if (c.is_null(r)) throw null_id(r);
      if (type == ItemIds::Type::kString) {
        ids->strings.emplace_back(c.bytes(r));
      } else {
        ids->ints.push_back(type == ItemIds::Type::kInt32 ? c.data<int32_t>()[r] : c.data<int64_t>()[r]);
      }
    }
  }
  if (ids->type == ItemIds::Type::kUnknown) ids->type = type;
  if (ids->type != type && n > 0) {
    ItemIds t;
    t.type = type;
    throw DataError(fmt::format("{}: item ID type changed between batches: {} vs {}", batch.describe_row(0),
                                ids->type_name(), t.type_name()));
  }
}

PhysicalType id_physical_type(const ItemIds& ids) {
  return ids.type == ItemIds::Type::kString ? PhysicalType::kByteArray
         : ids.type == ItemIds::Type::kInt32 ? PhysicalType::kInt32
                                             : PhysicalType::kInt64;
}

void append_id(parquet::ColumnBuilder& b, const ItemIds& ids, int64_t r) {
  if (ids.type == ItemIds::Type::kString) {
    b.append_string(ids.strings[static_cast<size_t>(r)]);
  } else if (ids.type == ItemIds::Type::kInt32) {
    b.append<int32_t>(static_cast<int32_t>(ids.ints[static_cast<size_t>(r)]));
  } else {
    b.append<int64_t>(ids.ints[static_cast<size_t>(r)]);
  }
}

// A random version-4 UUID as 32 hex digits (Python's uuid.uuid4().hex).
std::string uuid4_hex() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  uint64_t hi = gen(), lo = gen();
  hi = (hi & ~(uint64_t{0xF} << 12)) | (uint64_t{4} << 12);
  lo = (lo & ~(uint64_t{3} << 62)) | (uint64_t{2} << 62);
  return fmt::format("{:016x}{:016x}", hi, lo);
}

std::string artifact_location(const std::string& root, const std::string& generation, const std::string& artifact) {
  return (std::filesystem::path(root) / generation / artifact).string();
}

class Resolver {
 public:
  explicit Resolver(const SidCollisionOptions& o) : o_(o) {}

  SidCollisionStats run() {
    check_options();
    format_ = data::table_format(o_.reader_type, o_.input_path, "resolve_sid_collisions");
    writer_type_ = o_.item_to_sid_writer_type.empty()
                       ? (format_ == data::TableFormat::kCsv ? "CsvWriter" : "ParquetWriter")
                       : o_.item_to_sid_writer_type;
    check_columns({o_.item_id_field, o_.code_field});
    read_codes();
    std::vector<uint64_t> hashes(static_cast<size_t>(ids_.size()));
    for (int64_t r = 0; r < ids_.size(); ++r) hashes[static_cast<size_t>(r)] = ids_.order_hash(r);
    const SidCollisionPlan plan = plan_sid_collisions(codes_, hashes, o_.codebook, o_.max_items_per_codebook);
    log::info("full-resolve mode: {} items in {} SID buckets, {} of them beyond the capacity of {}", ids_.size(),
              plan.bucket_keys.size(), plan.overflow_rows.size(), o_.max_items_per_codebook);
    std::vector<int64_t> candidates;
    int64_t per_row = 0;
    if (!plan.overflow_rows.empty()) {
      if (o_.strategy == "random") {
        std::vector<uint64_t> overflow_hashes;
        for (int64_t row : plan.overflow_rows) overflow_hashes.push_back(hashes[static_cast<size_t>(row)]);
        candidates = random_candidate_last_codes(overflow_hashes, o_.random_num_candidates, o_.codebook.back(), &per_row);
      } else {
        candidates = load_candidate_last_codes(plan.overflow_rows, &per_row);
      }
    }
    const SidCollisionResult result = resolve_sid_collisions_first_fit(plan, candidates, per_row);
    if (o_.rate_only) {
      log::info("rate_only: skipping item_to_sid and sid_to_items writes");
    } else {
      const std::string uuid = uuid4_hex();
      const int64_t buckets = write_sid_to_items(plan, result);
      write_item_to_sid(result);
      write_manifest(uuid, result.stats, buckets);
    }
    const SidCollisionStats& s = result.stats;
    log::info("SID collision resolution finished: total_items={} raw_collision_buckets={} final_collision_buckets={} "
              "relocated_count={} unresolved_count={} max_final_bucket_size={}",
              s.total_items, s.raw_collision_buckets, s.final_collision_buckets, s.relocated_count, s.unresolved_count,
              s.max_final_bucket_size);
    return s;
  }

 private:
  void check_options() {
    if (o_.input_path.empty()) throw UsageError("--input_path is required");
    if (o_.batch_size < 1) throw UsageError(fmt::format("--batch_size must be >= 1, got {}", o_.batch_size));
    if (o_.progress_interval < 1) {
      throw UsageError(fmt::format("--progress_interval must be >= 1, got {}", o_.progress_interval));
    }
    if (o_.random_num_candidates < 1) {
      throw UsageError(fmt::format("--random_num_candidates must be >= 1, got {}", o_.random_num_candidates));
    }
    if (o_.strategy != "candidate" && o_.strategy != "random") {
      throw UsageError(fmt::format("--strategy {}: use candidate or random", o_.strategy));
    }
    if (!o_.from_generation.empty()) {
      throw NotSupportedError("resolve_sid_collisions --from_generation (appending onto a published generation)");
    }
    if (!o_.rate_only && o_.generation.empty()) throw UsageError("--generation is required unless --rate_only is set");
    if (!o_.rate_only && o_.output_path.empty()) throw UsageError("--output_path is required unless --rate_only is set");
    for (const std::string* p : {&o_.output_path, &o_.item_to_sid_root}) {
      if (p->rfind("odps://", 0) == 0) throw NotSupportedError("resolve_sid_collisions to MaxCompute tables (" + *p + ")");
    }
    if (o_.max_items_per_codebook < 1) {
      throw UsageError(fmt::format("--max_items_per_codebook: capacity must be >= 1, got {}", o_.max_items_per_codebook));
    }
    check_sid_codebook(o_.codebook);
    if (!o_.item_to_sid_writer_type.empty() && o_.item_to_sid_writer_type != "CsvWriter" &&
        o_.item_to_sid_writer_type != "ParquetWriter") {
      if (o_.item_to_sid_writer_type == "OdpsWriter") {
        throw NotSupportedError("resolve_sid_collisions --item_to_sid_writer_type OdpsWriter (MaxCompute tables)");
      }
      throw UsageError(fmt::format("--item_to_sid_writer_type {}: use CsvWriter or ParquetWriter",
                                   o_.item_to_sid_writer_type));
    }
    const char* world = std::getenv("WORLD_SIZE");
    const char* rank = std::getenv("RANK");
    if ((world && std::string(world) != "1") || (rank && std::string(rank) != "0")) {
      throw UsageError(fmt::format("resolve_sid_collisions is single-process; run it without tzrec launch (got "
                                   "WORLD_SIZE={}, RANK={}): every rank would process the whole input",
                                   world ? world : "1", rank ? rank : "0"));
    }
    std::vector<std::string> paths = {o_.input_path};
    if (!o_.output_path.empty()) paths.push_back(o_.output_path);
    item_to_sid_root_ = o_.item_to_sid_root.empty() ? o_.output_path : o_.item_to_sid_root;
    if (!o_.item_to_sid_root.empty() && !o_.output_path.empty()) {
      std::error_code ec;
      if (std::filesystem::weakly_canonical(o_.item_to_sid_root, ec) ==
          std::filesystem::weakly_canonical(o_.output_path, ec)) {
        log::warning("--item_to_sid_root {} is the same location as --output_path, so the flag has no effect",
                     o_.item_to_sid_root);
      } else {
        paths.push_back(o_.item_to_sid_root);
      }
    }
    if (std::optional<std::string> conflict = data::find_path_conflict(paths)) throw UsageError(*conflict);
  }

  void check_columns(const std::vector<std::string>& fields) {
    const std::vector<std::string> columns = data::table_columns(format_, o_.input_path);
    std::vector<std::string> missing;
    for (const std::string& f : fields) {
      if (std::find(columns.begin(), columns.end(), f) == columns.end()) missing.push_back("'" + f + "'");
    }
    if (!missing.empty()) {
      throw UsageError(fmt::format("columns [{}] not found in input '{}' (its columns: {})", fmt::join(missing, ", "),
                                   o_.input_path, fmt::join(columns, ", ")));
    }
  }

  std::unique_ptr<data::BatchSource> open(const std::vector<std::string>& fields) {
    data::DatasetSources s = data::open_table(format_, o_.input_path, fields, o_.batch_size, 1, 0, 1);
    return std::move(s.sources.at(0));
  }

  void progress(const char* what, int64_t done, int64_t* last) {
    if (done - *last >= o_.progress_interval) {
      log::info("{}: {} samples processed", what, done);
      *last = done;
    }
  }

  void read_codes() {
    const int64_t L = static_cast<int64_t>(o_.codebook.size());
    auto source = open({o_.item_id_field, o_.code_field});
    int64_t last = 0;
    while (std::optional<data::SourcedBatch> b = source->next()) {
      const data::RecordBatch& batch = b->records;
      append_item_ids(batch, o_.item_id_field, &ids_);
      const SidCodeRows rows = decode_sid_codes(batch, o_.code_field, L);
      for (int64_t r = 0; r < rows.rows(); ++r) {
        if (!rows.valid[static_cast<size_t>(r)]) {
          throw DataError(fmt::format("{}: field '{}' does not hold {} integer codes (one per --codebook layer)",
                                      batch.describe_row(r), o_.code_field, L));
        }
        if (const int64_t l = first_code_out_of_range(rows.row(r), o_.codebook); l >= 0) {
          throw DataError(fmt::format("{}: field '{}': code {} of layer {} is outside [0, {}); check that --codebook "
                                      "matches the model that produced the SID table",
                                      batch.describe_row(r), o_.code_field, rows.row(r)[l], l,
                                      o_.codebook[static_cast<size_t>(l)]));
        }
      }
      codes_.insert(codes_.end(), rows.values.begin(), rows.values.end());
      progress("Reading SID input", ids_.size(), &last);
    }
    if (ids_.size() == 0) throw DataError(fmt::format("{}: the SID input is empty", o_.input_path));
  }

  // The last-layer code of each candidate of each overflow row, from a second pass over the input:
  // a row whose item id is an overflow row's gives that row its candidates (the last such row wins;
  // overflow rows sharing an id share them).
  std::vector<int64_t> load_candidate_last_codes(const std::vector<int64_t>& overflow_rows, int64_t* per_row) {
    check_columns({o_.item_id_field, o_.candidate_codes_field});
    const int64_t L = static_cast<int64_t>(o_.codebook.size());
    const size_t m = overflow_rows.size();
    std::unordered_map<std::string, size_t> representative;  // item id → its first overflow position
    std::vector<size_t> rep_of(m);
    for (size_t i = 0; i < m; ++i) rep_of[i] = representative.emplace(ids_.key(overflow_rows[i]), i).first->second;
    std::vector<int64_t> candidates;
    std::vector<uint8_t> seen(m, 0);
    int64_t k = -1, scanned = 0, last = 0;
    auto source = open({o_.item_id_field, o_.candidate_codes_field});
    while (std::optional<data::SourcedBatch> b = source->next()) {
      const data::RecordBatch& batch = b->records;
      ItemIds batch_ids;
      append_item_ids(batch, o_.item_id_field, &batch_ids);
      const SidCodeLists lists = decode_sid_code_lists(batch, o_.candidate_codes_field);
      for (int64_t r = 0; r < batch_ids.size(); ++r) {
        auto it = representative.find(batch_ids.key(r));
        if (it == representative.end()) continue;
        const int64_t begin = lists.offsets[static_cast<size_t>(r)], end = lists.offsets[static_cast<size_t>(r) + 1];
        if (!lists.valid[static_cast<size_t>(r)] || (end - begin) % L != 0) {
          throw DataError(fmt::format("{}: field '{}' does not hold top-k × {} integer codes (the candidates' codes, "
                                      "flat)",
                                      batch.describe_row(r), o_.candidate_codes_field, L));
        }
        const int64_t row_k = (end - begin) / L;
        if (k < 0) {
          k = row_k;
          candidates.assign(m * static_cast<size_t>(k), 0);
        } else if (row_k != k) {
          throw DataError(fmt::format("{}: field '{}' holds {} candidates, earlier rows {}: the candidate top-k "
                                      "changed",
                                      batch.describe_row(r), o_.candidate_codes_field, row_k, k));
        }
        for (int64_t j = 0; j < k; ++j) {
          candidates[it->second * static_cast<size_t>(k) + static_cast<size_t>(j)] = lists.values[static_cast<size_t>(begin + j * L + L - 1)];
        }
        seen[it->second] = 1;
      }
      scanned += batch_ids.size();
      progress("Scanning candidate input", scanned, &last);
    }
    if (k < 0) {
      throw DataError(fmt::format("{}: {} items are beyond their bucket's capacity but field '{}' gave no candidates",
                                  o_.input_path, m, o_.candidate_codes_field));
    }
    std::vector<size_t> missing;
    for (size_t i = 0; i < m; ++i) {
      if (rep_of[i] != i) {
        std::copy_n(candidates.begin() + static_cast<std::ptrdiff_t>(rep_of[i] * static_cast<size_t>(k)), k,
                    candidates.begin() + static_cast<std::ptrdiff_t>(i * static_cast<size_t>(k)));
        seen[i] = seen[rep_of[i]];
      }
      if (!seen[i]) missing.push_back(i);
    }
    if (!missing.empty()) {
      const size_t count = missing.size();
      missing.resize(std::min<size_t>(count, 10));
      throw DataError(fmt::format("{}: field '{}' missing for {} overflow items; first overflow positions: {}",
                                  o_.input_path, o_.candidate_codes_field, count, fmt::join(missing, ",")));
    }
    *per_row = k;
    return candidates;
  }

  // Each layer's codes shifted by the sizes of the layers before it.
  std::vector<int64_t> offset_codes(const int64_t* codes) const {
    std::vector<int64_t> out(o_.codebook.size());
    int64_t start = 0;
    for (size_t l = 0; l < o_.codebook.size(); ++l) {
      out[l] = codes[l] + start;
      start += o_.codebook[l];
    }
    return out;
  }

  std::vector<int64_t> final_codes(const SidCollisionResult& result, int64_t r) const {
    const size_t L = o_.codebook.size();
    std::vector<int64_t> c(codes_.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(r) * L),
                           codes_.begin() + static_cast<std::ptrdiff_t>((static_cast<size_t>(r) + 1) * L));
    c.back() = result.last_codes[static_cast<size_t>(r)];
    return c;
  }

  int64_t write_sid_to_items(const SidCollisionPlan& plan, const SidCollisionResult& result) {
    const int64_t n = ids_.size();
    const int64_t last_size = o_.codebook.back();
    // Rows by (final SID, slot): the buckets ascending, each in slot order.
    std::vector<int64_t> keys(static_cast<size_t>(n)), order(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      keys[static_cast<size_t>(r)] = plan.band_ids[static_cast<size_t>(r)] * last_size + result.last_codes[static_cast<size_t>(r)];
      order[static_cast<size_t>(r)] = r;
    }
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const size_t i = static_cast<size_t>(a), j = static_cast<size_t>(b);
      return keys[i] != keys[j] ? keys[i] < keys[j] : result.slots[i] < result.slots[j];
    });
    const std::string dir = artifact_location(o_.output_path, o_.generation, "sid_to_items");
    auto writer = data::make_prediction_writer("ParquetWriter", dir, 0);
    data::TypedOutputTable t({{"codebook", PhysicalType::kInt64, 1},
                  {"offset_codebook", PhysicalType::kInt64, 1},
                  {"itemids", id_physical_type(ids_), 1}});
    int64_t buckets = 0, pending = 0, pending_items = 0;
    for (int64_t k = 0; k < n;) {
      int64_t e = k;
      while (e < n && keys[static_cast<size_t>(order[static_cast<size_t>(e)])] == keys[static_cast<size_t>(order[static_cast<size_t>(k)])]) ++e;
      const std::vector<int64_t> codes = final_codes(result, order[static_cast<size_t>(k)]);
      const std::vector<int64_t> offsets = offset_codes(codes.data());
      t.append_list(0, codes.data(), static_cast<int64_t>(codes.size()));
      t.append_list(1, offsets.data(), static_cast<int64_t>(offsets.size()));
      t[2].begin_list();
      for (int64_t i = k; i < e; ++i) append_id(t[2], ids_, order[static_cast<size_t>(i)]);
      t[2].end_list();
      ++buckets;
      ++pending;
      pending_items += e - k;
      if (pending_items >= 1000000 || pending >= 100000) {  // written in pieces of at most about 1M items
        t.flush(*writer, pending);
        pending = pending_items = 0;
      }
      k = e;
    }
    if (pending > 0) t.flush(*writer, pending);
    writer->close();
    return buckets;
  }

  void write_item_to_sid(const SidCollisionResult& result) {
    const std::string dir = artifact_location(item_to_sid_root_, o_.generation, "item_to_sid");
    auto writer = data::make_prediction_writer(writer_type_, dir, 0);
    data::TypedOutputTable t({{"item_id", id_physical_type(ids_), 0},
                  {"origin_codebook", PhysicalType::kInt64, 1},
                  {"codebook", PhysicalType::kInt64, 1},
                  {"offset_codebook", PhysicalType::kInt64, 1},
                  {"index", PhysicalType::kInt64, 0}});
    const int64_t n = ids_.size();
    const int64_t L = static_cast<int64_t>(o_.codebook.size());
    int64_t pending = 0, last = 0;
    for (int64_t r = 0; r < n; ++r) {
      const std::vector<int64_t> codes = final_codes(result, r);
      const std::vector<int64_t> offsets = offset_codes(codes.data());
      append_id(t[0], ids_, r);
      t.append_list(1, codes_.data() + r * L, L);
      t.append_list(2, codes.data(), L);
      t.append_list(3, offsets.data(), L);
      t[4].append<int64_t>(result.slots[static_cast<size_t>(r)]);
      if (++pending == 1000000) {
        t.flush(*writer, pending);
        pending = 0;
      }
      progress("Writing resolved item_to_sid", r + 1, &last);
    }
    if (pending > 0) t.flush(*writer, pending);
    writer->close();
  }

  void write_manifest(const std::string& uuid, const SidCollisionStats& stats, int64_t buckets) {
    nlohmann::ordered_json m;
    m["bundle_uuid"] = uuid;
    m["codebook"] = o_.codebook;
    m["capacity"] = o_.max_items_per_codebook;
    m["max_observed_items_per_sid"] = stats.max_final_bucket_size;
    nlohmann::ordered_json artifacts;
    artifacts["sid_to_items"] = {{"save_type", "parquet"},
                                 {"rows", buckets},
                                 {"location", artifact_location(o_.output_path, o_.generation, "sid_to_items")}};
    artifacts["item_to_sid"] = {{"save_type", writer_type_ == "CsvWriter" ? "csv" : "parquet"},
                                {"rows", ids_.size()},
                                {"location", artifact_location(item_to_sid_root_, o_.generation, "item_to_sid")}};
    m["artifacts"] = artifacts;
    m["item_id_type"] = ids_.type_name();
    const std::string path = (std::filesystem::path(o_.output_path) / o_.generation / "manifest.json").string();
    data::TextFileOutput out(path, "resolve_sid_collisions manifest");
    out.buffer() = m.dump(2);
    out.finish();
    log::info("wrote bundle {} manifest to {}", uuid, path);
  }

  const SidCollisionOptions& o_;
  data::TableFormat format_ = data::TableFormat::kParquet;
  std::string writer_type_;
  std::string item_to_sid_root_;
  ItemIds ids_;
  std::vector<int64_t> codes_;  // [N * layers]
};

}  // namespace

SidCollisionStats run_resolve_sid_collisions(const SidCollisionOptions& options) { return Resolver(options).run(); }

}  // namespace tzrec::retrieval
