#include "data/input_files.h"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>

#include "base/error.h"
#include "base/text.h"

namespace tzrec::data {
namespace {

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

}  // namespace

std::vector<std::string> expand_input_path(const std::string& input_path) {
  std::vector<std::string> files;
  size_t start = 0;
  bool any_item = false;
  while (start <= input_path.size()) {
    size_t comma = input_path.find(',', start);
    if (comma == std::string::npos) comma = input_path.size();
    const std::string item = trim(input_path.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    any_item = true;
    if (!has_glob_chars(item)) {
      struct stat st;
      if (::stat(item.c_str(), &st) != 0) {
        throw DataError(
            fmt::format("input file '{}' does not exist (input path '{}')", item, input_path));
      }
      if (S_ISDIR(st.st_mode)) {
        throw DataError(fmt::format(
            "input path item '{}' is a directory; give files or a glob such as '{}/*.csv'", item,
            item));
      }
      files.push_back(item);
      continue;
    }
    glob_t g{};
    const int rc = ::glob(item.c_str(), 0, nullptr, &g);
    if (rc == GLOB_NOMATCH || (rc == 0 && g.gl_pathc == 0)) {
      ::globfree(&g);
      throw DataError(
          fmt::format("input pattern '{}' matches no files (input path '{}')", item, input_path));
    }
    if (rc != 0) {
      ::globfree(&g);
      throw DataError(fmt::format("cannot expand input pattern '{}' (glob error {})", item, rc));
    }
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      struct stat st;
      if (::stat(g.gl_pathv[i], &st) == 0 && S_ISDIR(st.st_mode)) continue;
      files.emplace_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
  }
  if (!any_item) throw DataError("input path is empty; set train_input_path / eval_input_path");
  if (files.empty()) {
    throw DataError(fmt::format("input path '{}' matches only directories, no files", input_path));
  }
  return files;
}

int effective_num_workers(int num_workers, size_t num_files, int world_size) {
  if (world_size < 1) world_size = 1;
  if (num_files < static_cast<size_t>(world_size)) {
    throw DataError(fmt::format(
        "{} input files for {} ranks: every rank needs at least one CSV file; split the data "
        "into at least world_size files",
        num_files, world_size));
  }
  int n = std::max(num_workers, 1);
  const size_t per_rank = num_files / static_cast<size_t>(world_size);
  if (static_cast<size_t>(n) > per_rank) n = static_cast<int>(per_rank);
  return n;
}

std::vector<std::vector<int32_t>> assign_files_round_robin(size_t num_files, int num_workers,
                                                           int rank, int world_size) {
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(num_workers));
  const size_t total = static_cast<size_t>(world_size) * static_cast<size_t>(num_workers);
  for (int w = 0; w < num_workers; ++w) {
    const size_t g = static_cast<size_t>(rank) * num_workers + w;
    for (size_t f = g; f < num_files; f += total) out[w].push_back(static_cast<int32_t>(f));
  }
  return out;
}

}  // namespace tzrec::data
