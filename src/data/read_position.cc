#include "data/read_position.h"

#include <algorithm>
#include <climits>

#include "base/error.h"

namespace tzrec::data {

ReadPosition ReadPosition::start(const std::vector<std::string>& files, int num_workers) {
  ReadPosition p;
  p.num_workers = num_workers;
  p.next_worker = 0;
  p.worker_rows.assign(static_cast<size_t>(num_workers), 0);
  for (const auto& f : files) p.files.push_back(FilePosition{f, 0});
  return p;
}

ReadPosition ReadPosition::start_row_ranges(const std::vector<std::string>& files,
                                            const std::vector<int64_t>& file_rows, int num_workers,
                                            int rank, int world_size) {
  if (files.size() != file_rows.size()) {
    throw UsageError(fmt::format("start_row_ranges: {} files but {} row counts", files.size(),
                                 file_rows.size()));
  }
  ReadPosition p;
  p.kind = PositionKind::kRowRanges;
  p.num_workers = num_workers;
  p.world_size = world_size;
  int64_t total = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    p.files.push_back(FilePosition{files[i], file_rows[i]});
    total += file_rows[i];
  }
  p.worker_ranges = plan_row_ranges(total, num_workers, rank, world_size);
  p.worker_rows.assign(static_cast<size_t>(num_workers), 0);
  return p;
}

ReadPosition ReadPosition::start_stream(const std::string& topic, int num_workers, int world_size) {
  ReadPosition p;
  p.kind = PositionKind::kStream;
  p.topic = topic;
  p.num_workers = num_workers;
  p.world_size = world_size;
  p.worker_rows.assign(static_cast<size_t>(num_workers), 0);
  return p;
}

const PartitionPosition* ReadPosition::partition_position(int32_t partition) const {
  auto it = std::lower_bound(partitions.begin(), partitions.end(), partition,
                             [](const PartitionPosition& p, int32_t x) { return p.partition < x; });
  return it != partitions.end() && it->partition == partition ? &*it : nullptr;
}

void ReadPosition::set_window(int worker, int64_t delivered) {
  if (delivered == 0 && worker_window.empty()) return;
  worker_window.resize(static_cast<size_t>(num_workers), 0);
  worker_window.at(static_cast<size_t>(worker)) = delivered;
  for (int64_t w : worker_window) {
    if (w != 0) return;
  }
  worker_window.clear();
}

void ReadPosition::advance(int worker, const std::vector<std::pair<int32_t, int64_t>>& file_rows,
                           const std::vector<PartitionPosition>& marks) {
  if (kind == PositionKind::kStream) {
    for (const auto& fr : file_rows) worker_rows.at(static_cast<size_t>(worker)) += fr.second;
    for (const auto& m : marks) {
      auto it = std::lower_bound(partitions.begin(), partitions.end(), m.partition,
                                 [](const PartitionPosition& p, int32_t x) { return p.partition < x; });
      if (it != partitions.end() && it->partition == m.partition) {
        *it = m;
      } else {
        partitions.insert(it, m);
      }
    }
    return;
  }
  if (kind == PositionKind::kRowRanges) {
    for (const auto& fr : file_rows) worker_rows.at(static_cast<size_t>(worker)) += fr.second;
    return;
  }
  for (const auto& [id, rows] : file_rows) {
    files.at(static_cast<size_t>(id)).rows += rows;
    worker_rows.at(static_cast<size_t>(worker)) += rows;
  }
}

int64_t ReadPosition::total_rows() const {
  int64_t n = 0;
  if (kind == PositionKind::kStream) {
    for (int64_t r : worker_rows) n += r;
    return n;
  }
  if (kind == PositionKind::kRowRanges) {
    if (world_size > 1) {
      for (int64_t r : worker_rows) n += r;
      return n;
    }
    // One rank: its workers' ranges cover every row not consumed before a re-split.
    for (const auto& f : files) n += f.rows;
    for (const auto& ranges : remaining_ranges()) n -= data::total_rows(ranges);
    return n;
  }
  for (const auto& f : files) n += f.rows;
  return n;
}

