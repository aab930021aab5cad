#include "retrieval/sid_collision_job.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "data/path_conflict.h"
#include "data/table_sources.h"
#include "data/typed_output_table.h"
#include "parquet/writer.h"
#include "retrieval/sid_bundle.h"
#include "retrieval/sid_codes.h"
#include "retrieval/sid_quality.h"

namespace tzrec::retrieval {
namespace {

using parquet::PhysicalType;

// A random version-4 UUID as 32 hex digits (Python's uuid.uuid4().hex).
std::string uuid4_hex() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  uint64_t hi = gen(), lo = gen();
  hi = (hi & ~(uint64_t{0xF} << 12)) | (uint64_t{4} << 12);
  lo = (lo & ~(uint64_t{3} << 62)) | (uint64_t{2} << 62);
  return fmt::format("{:016x}{:016x}", hi, lo);
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
    if (append()) load_prior_manifest();
    read_codes();
    SidPriorOccupancy occupancy;
    if (append()) occupancy = load_published();
    std::vector<uint64_t> hashes(static_cast<size_t>(ids_.size()));
    for (int64_t r = 0; r < ids_.size(); ++r) hashes[static_cast<size_t>(r)] = ids_.order_hash(r);
    const SidCollisionPlan plan =
        plan_sid_collisions(codes_, hashes, o_.codebook, o_.max_items_per_codebook, std::move(occupancy));
    log::info("{}: {} items in {} SID buckets, {} of them beyond the capacity of {}",
              append() ? "append mode" : "full-resolve mode", ids_.size(), plan.bucket_keys.size(),
              plan.overflow_rows.size(), o_.max_items_per_codebook);
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
      SidManifest m;
      m.bundle_uuid = uuid4_hex();
      write_sid_to_items(plan, result, &m);
      write_item_to_sid(result, &m);
      m.codebook = o_.codebook;
      m.capacity = o_.max_items_per_codebook;
      m.max_observed_items_per_sid = std::max(result.stats.max_final_bucket_size, prior_.max_observed_items_per_sid);
      m.since_bundle_uuid = prior_.bundle_uuid;
      m.item_id_type = ids_.type_name();
      const std::string path = (std::filesystem::path(o_.output_path) / o_.generation / "manifest.json").string();
      write_sid_manifest(path, m);
      log::info("wrote bundle {} manifest to {}", m.bundle_uuid, path);
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
    if (!o_.rate_only && o_.generation.empty()) throw UsageError("--generation is required unless --rate_only is set");
    if (o_.output_path.empty() && (!o_.rate_only || append())) {
      throw UsageError("--output_path is required unless --rate_only is set without --from_generation (an append "
                       "reads the published sid_to_items and manifest from it)");
    }
    if (append() && o_.from_generation == o_.generation) {
      throw UsageError(fmt::format("--from_generation and --generation are both '{}': writing over the artifacts being "
                                   "read destroys them",
                                   o_.generation));
    }
    for (const std::string* p : {&o_.output_path, &o_.item_to_sid_root}) {
      if (p->rfind("odps://", 0) == 0) throw NotSupportedError("resolve_sid_collisions to MaxCompute tables (" + *p + ")");
    }
    check_sid_collision_config(o_.codebook, o_.max_items_per_codebook);
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
    data::require_table_columns(format_, o_.input_path, fields, "columns");
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
      append_sid_item_ids(batch, o_.item_id_field, &ids_);
      const SidCodeRows rows = decode_sid_codes(batch, o_.code_field, L);
      for (int64_t r = 0; r < rows.rows(); ++r) {
        if (const std::string problem = sid_row_problem(rows, r, o_.codebook); !problem.empty()) {
          throw DataError(fmt::format("{}: field '{}': {}; check that --codebook matches the model that produced the "
                                      "SID table",
                                      batch.describe_row(r), o_.code_field, problem));
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
      SidItemIds batch_ids;
      append_sid_item_ids(batch, o_.item_id_field, &batch_ids);
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

  bool append() const { return !o_.from_generation.empty(); }

  // The manifest of the generation appended onto: the same codebook (another one re-keys every
  // published SID), a warning for another capacity.
  void load_prior_manifest() {
    prior_ = read_sid_manifest((std::filesystem::path(o_.output_path) / o_.from_generation / "manifest.json").string());
    if (prior_.codebook != o_.codebook) {
      throw UsageError(fmt::format("--codebook {} differs from the {} published at generation '{}'; appending would "
                                   "re-key every published SID and rewrite its offset_codebook. Append with the "
                                   "codebook the corpus was built with",
                                   fmt::join(o_.codebook, ","), fmt::join(prior_.codebook, ","), o_.from_generation));
    }
    if (prior_.capacity != o_.max_items_per_codebook) {
      log::warning("capacity is {} but generation {} was published with {}; already published buckets keep the "
                   "occupancy they have",
                   o_.max_items_per_codebook, o_.from_generation, prior_.capacity);
    }
  }

  // The published sid_to_items and item_to_sid, checked against each other and the new items;
  // returns the published occupancy.
  SidPriorOccupancy load_published() {
    const SidArtifact* items = prior_.artifact("item_to_sid");
    if (items == nullptr || prior_.artifact("sid_to_items") == nullptr) {
      throw DataError(fmt::format("generation '{}' records no sid_to_items / item_to_sid in its manifest, so it cannot "
                                  "be appended onto",
                                  o_.from_generation));
    }
    const std::string groups_path =
        sid_artifact_location(o_.output_path, o_.from_generation, "sid_to_items") + "/part-*.parquet";
    const std::string items_path =
        sid_artifact_location(item_to_sid_root_, o_.from_generation, "item_to_sid") + "/part-*." + items->save_type;
    published_groups_ = read_sid_to_items(groups_path, o_.codebook, o_.batch_size);
    published_items_ = read_item_to_sid(items_path, items->save_type, o_.codebook, o_.batch_size);
    if (published_items_.ids.size() != published_groups_.items.size()) {
      throw DataError(fmt::format("the published item_to_sid holds {} rows but the published sid_to_items {} item ids; "
                                  "one of the two artifacts is incomplete or they come from different generations",
                                  published_items_.ids.size(), published_groups_.items.size()));
    }
    if (published_items_.ids.size() > 0 && published_items_.ids.type != ids_.type) {
      throw DataError(fmt::format("the published item_to_sid's item ids are {}, the input's {}; the merged item_to_sid "
                                  "cannot mix them",
                                  published_items_.ids.type_name(), ids_.type_name()));
    }
    std::unordered_set<std::string> new_ids;
    for (int64_t r = 0; r < ids_.size(); ++r) new_ids.insert(ids_.key(r));
    std::vector<std::string> overlapping;
    int64_t overlap = 0;
    for (int64_t r = 0; r < published_groups_.items.size(); ++r) {
      if (!new_ids.count(published_groups_.items.key(r))) continue;
      ++overlap;
      if (overlapping.size() < 10) overlapping.push_back(published_groups_.items.text(r));
    }
    if (overlap > 0) {
      throw DataError(fmt::format("{}: {} new item IDs are already published; an item cannot hold two SIDs. Remove them "
                                  "from the append batch. First offending IDs: {}",
                                  o_.input_path, overlap, fmt::join(overlapping, ",")));
    }
    log::info("append mode: {} new items onto {} published items in {} published SIDs, generation {}", ids_.size(),
              published_items_.ids.size(), published_groups_.size(), o_.from_generation);
    SidPriorOccupancy occupancy;
    occupancy.bucket_keys = published_groups_.keys;
    for (int64_t g = 0; g < published_groups_.size(); ++g) {
      occupancy.bucket_counts.push_back(published_groups_.offsets[static_cast<size_t>(g) + 1] -
                                        published_groups_.offsets[static_cast<size_t>(g)]);
    }
    return occupancy;
  }

  // sid_to_items: every SID ascending — the published ones with their items, then this run's items
  // in slot order — and, appending, delta_sid_to_items: the SIDs this run added items to.
  void write_sid_to_items(const SidCollisionPlan& plan, const SidCollisionResult& result, SidManifest* m) {
    const int64_t n = ids_.size();
    const int64_t last_size = o_.codebook.back();
    const size_t L = o_.codebook.size();
    std::vector<int64_t> keys(static_cast<size_t>(n)), order(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      keys[static_cast<size_t>(r)] = plan.band_ids[static_cast<size_t>(r)] * last_size + result.last_codes[static_cast<size_t>(r)];
      order[static_cast<size_t>(r)] = r;
    }
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const size_t i = static_cast<size_t>(a), j = static_cast<size_t>(b);
      return keys[i] != keys[j] ? keys[i] < keys[j] : result.slots[i] < result.slots[j];
    });
    const std::vector<data::TypedOutputColumn> columns = {{"codebook", PhysicalType::kInt64, 1},
                                                          {"offset_codebook", PhysicalType::kInt64, 1},
                                                          {"itemids", ids_.physical_type(), 1}};
    auto open = [&](const char* artifact) {
      return std::make_unique<data::TypedOutputTable>(
          "ParquetWriter", sid_artifact_location(o_.output_path, o_.generation, artifact), columns);
    };
    std::unique_ptr<data::TypedOutputTable> all = open("sid_to_items"), delta;
    if (append()) delta = open("delta_sid_to_items");
    const SidGroups& pub = published_groups_;
    // One SID: published group p (or -1) and this run's rows order[k, e) (possibly none).
    auto emit = [&](data::TypedOutputTable& t, const int64_t* codes, int64_t p, int64_t k, int64_t e) {
      const std::vector<int64_t> offsets = offset_codes(codes);
      t.append_list(0, codes, static_cast<int64_t>(L));
      t.append_list(1, offsets.data(), static_cast<int64_t>(L));
      parquet::ColumnBuilder& b = t[2];
      b.begin_list();
      int64_t items = e - k;
      if (p >= 0) {
        for (int64_t i = pub.offsets[static_cast<size_t>(p)]; i < pub.offsets[static_cast<size_t>(p) + 1]; ++i) {
          pub.items.append_to(b, i);
          ++items;
        }
      }
      for (int64_t i = k; i < e; ++i) ids_.append_to(b, order[static_cast<size_t>(i)]);
      b.end_list();
      t.end_row(items);
    };
    int64_t p = 0, k = 0;
    while (p < pub.size() || k < n) {
      const int64_t new_key = k < n ? keys[static_cast<size_t>(order[static_cast<size_t>(k)])] : INT64_MAX;
      const int64_t pub_key = p < pub.size() ? pub.keys[static_cast<size_t>(p)] : INT64_MAX;
      int64_t e = k;
      if (new_key <= pub_key) {
        while (e < n && keys[static_cast<size_t>(order[static_cast<size_t>(e)])] == new_key) ++e;
      }
      const int64_t group = pub_key <= new_key ? p : -1;
      const std::vector<int64_t> codes =
          group >= 0 ? std::vector<int64_t>(pub.codes.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(p) * L),
                                            pub.codes.begin() + static_cast<std::ptrdiff_t>((static_cast<size_t>(p) + 1) * L))
                     : final_codes(result, order[static_cast<size_t>(k)]);
      emit(*all, codes.data(), group, k, e);
      if (delta && e > k) emit(*delta, codes.data(), group, k, e);
      if (group >= 0) ++p;
      k = e;
    }
    auto finish = [&](data::TypedOutputTable& t, const char* artifact) {
      m->artifacts.push_back({artifact, "parquet", t.close(), sid_artifact_location(o_.output_path, o_.generation, artifact)});
    };
    finish(*all, "sid_to_items");
    if (delta) finish(*delta, "delta_sid_to_items");
  }

