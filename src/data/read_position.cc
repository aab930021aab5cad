#include "data/read_position.h"

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

void ReadPosition::advance(int worker, const std::vector<std::pair<int32_t, int64_t>>& file_rows) {
  for (const auto& [id, rows] : file_rows) {
    files.at(static_cast<size_t>(id)).rows += rows;
    worker_rows.at(static_cast<size_t>(worker)) += rows;
  }
}

int64_t ReadPosition::total_rows() const {
  int64_t n = 0;
  for (const auto& f : files) n += f.rows;
  return n;
}

ReadPosition ReadPosition::for_workers(int workers, int rank, int world_size) const {
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
  j["num_workers"] = num_workers;
  j["next_worker"] = next_worker;
  j["worker_rows"] = worker_rows;
  nlohmann::json fs = nlohmann::json::array();
  for (const auto& f : files) fs.push_back({{"path", f.path}, {"rows", f.rows}});
  j["files"] = std::move(fs);
  return j;
}

ReadPosition ReadPosition::from_json(const nlohmann::json& j) {
  auto bad = [](const std::string& what) {
    return CheckpointError("invalid data read position: " + what);
  };
  if (!j.is_object()) throw bad("expected a JSON object");
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
  return p;
}

}  // namespace tzrec::data