std::vector<std::vector<RowRange>> ReadPosition::remaining_ranges() const {
  if (kind != PositionKind::kRowRanges) {
    throw UsageError("remaining_ranges: the read position is not a row-range (Parquet) position");
  }
  std::vector<std::vector<RowRange>> out;
  for (size_t w = 0; w < worker_ranges.size(); ++w) {
    out.push_back(drop_prefix(worker_ranges[w], worker_rows.at(w)));
  }
  return out;
}

void ReadPosition::check_files(const std::vector<std::string>& paths,
                               const std::vector<int64_t>& file_rows) const {
  if (paths.size() != files.size()) {
    throw DataError(fmt::format(
        "cannot resume: the position was written for {} input files but the input path now "
        "gives {}; resume with the same input files",
        files.size(), paths.size()));
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i] != files[i].path) {
      throw DataError(fmt::format(
          "cannot resume: input file {} is '{}' but the position was written for '{}'; resume "
          "with the same input files in the same order",
          i, paths[i], files[i].path));
    }
    if (i < file_rows.size() && file_rows[i] != files[i].rows) {
      throw DataError(fmt::format(
          "cannot resume: {} has {} rows but had {} when the position was written; the input "
          "files changed, resume with the same files",
          paths[i], file_rows[i], files[i].rows));
    }
  }
}

ReadPosition ReadPosition::for_workers(int workers, int rank, int world_size) const {
  if (kind == PositionKind::kStream) {
    // Partition positions are global; only the round-robin restarts with other workers.
    if (workers == num_workers && world_size == this->world_size) return *this;
    ReadPosition p = *this;
    p.num_workers = workers;
    p.world_size = world_size;
    p.next_worker = 0;
    p.worker_rows.assign(static_cast<size_t>(workers), 0);
    return p;
  }
  if (kind == PositionKind::kRowRanges) {
    if (world_size != this->world_size) {
      // A multi-rank position covers one rank's rows only: positions of all ranks are merged
      // for another world size by position_for_rank (rank_read_positions.h).
      throw UsageError(fmt::format(
          "for_workers: the Parquet read position was made for {} rank(s), not {}; build it with "
          "position_for_rank",
          this->world_size, world_size));
    }
    if (workers == num_workers) return *this;
    std::vector<RowRange> rest;
    for (const auto& ranges : remaining_ranges()) rest.insert(rest.end(), ranges.begin(), ranges.end());
    ReadPosition p;
    p.kind = kind;
    p.world_size = world_size;
    p.num_workers = workers;
    p.next_worker = 0;
    p.files = files;
    p.worker_ranges = split_ranges(rest, workers);
    p.worker_rows.assign(static_cast<size_t>(workers), 0);
    return p;
  }
  if (workers == num_workers) return *this;
  ReadPosition p;
  p.num_workers = workers;
  p.next_worker = 0;
  p.files = files;
  p.worker_rows.assign(static_cast<size_t>(workers), 0);
  const auto ids = assign_files_round_robin(files.size(), workers, rank, world_size);
  for (size_t w = 0; w < ids.size(); ++w) {
    for (int32_t id : ids[w]) p.worker_rows[w] += files[static_cast<size_t>(id)].rows;
  }
  return p;
}

std::vector<std::vector<FileSlice>> plan_fresh(const std::vector<std::string>& files,
                                               int num_workers, int rank, int world_size) {
  std::vector<std::vector<FileSlice>> out;
  for (const auto& ids : assign_files_round_robin(files.size(), num_workers, rank, world_size)) {
    std::vector<FileSlice> slices;
    for (int32_t id : ids) slices.push_back(FileSlice{files[static_cast<size_t>(id)], id, 0});
    out.push_back(std::move(slices));
  }
  return out;
}

