#include "parquet/file_reader.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "parquet/errors.h"
#include "parquet/thread_pool.h"

namespace tzrec::parquet {
namespace {

constexpr char kMagic[4] = {'P', 'A', 'R', '1'};
constexpr char kEncryptedMagic[4] = {'P', 'A', 'R', 'E'};

}  // namespace

std::unique_ptr<FileReader> FileReader::open(const std::string& path, const ReaderOptions& options) {
  return open(RandomAccessFile::open(path), options);
}

std::unique_ptr<FileReader> FileReader::open(std::shared_ptr<RandomAccessFile> file, const ReaderOptions& options) {
  std::unique_ptr<FileReader> reader(new FileReader(std::move(file), options));
  reader->read_footer();
  return reader;
}

FileReader::FileReader(std::shared_ptr<RandomAccessFile> file, const ReaderOptions& options)
    : file_(std::move(file)), options_(options), pool_(std::make_unique<ThreadPool>(std::max(1, options.num_threads))) {}

FileReader::~FileReader() = default;

void FileReader::read_footer() {
  ErrorContext ctx{file_->name()};
  const int64_t size = file_->size();
  if (size < 12) {
    throw_data_error(ctx, fmt::format("file has {} bytes, too short for a Parquet file (at least 12: magic, footer "
                                      "length, magic); it is truncated or not Parquet",
                                      size));
  }
  uint8_t head[4];
  uint8_t tail[8];
  file_->read_at(0, 4, head);
  file_->read_at(size - 8, 8, tail);
  if (std::memcmp(tail + 4, kEncryptedMagic, 4) == 0) {
    throw_data_error(ctx, "file has an encrypted footer (magic PARE); encrypted Parquet is not supported");
  }
  if (std::memcmp(head, kMagic, 4) != 0 || std::memcmp(tail + 4, kMagic, 4) != 0) {
    throw_data_error(ctx, "not a Parquet file: missing the 'PAR1' magic at the start or the end (a truncated or "
                          "partially written file?)");
  }
  uint32_t footer_len;
  std::memcpy(&footer_len, tail, 4);
  if (static_cast<int64_t>(footer_len) > size - 12) {
    throw_data_error(ctx, fmt::format("footer length {} exceeds the file size {}; the file is truncated or corrupt",
                                      footer_len, size));
  }
  data_end_ = size - 8 - static_cast<int64_t>(footer_len);
  std::string footer(footer_len, '\0');
  file_->read_at(data_end_, footer_len, reinterpret_cast<uint8_t*>(footer.data()));
  try {
    metadata_ = decode_file_metadata(reinterpret_cast<const uint8_t*>(footer.data()), footer.size());
    schema_ = Schema::build(metadata_.schema);
  } catch (const DecodeError& e) {
    throw_data_error(ctx, fmt::format("corrupt footer metadata: {}", e.what()));
  }
  if (metadata_.encrypted) throw_data_error(ctx, "file uses Parquet modular encryption, which is not supported");
  row_group_starts_.assign(1, 0);
  for (size_t g = 0; g < metadata_.row_groups.size(); ++g) {
    const RowGroup& rg = metadata_.row_groups[g];
    ErrorContext gctx{file_->name(), static_cast<int>(g)};
    if (rg.num_rows < 0) throw_data_error(gctx, fmt::format("negative row count {}", rg.num_rows));
    if (static_cast<int>(rg.columns.size()) != schema_.num_columns()) {
      throw_data_error(gctx, fmt::format("row group has {} column chunks but the schema has {} leaf columns",
                                         rg.columns.size(), schema_.num_columns()));
    }
    if (row_group_starts_.back() > INT64_MAX - rg.num_rows) throw_data_error(gctx, "row counts overflow");
    row_group_starts_.push_back(row_group_starts_.back() + rg.num_rows);
  }
  num_rows_ = row_group_starts_.back();
}

int64_t FileReader::row_group_num_rows(int row_group) const {
  return metadata_.row_groups[static_cast<size_t>(row_group)].num_rows;
}

std::vector<int> FileReader::resolve_columns(const std::vector<std::string>& names) const {
  std::vector<int> out;
  if (names.empty()) {
    for (int i = 0; i < schema_.num_columns(); ++i) out.push_back(i);
    return out;
  }
  for (const auto& name : names) {
    int field = schema_.find_field(name);
    if (field >= 0) {
      for (int leaf : schema_.leaves_of(field)) out.push_back(leaf);
      continue;
    }
    int leaf = schema_.find_column(name);
    if (leaf >= 0) {
      out.push_back(leaf);
      continue;
    }
    std::vector<std::string> available;
    for (int f : schema_.fields()) available.push_back(schema_.nodes()[static_cast<size_t>(f)].name);
    throw DataError(fmt::format("parquet file '{}': column '{}' not found (columns: {}); fix the column name in the "
                                "config or the file",
                                file_->name(), name, fmt::join(available, ", ")));
  }
  return out;
}

Table FileReader::read(const std::vector<std::string>& names, int64_t row_begin, int64_t row_end) {
  return read_columns(resolve_columns(names), row_begin, row_end);
}

Table FileReader::read_row_group(int row_group, const std::vector<int>& columns) {
  if (row_group < 0 || row_group >= num_row_groups()) {
    throw DataError(fmt::format("parquet file '{}': row group {} out of range (file has {})", file_->name(), row_group,
                                num_row_groups()));
  }
  return read_columns(columns, row_group_starts_[static_cast<size_t>(row_group)],
              row_group_starts_[static_cast<size_t>(row_group) + 1]);
}

Table FileReader::read_columns(const std::vector<int>& columns, int64_t row_begin, int64_t row_end) {
  Table table;
  read_columns(columns, row_begin, row_end, &table);
  return table;
}

void FileReader::read_columns(const std::vector<int>& columns, int64_t row_begin, int64_t row_end,
                              Table* into) {
  if (row_end < 0) row_end = num_rows_;
  if (row_begin < 0 || row_begin > row_end || row_end > num_rows_) {
    throw DataError(fmt::format("parquet file '{}': row range [{}, {}) is not inside [0, {})", file_->name(), row_begin,
                                row_end, num_rows_));
  }
  for (int c : columns) {
    if (c < 0 || c >= schema_.num_columns()) {
      throw DataError(fmt::format("parquet file '{}': column index {} out of range (file has {} leaf columns)",
                                  file_->name(), c, schema_.num_columns()));
    }
  }
  Table& table = *into;
  table.num_rows = row_end - row_begin;
  table.columns.resize(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    reset_column(schema_.column(columns[i]), &table.columns[i]);
  }
  // Row groups overlapping the range; only these are touched.
  std::vector<int> groups;
  for (int g = 0; g < num_row_groups(); ++g) {
    int64_t s = row_group_starts_[static_cast<size_t>(g)];
    int64_t e = row_group_starts_[static_cast<size_t>(g) + 1];
    if (e > row_begin && s < row_end) groups.push_back(g);
  }
  pool_->parallel_for(static_cast<int64_t>(columns.size()), [&](int64_t i) {
    ColumnData* out = &table.columns[static_cast<size_t>(i)];
    for (int g : groups) {
      int64_t s = row_group_starts_[static_cast<size_t>(g)];
      int64_t lo = std::max(row_begin, s) - s;
      int64_t hi = std::min(row_end, row_group_starts_[static_cast<size_t>(g) + 1]) - s;
      read_chunk(g, columns[static_cast<size_t>(i)], lo, hi, out);
    }
    if (out->num_rows != table.num_rows) {
      throw DataError(fmt::format("parquet file '{}', column '{}': decoded {} rows for a range of {}; the file is "
                                  "corrupt",
                                  file_->name(), out->descriptor.path_string, out->num_rows, table.num_rows));
    }
  });
}

void FileReader::read_chunk(int row_group, int column, int64_t lo, int64_t hi, ColumnData* out) const {
  const ColumnDescriptor& desc = schema_.column(column);
  ErrorContext ctx{file_->name(), row_group, desc.path_string};
  const RowGroup& rg = metadata_.row_groups[static_cast<size_t>(row_group)];
  const ColumnChunk& chunk = rg.columns[static_cast<size_t>(column)];
  if (!chunk.has_meta_data) {
    if (chunk.encrypted) throw_data_error(ctx, "column chunk is encrypted, which is not supported");
    throw_data_error(ctx, "column chunk has no metadata");
  }
  if (chunk.file_path) {
    throw_data_error(ctx, fmt::format("column data stored in another file ('{}') is not supported", *chunk.file_path));
  }
  const ColumnMetaData& md = chunk.meta_data;
  if (md.type != desc.type) {
    throw_data_error(ctx, fmt::format("column chunk type {} differs from the schema type {}", to_string(md.type),
                                      to_string(desc.type)));
  }
  // The chunk starts at its dictionary page when it has one. Some writers store 0 for "no
  // dictionary"; a real page can never start inside the 4-byte magic.
  int64_t start = md.data_page_offset;
  if (md.dictionary_page_offset && *md.dictionary_page_offset >= 4 && *md.dictionary_page_offset < start) {
    start = *md.dictionary_page_offset;
  }
  const int64_t length = md.total_compressed_size;
  if (start < 4 || length < 0 || start > data_end_ || length > data_end_ - start) {
    throw_data_error(ctx, fmt::format("column chunk bytes [{}, {}) lie outside the file's data section [4, {}); the "
                                      "file is truncated or corrupt",
                                      start, start + length, data_end_));
  }
  ColumnChunkReader reader(desc, md.codec, rg.num_rows, ctx, options_.limits);
  // The chunk's compressed bytes: one buffer per thread, kept from chunk to chunk (a fresh one
  // took tens of MB of new pages from the system per row group) unless it grew past 64 MiB.
  thread_local Buffer bytes;
  struct ReleaseLarge {
    ~ReleaseLarge() {
      if (bytes.size() > (size_t{64} << 20)) bytes = Buffer();
    }
  } release_large;
  std::vector<PageRange> ranges;
  const bool partial = lo > 0 || hi < rg.num_rows;
  if (partial && options_.use_offset_index && chunk.offset_index_offset && chunk.offset_index_length &&
      *chunk.offset_index_length > 0) {
    // Page index: read only the dictionary (if any) and the pages overlapping [lo, hi).
    int64_t io = *chunk.offset_index_offset;
    int64_t il = *chunk.offset_index_length;
    if (io < 4 || io > data_end_ || il > data_end_ - io) {
      throw_data_error(ctx, "offset index lies outside the file's data section");
    }
    Buffer index_bytes;
    index_bytes.resize(static_cast<size_t>(il));
    file_->read_at(io, static_cast<size_t>(il), index_bytes.data());
    OffsetIndex index;
    try {
      index = decode_offset_index(index_bytes.data(), index_bytes.size());
    } catch (const DecodeError& e) {
      throw_data_error(ctx, fmt::format("corrupt offset index: {}", e.what()));
    }
    const auto& locs = index.page_locations;
    bool valid = !locs.empty() && locs.front().first_row_index == 0 && locs.back().first_row_index < rg.num_rows;
    for (size_t i = 0; valid && i < locs.size(); ++i) {
      valid = locs[i].offset >= start && locs[i].compressed_page_size > 0 &&
              locs[i].offset + locs[i].compressed_page_size <= start + length &&
              (i == 0 || (locs[i].offset >= locs[i - 1].offset + locs[i - 1].compressed_page_size &&
                          locs[i].first_row_index > locs[i - 1].first_row_index));
    }
    if (valid) {
      size_t first = 0;
      while (first + 1 < locs.size() && locs[first + 1].first_row_index <= lo) ++first;
      size_t last = first;
      while (last + 1 < locs.size() && locs[last + 1].first_row_index < hi) ++last;
      const int64_t dict_end = locs.front().offset;  // pages before the first data page: the dictionary
      const int64_t pages_begin = locs[first].offset;
      const int64_t pages_end = locs[last].offset + locs[last].compressed_page_size;
      size_t dict_size = static_cast<size_t>(dict_end - start);
      bytes.resize(dict_size + static_cast<size_t>(pages_end - pages_begin));
      if (dict_size > 0) file_->read_at(start, dict_size, bytes.data());
      file_->read_at(pages_begin, static_cast<size_t>(pages_end - pages_begin), bytes.data() + dict_size);
      if (dict_size > 0) ranges.push_back({bytes.data(), dict_size, 0, 0});
      ranges.push_back({bytes.data() + dict_size, static_cast<size_t>(pages_end - pages_begin),
                        locs[first].first_row_index, static_cast<int64_t>(first) + (dict_size > 0 ? 1 : 0)});
      reader.read(ranges, lo, hi, out);
      return;
    }
    // An inconsistent index is ignored: the pages themselves are authoritative.
  }
  bytes.resize(static_cast<size_t>(length));
  file_->read_at(start, static_cast<size_t>(length), bytes.data());
  ranges.push_back({bytes.data(), bytes.size(), 0, 0});
  reader.read(ranges, lo, hi, out);
}

// ---- RowGroupStream -----------------------------------------------------------------------------

RowGroupStream::RowGroupStream(FileReader* reader, std::vector<int> columns, int64_t row_begin, int64_t row_end)
    : reader_(reader), columns_(std::move(columns)), position_(row_begin), end_(row_end < 0 ? reader->num_rows() : row_end) {
  if (row_begin < 0 || row_begin > end_ || end_ > reader->num_rows()) {
    throw DataError(fmt::format("parquet file '{}': row range [{}, {}) is not inside [0, {})", reader->path(),
                                row_begin, end_, reader->num_rows()));
  }
}

std::optional<Table> RowGroupStream::next() {
  Table t;
  if (!next(&t)) return std::nullopt;
  return t;
}

bool RowGroupStream::next(Table* out) {
  if (position_ >= end_) return false;
  const auto& starts = reader_->row_group_starts();
  // The row group holding position_ (skipping empty ones).
  auto it = std::upper_bound(starts.begin(), starts.end(), position_);
  int64_t group_end = it == starts.end() ? end_ : *it;
  int64_t stop = std::min(end_, group_end);
  reader_->read_columns(columns_, position_, stop, out);
  position_ = stop;
  return true;
}

}  // namespace tzrec::parquet
