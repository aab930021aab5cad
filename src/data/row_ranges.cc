#include "data/row_ranges.h"

#include <algorithm>

#include "base/error.h"

namespace tzrec::data {

std::vector<int64_t> split_sizes(int64_t total, int n) {
  if (n < 1 || total < 0) {
    throw UsageError(fmt::format("split_sizes: need n >= 1 and total >= 0, got n {} total {}", n, total));
  }
  std::vector<int64_t> out(static_cast<size_t>(n), total / n);
  for (int64_t i = 0; i < total % n; ++i) ++out[static_cast<size_t>(i)];
  return out;
}

int64_t total_rows(const std::vector<RowRange>& ranges) {
  int64_t n = 0;
  for (const auto& r : ranges) n += r.size();
  return n;
}

std::vector<std::vector<RowRange>> split_ranges(const std::vector<RowRange>& rows, int n) {
  const std::vector<int64_t> sizes = split_sizes(total_rows(rows), n);
  std::vector<std::vector<RowRange>> out(static_cast<size_t>(n));
  size_t chunk = 0;
  int64_t left = sizes.empty() ? 0 : sizes[0];  // rows still to give to `chunk`
  for (const RowRange& r : rows) {
    int64_t begin = r.begin;
    while (begin < r.end) {
      while (left == 0) left = sizes[++chunk];
      const int64_t take = std::min(left, r.end - begin);
      out[chunk].push_back(RowRange{begin, begin + take});
      begin += take;
      left -= take;
    }
  }
  return out;
}

std::vector<RowRange> drop_prefix(const std::vector<RowRange>& ranges, int64_t rows) {
  std::vector<RowRange> out;
  for (const RowRange& r : ranges) {
    const int64_t skip = std::min(rows, r.size());
    rows -= skip;
    if (r.begin + skip < r.end) out.push_back(RowRange{r.begin + skip, r.end});
  }
  return out;
}

std::vector<std::vector<RowRange>> plan_row_ranges(int64_t total, int num_workers, int rank, int world_size) {
  if (num_workers < 1 || world_size < 1 || rank < 0 || rank >= world_size) {
    throw UsageError(fmt::format("plan_row_ranges: bad num_workers {} / rank {} / world_size {}", num_workers, rank,
                                 world_size));
  }
  std::vector<RowRange> all;
  if (total > 0) all.push_back(RowRange{0, total});
  auto split = split_ranges(all, world_size * num_workers);
  std::vector<std::vector<RowRange>> out(split.begin() + static_cast<int64_t>(rank) * num_workers,
                                         split.begin() + static_cast<int64_t>(rank + 1) * num_workers);
  return out;
}

}  // namespace tzrec::data