std::vector<std::vector<FileSlice>> ReadPosition::plan(const std::vector<std::string>& input,
                                                       int workers, int rank,
                                                       int world_size) const {
  if (kind != PositionKind::kFilePrefix) {
    throw UsageError("plan: the read position is a row-range (Parquet) position, not a file one");
  }
  if (input.size() != files.size()) {
    throw DataError(fmt::format(
        "cannot resume: the position was written for {} input files but the input path now "
        "gives {}; resume with the same input files",
        files.size(), input.size()));
  }
  for (size_t i = 0; i < input.size(); ++i) {
    if (input[i] != files[i].path) {
      throw DataError(fmt::format(
          "cannot resume: input file {} is '{}' but the position was written for '{}'; resume "
          "with the same input files in the same order",
          i, input[i], files[i].path));
    }
  }
  auto out = plan_fresh(input, workers, rank, world_size);
  for (auto& slices : out) {
    for (auto& s : slices) s.skip_rows = files[static_cast<size_t>(s.file_id)].rows;
  }
  return out;
}

nlohmann::json ReadPosition::to_json() const {
  nlohmann::json j;
  if (kind == PositionKind::kStream) {
    j["format"] = "kafka";
    j["topic"] = topic;
    j["num_workers"] = num_workers;
    j["next_worker"] = next_worker;
    j["worker_rows"] = worker_rows;
    if (world_size > 1) j["world_size"] = world_size;
    nlohmann::json ps = nlohmann::json::array();
    for (const auto& p : partitions) {
      ps.push_back({{"partition", p.partition}, {"offset", p.offset}, {"rows", p.rows}});
    }
    j["partitions"] = std::move(ps);
    return j;
  }
  if (kind == PositionKind::kRowRanges) {
    j["format"] = "parquet";
    nlohmann::json wr = nlohmann::json::array();
    for (const auto& ranges : worker_ranges) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& r : ranges) list.push_back({r.begin, r.end});
      wr.push_back(std::move(list));
    }
    j["worker_ranges"] = std::move(wr);
    if (world_size > 1) j["world_size"] = world_size;
  }
  j["num_workers"] = num_workers;
  j["next_worker"] = next_worker;
  j["worker_rows"] = worker_rows;
  if (!worker_window.empty()) j["worker_window"] = worker_window;
  nlohmann::json fs = nlohmann::json::array();
  for (const auto& f : files) fs.push_back({{"path", f.path}, {"rows", f.rows}});
  j["files"] = std::move(fs);
  return j;
}

namespace {

CheckpointError bad_position(const std::string& what) {
  return CheckpointError("invalid data read position: " + what);
}

// An integer field of `j` in [lo, hi].
int64_t int_field(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi,
                  const char* expected) {
  if (!j.contains(key)) throw bad_position(fmt::format("missing field '{}'", key));
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
    throw bad_position(fmt::format("'{}' must be {}, got {}", key, expected, v.dump()));
  }
  return v.get<int64_t>();
}

// "worker_window" (optional): num_workers non-negative integers.
void read_worker_window(const nlohmann::json& j, ReadPosition* p) {
  if (!j.contains("worker_window")) return;
  const auto& w = j["worker_window"];
  if (!w.is_array() || w.size() != static_cast<size_t>(p->num_workers)) {
    throw bad_position("'worker_window' must be an array with num_workers entries");
  }
  for (const auto& v : w) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      throw bad_position("'worker_window' entries must be non-negative integers");
    }
    p->worker_window.push_back(v.get<int64_t>());
  }
}

