#include "data/parquet_batch_reader.h"

#include <algorithm>

#include "base/error.h"
#include "parquet/column_slice.h"
#include "parquet/file_reader.h"

namespace tzrec::data {
namespace {

// Reserves room in `dst` for `rows` rows shaped like `sample`'s rows (avoids regrowing and
// copying a batch's buffers as it fills from several row groups). A hint only: capped, so that
// a few huge rows cannot make it allocate without bound.
void reserve_like(const parquet::ColumnData& sample, int64_t rows, parquet::ColumnData* dst) {
  if (sample.num_rows <= 0) return;
  constexpr double kMaxEntries = 8 << 20;
  const double scale = static_cast<double>(rows) / static_cast<double>(sample.num_rows);
  auto scaled = [&](size_t n) {
    return static_cast<size_t>(std::min(static_cast<double>(n) * scale * 1.1, kMaxEntries)) + 16;
  };
  for (size_t k = 0; k < sample.lists.size() && k < dst->lists.size(); ++k) {
    dst->lists[k].offsets.reserve(scaled(sample.lists[k].offsets.size()));
    if (!sample.lists[k].validity.empty()) dst->lists[k].validity.reserve(scaled(sample.lists[k].validity.size()));
  }
  if (!sample.validity.empty()) dst->validity.reserve(scaled(sample.validity.size()));
  if (!sample.offsets.empty()) dst->offsets.reserve(scaled(sample.offsets.size()));
  dst->values.reserve(scaled(sample.values.size()));
}

}  // namespace

ParquetBatchReader::ParquetBatchReader(std::shared_ptr<const ParquetFiles> files, std::vector<std::string> columns,
                                       std::vector<RowRange> ranges, int64_t batch_size, bool drop_remainder)
    : files_(std::move(files)),
      columns_(std::move(columns)),
      batch_size_(batch_size),
      drop_remainder_(drop_remainder) {
  if (batch_size_ < 1) {
    throw ConfigError(fmt::format("data_config.batch_size: must be >= 1, got {}", batch_size_));
  }
  pieces_ = files_->pieces(ranges);
}

ParquetBatchReader::~ParquetBatchReader() = default;

bool ParquetBatchReader::open_next_piece() {
  stream_.reset();
  if (piece_pos_ >= pieces_.size()) return false;
  const FilePiece& piece = pieces_[piece_pos_++];
  if (piece.file_id != file_id_ || !reader_) {
    reader_.reset();
    const std::string& path = files_->path(piece.file_id);
    parquet::ReaderOptions options;
    options.num_threads = 1;  // loader workers are the parallelism
    reader_ = parquet::FileReader::open(path, options);
    file_id_ = piece.file_id;
    if (reader_->num_rows() != files_->file_rows(piece.file_id)) {
      throw DataError(fmt::format("{}: the file has {} rows but had {} when the input files were opened; the input "
                                  "files changed while reading",
                                  path, reader_->num_rows(), files_->file_rows(piece.file_id)));
    }
    leaves_.clear();
    first_leaf_.clear();
    is_map_.clear();
    for (const auto& name : columns_) {
      const ColumnShape shape = column_shape(reader_->schema(), name, path);
      first_leaf_.push_back(static_cast<int>(leaves_.size()));
      is_map_.push_back(shape.kind == ColumnShape::Kind::kMap);
      for (int leaf : shape.leaves) leaves_.push_back(leaf);
    }
  }
  stream_ = std::make_unique<parquet::RowGroupStream>(reader_.get(), leaves_, piece.begin, piece.end);
  chunk_.num_rows = 0;  // its columns' buffers take the next chunk
  chunk_pos_ = 0;
  return true;
}

bool ParquetBatchReader::load_chunk() {
  chunk_first_ = stream_->position();
  // Decoded into the previous chunk's buffers: fresh ones took new pages from the system for every
  // row group.
  if (!stream_->next(&chunk_)) return false;
  chunk_pos_ = 0;
  return true;
}

std::optional<SourcedBatch> ParquetBatchReader::next() {
  SourcedBatch out;
  RecordBatch& rb = out.records;
  rb.origin_unit = "row";
  rb.origins.reserve(static_cast<size_t>(batch_size_));
  bool columns_ready = false;
  int32_t local_file = -1;
  int32_t local_file_id = -1;
  while (rb.num_rows() < batch_size_) {
    if (!stream_ && !open_next_piece()) break;
    if (chunk_pos_ >= chunk_.num_rows) {
      if (!load_chunk()) {
        stream_.reset();
        continue;
      }
      if (chunk_.num_rows == 0) continue;
    }
    if (!columns_ready) {
      // Shaped like the first file's columns; later files append into them.
      rb.typed_columns.resize(columns_.size());
      for (size_t c = 0; c < columns_.size(); ++c) {
        TypedColumn& col = rb.typed_columns[c];
        col.name = columns_[c];
        const size_t leaf = static_cast<size_t>(first_leaf_[c]);
        col.values = parquet::empty_column(chunk_.columns[leaf].descriptor);
        if (is_map_[c]) col.map_values = parquet::empty_column(chunk_.columns[leaf + 1].descriptor);
      }
      columns_ready = true;
      if (chunk_pos_ == 0 && chunk_.num_rows <= batch_size_) {
        // The batch starts with a whole row group: take its columns instead of copying them.
        for (size_t c = 0; c < columns_.size(); ++c) {
          TypedColumn& col = rb.typed_columns[c];
          const size_t leaf = static_cast<size_t>(first_leaf_[c]);
          col.values = std::move(chunk_.columns[leaf]);
          if (is_map_[c]) col.map_values = std::move(chunk_.columns[leaf + 1]);
        }
        rb.files.push_back(files_->path(file_id_));
        out.file_ids.push_back(file_id_);
        local_file = 0;
        local_file_id = file_id_;
        for (int64_t i = 0; i < chunk_.num_rows; ++i) rb.origins.push_back(RowOrigin{0, chunk_first_ + i});
        chunk_pos_ = chunk_.num_rows;
        continue;
      }
      for (size_t c = 0; c < columns_.size(); ++c) {
        const size_t leaf = static_cast<size_t>(first_leaf_[c]);
        reserve_like(chunk_.columns[leaf], batch_size_, &rb.typed_columns[c].values);
        if (is_map_[c]) reserve_like(chunk_.columns[leaf + 1], batch_size_, &*rb.typed_columns[c].map_values);
      }
    }
    if (local_file_id != file_id_) {
      rb.files.push_back(files_->path(file_id_));
      out.file_ids.push_back(file_id_);
      local_file = static_cast<int32_t>(rb.files.size()) - 1;
      local_file_id = file_id_;
    }
    const int64_t take = std::min(batch_size_ - rb.num_rows(), chunk_.num_rows - chunk_pos_);
    for (size_t c = 0; c < columns_.size(); ++c) {
      TypedColumn& col = rb.typed_columns[c];
      const size_t leaf = static_cast<size_t>(first_leaf_[c]);
      parquet::append_rows(chunk_.columns[leaf], chunk_pos_, chunk_pos_ + take, &col.values);
      if (is_map_[c]) parquet::append_rows(chunk_.columns[leaf + 1], chunk_pos_, chunk_pos_ + take, &*col.map_values);
    }
    const int64_t first_row = chunk_first_ + chunk_pos_;
    for (int64_t i = 0; i < take; ++i) rb.origins.push_back(RowOrigin{local_file, first_row + i});
    chunk_pos_ += take;
  }
  if (rb.num_rows() == 0) return std::nullopt;
  if (rb.num_rows() < batch_size_ && drop_remainder_) return std::nullopt;
  return out;
}

}  // namespace tzrec::data
