#include "data/path_conflict.h"

#include <glob.h>

#include <filesystem>
#include <set>

#include <fmt/format.h>

namespace tzrec::data {
namespace {

namespace fs = std::filesystem;

std::string resolved(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path.empty() ? "." : path, ec), ec);
  return ec ? fs::absolute(path).lexically_normal().string() : p.string();
}

std::string parent_of(const std::string& path) {
  const std::string parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::set<std::string> directories_of(const std::string& group) {
  std::set<std::string> dirs;
  size_t start = 0;
  while (start <= group.size()) {
    size_t comma = group.find(',', start);
    if (comma == std::string::npos) comma = group.size();
    const std::string pattern = group.substr(start, comma - start);
    start = comma + 1;
    if (pattern.empty()) continue;
    glob_t g{};
    std::vector<std::string> matches;
    if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) matches.emplace_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
    if (matches.empty()) {
      dirs.insert(resolved(pattern));
      continue;
    }
    for (const std::string& m : matches) {
      std::error_code ec;
      if (fs::is_directory(m, ec)) {
        dirs.insert(resolved(m));
        continue;
      }
      dirs.insert(resolved(parent_of(m)));
      if (fs::is_symlink(m, ec)) dirs.insert(parent_of(resolved(m)));
    }
  }
  return dirs;
}

}  // namespace

std::optional<std::string> find_path_conflict(const std::vector<std::string>& paths) {
  std::vector<std::set<std::string>> groups;
  for (const std::string& p : paths) groups.push_back(directories_of(p));
  for (size_t a = 0; a < paths.size(); ++a) {
    for (size_t b = a + 1; b < paths.size(); ++b) {
      for (const std::string& dir : groups[a]) {  // sets are ordered: the smallest shared one
        if (groups[b].count(dir)) {
          return fmt::format("path conflict: '{}' and '{}' resolve to the same local directory '{}'.", paths[a],
                             paths[b], dir);
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace tzrec::data