// The "format": "parquet" form (see read_position.h).
ReadPosition row_ranges_from_json(const nlohmann::json& j) {
  ReadPosition p;
  p.kind = PositionKind::kRowRanges;
  for (const char* key : {"num_workers", "next_worker", "worker_rows", "worker_ranges", "files"}) {
    if (!j.contains(key)) throw bad_position(fmt::format("missing field '{}'", key));
  }
  p.num_workers = static_cast<int32_t>(
      int_field(j, "num_workers", 1, INT32_MAX, "a positive integer"));
  p.next_worker = static_cast<int32_t>(
      int_field(j, "next_worker", 0, p.num_workers - 1, "an integer in [0, num_workers)"));
  if (j.contains("world_size")) {
    p.world_size = static_cast<int32_t>(
        int_field(j, "world_size", 1, INT32_MAX, "a positive integer"));
  }
  const auto& fs = j["files"];
  if (!fs.is_array()) throw bad_position("'files' must be an array");
  int64_t total = 0;
  for (size_t i = 0; i < fs.size(); ++i) {
    const auto& f = fs[i];
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("rows") ||
        !f["rows"].is_number_integer() || f["rows"].get<int64_t>() < 0 ||
        f["rows"].get<int64_t>() > INT64_MAX / 2 - total) {
      throw bad_position(
          fmt::format("files[{}] must be {{\"path\": string, \"rows\": integer >= 0}}", i));
    }
    p.files.push_back(FilePosition{f["path"].get<std::string>(), f["rows"].get<int64_t>()});
    total += f["rows"].get<int64_t>();
  }
  const auto& wr = j["worker_ranges"];
  if (!wr.is_array() || wr.size() != static_cast<size_t>(p.num_workers)) {
    throw bad_position("'worker_ranges' must be an array with num_workers entries");
  }
  std::vector<RowRange> all;
  for (size_t w = 0; w < wr.size(); ++w) {
    if (!wr[w].is_array()) throw bad_position(fmt::format("worker_ranges[{}] must be an array", w));
    std::vector<RowRange> ranges;
    for (size_t i = 0; i < wr[w].size(); ++i) {
      const auto& r = wr[w][i];
      if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() ||
          !r[1].is_number_integer() || r[0].get<int64_t>() < 0 ||
          r[0].get<int64_t>() > r[1].get<int64_t>() || r[1].get<int64_t>() > total) {
        throw bad_position(fmt::format(
            "worker_ranges[{}][{}] must be [begin, end] with 0 <= begin <= end <= {} (the rows "
            "of the files), got {}",
            w, i, total, r.dump()));
      }
      ranges.push_back(RowRange{r[0].get<int64_t>(), r[1].get<int64_t>()});
    }
    all.insert(all.end(), ranges.begin(), ranges.end());
    p.worker_ranges.push_back(std::move(ranges));
  }
  std::sort(all.begin(), all.end(),
            [](const RowRange& a, const RowRange& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].begin < all[i - 1].end && all[i].size() > 0 && all[i - 1].size() > 0) {
      throw bad_position(fmt::format("'worker_ranges' overlap: [{}, {}) and [{}, {})",
                                     all[i - 1].begin, all[i - 1].end, all[i].begin, all[i].end));
    }
  }
  const auto& rows = j["worker_rows"];
  if (!rows.is_array() || rows.size() != static_cast<size_t>(p.num_workers)) {
    throw bad_position("'worker_rows' must be an array with num_workers entries");
  }
  for (size_t w = 0; w < rows.size(); ++w) {
    const int64_t limit = total_rows(p.worker_ranges[w]);
    if (!rows[w].is_number_integer() || rows[w].get<int64_t>() < 0 ||
        rows[w].get<int64_t>() > limit) {
      throw bad_position(fmt::format(
          "worker_rows[{}] must be an integer in [0, {}] (the rows of worker_ranges[{}]), got {}",
          w, limit, w, rows[w].dump()));
    }
    p.worker_rows.push_back(rows[w].get<int64_t>());
  }
  read_worker_window(j, &p);
  return p;
}