  // item_to_sid: the published rows (appending), then this run's rows in input order; appending,
  // delta_item_to_sid: this run's rows.
  void write_item_to_sid(const SidCollisionResult& result, SidManifest* m) {
    const std::vector<data::TypedOutputColumn> columns = {{"item_id", ids_.physical_type(), 0},
                                                          {"origin_codebook", PhysicalType::kInt64, 1},
                                                          {"codebook", PhysicalType::kInt64, 1},
                                                          {"offset_codebook", PhysicalType::kInt64, 1},
                                                          {"index", PhysicalType::kInt64, 0}};
    const int64_t L = static_cast<int64_t>(o_.codebook.size());
    auto open = [&](const char* artifact) {
      return std::make_unique<data::TypedOutputTable>(
          writer_type_, sid_artifact_location(item_to_sid_root_, o_.generation, artifact), columns);
    };
    auto emit = [&](data::TypedOutputTable& t, const SidItemIds& ids, int64_t r, const int64_t* origin,
                    const int64_t* codes, int64_t slot) {
      const std::vector<int64_t> offsets = offset_codes(codes);
      ids.append_to(t[0], r);
      t.append_list(1, origin, L);
      t.append_list(2, codes, L);
      t.append_list(3, offsets.data(), L);
      t[4].append<int64_t>(slot);
      t.end_row();
    };
    std::unique_ptr<data::TypedOutputTable> all = open("item_to_sid"), delta;
    if (append()) delta = open("delta_item_to_sid");
    const SidItemRows& pub = published_items_;
    int64_t last = 0;
    for (int64_t r = 0; r < pub.ids.size(); ++r) {
      emit(*all, pub.ids, r, pub.origin_codes.data() + r * L, pub.codes.data() + r * L, pub.slots[static_cast<size_t>(r)]);
      progress("Copying published item_to_sid", r + 1, &last);
    }
    last = 0;
    for (int64_t r = 0; r < ids_.size(); ++r) {
      const std::vector<int64_t> codes = final_codes(result, r);
      emit(*all, ids_, r, codes_.data() + r * L, codes.data(), result.slots[static_cast<size_t>(r)]);
      if (delta) emit(*delta, ids_, r, codes_.data() + r * L, codes.data(), result.slots[static_cast<size_t>(r)]);
      progress("Writing resolved item_to_sid", r + 1, &last);
    }
    const std::string save_type = writer_type_ == "CsvWriter" ? "csv" : "parquet";
    auto finish = [&](data::TypedOutputTable& t, const char* artifact) {
      m->artifacts.push_back(
          {artifact, save_type, t.close(), sid_artifact_location(item_to_sid_root_, o_.generation, artifact)});
    };
    finish(*all, "item_to_sid");
    if (delta) finish(*delta, "delta_item_to_sid");
  }

  const SidCollisionOptions& o_;
  data::TableFormat format_ = data::TableFormat::kParquet;
  std::string writer_type_;
  std::string item_to_sid_root_;
  SidItemIds ids_;
  std::vector<int64_t> codes_;  // [N * layers]
  // Appending: the generation appended onto.
  SidManifest prior_;
  SidGroups published_groups_;
  SidItemRows published_items_;
};

}  // namespace

SidCollisionStats run_resolve_sid_collisions(const SidCollisionOptions& options) { return Resolver(options).run(); }

}  // namespace tzrec::retrieval
