#include "data/row_key.h"

#include "base/stable_hash.h"

namespace tzrec::data {

std::string_view file_key_text(std::string_view path) {
  const size_t last = path.rfind('/');
  if (last == std::string_view::npos || last == 0) return path;
  const size_t folder = path.rfind('/', last - 1);
  return folder == std::string_view::npos ? path : path.substr(folder + 1);
}

uint64_t row_key(const RecordBatch& batch, int64_t row) {
  const RowOrigin& o = batch.origins.at(static_cast<size_t>(row));
  const uint64_t file = fnv1a64(file_key_text(batch.files.at(static_cast<size_t>(o.file_index))));
  return splitmix64(splitmix64(file) ^ static_cast<uint64_t>(o.line));
}

}  // namespace tzrec::data