// The "format": "kafka" form (see read_position.h).
ReadPosition stream_from_json(const nlohmann::json& j) {
  for (const char* key : {"topic", "num_workers", "next_worker", "worker_rows", "partitions"}) {
    if (!j.contains(key)) throw bad_position(fmt::format("missing field '{}'", key));
  }
  if (!j["topic"].is_string() || j["topic"].get<std::string>().empty()) {
    throw bad_position("'topic' must be a non-empty string");
  }
  ReadPosition p = ReadPosition::start_stream(
      j["topic"].get<std::string>(),
      static_cast<int>(int_field(j, "num_workers", 1, INT32_MAX, "a positive integer")),
      j.contains("world_size")
          ? static_cast<int>(int_field(j, "world_size", 1, INT32_MAX, "a positive integer"))
          : 1);
  p.next_worker = static_cast<int32_t>(
      int_field(j, "next_worker", 0, p.num_workers - 1, "an integer in [0, num_workers)"));
  const auto& rows = j["worker_rows"];
  if (!rows.is_array() || rows.size() != static_cast<size_t>(p.num_workers)) {
    throw bad_position("'worker_rows' must be an array with num_workers entries");
  }
  for (size_t w = 0; w < rows.size(); ++w) {
    if (!rows[w].is_number_integer() || rows[w].get<int64_t>() < 0) {
      throw bad_position(fmt::format("worker_rows[{}] must be a non-negative integer, got {}", w,
                                     rows[w].dump()));
    }
    p.worker_rows[w] = rows[w].get<int64_t>();
  }
  const auto& ps = j["partitions"];
  if (!ps.is_array()) throw bad_position("'partitions' must be an array");
  for (size_t i = 0; i < ps.size(); ++i) {
    const auto& e = ps[i];
    auto field_ok = [&](const char* key, int64_t hi) {
      return e.contains(key) && e[key].is_number_integer() && e[key].get<int64_t>() >= 0 &&
             e[key].get<int64_t>() <= hi;
    };
    if (!e.is_object() || !field_ok("partition", INT32_MAX) || !field_ok("offset", INT64_MAX) ||
        !field_ok("rows", INT64_MAX)) {
      throw bad_position(fmt::format(
          "partitions[{}] must be {{\"partition\": integer >= 0, \"offset\": integer >= 0, "
          "\"rows\": integer >= 0}}, got {}",
          i, e.dump()));
    }
    const PartitionPosition pos{e["partition"].get<int32_t>(), e["offset"].get<int64_t>(),
                                e["rows"].get<int64_t>()};
    if (p.partition_position(pos.partition) != nullptr) {
      throw bad_position(fmt::format("partition {} is listed twice", pos.partition));
    }
    p.advance(0, {}, {pos});
  }
  return p;
}

}  // namespace

ReadPosition ReadPosition::from_json(const nlohmann::json& j) {
  auto bad = [](const std::string& what) {
    return CheckpointError("invalid data read position: " + what);
  };
  if (!j.is_object()) throw bad("expected a JSON object");
  if (j.contains("format")) {
    const std::string format = j["format"].is_string() ? j["format"].get<std::string>() : "";
    if (format != "csv" && format != "parquet" && format != "kafka") {
      throw bad("'format' must be \"csv\", \"parquet\" or \"kafka\"");
    }
    if (format == "parquet") return row_ranges_from_json(j);
    if (format == "kafka") return stream_from_json(j);
  }
  for (const char* key : {"num_workers", "next_worker", "worker_rows", "files"}) {
    if (!j.contains(key)) throw bad(fmt::format("missing field '{}'", key));
  }
  ReadPosition p;
  if (!j["num_workers"].is_number_integer() || j["num_workers"].get<int64_t>() < 1) {
    throw bad("'num_workers' must be a positive integer");
  }
  p.num_workers = j["num_workers"].get<int32_t>();
  if (!j["next_worker"].is_number_integer() || j["next_worker"].get<int64_t>() < 0 ||
      j["next_worker"].get<int64_t>() >= p.num_workers) {
    throw bad("'next_worker' must be an integer in [0, num_workers)");
  }
  p.next_worker = j["next_worker"].get<int32_t>();
  const auto& wr = j["worker_rows"];
  if (!wr.is_array() || wr.size() != static_cast<size_t>(p.num_workers)) {
    throw bad("'worker_rows' must be an array with num_workers entries");
  }
  for (const auto& v : wr) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      throw bad("'worker_rows' entries must be non-negative integers");
    }
    p.worker_rows.push_back(v.get<int64_t>());
  }
  const auto& fs = j["files"];
  if (!fs.is_array()) throw bad("'files' must be an array");
  for (size_t i = 0; i < fs.size(); ++i) {
    const auto& f = fs[i];
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("rows") ||
        !f["rows"].is_number_integer() || f["rows"].get<int64_t>() < 0) {
      throw bad(fmt::format("files[{}] must be {{\"path\": string, \"rows\": integer >= 0}}", i));
    }
    p.files.push_back(FilePosition{f["path"].get<std::string>(), f["rows"].get<int64_t>()});
  }
  read_worker_window(j, &p);
  return p;
}

}  // namespace tzrec::data
