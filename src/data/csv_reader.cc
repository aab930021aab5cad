#include "data/csv_reader.h"

#include <unordered_map>

#include "base/error.h"

namespace tzrec::data {

std::vector<std::pair<int32_t, int64_t>> rows_per_file(const SourcedBatch& batch) {
  std::vector<std::pair<int32_t, int64_t>> out;
  for (const auto& origin : batch.records.origins) {
    const int32_t id = batch.file_ids.at(static_cast<size_t>(origin.file_index));
    if (out.empty() || out.back().first != id) {
      out.emplace_back(id, 1);
    } else {
      ++out.back().second;
    }
  }
  return out;
}

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace

CsvBatchReader::CsvBatchReader(CsvOptions options, std::vector<std::string> columns,
                               std::vector<FileSlice> files, int64_t batch_size,
                               bool drop_remainder)
    : options_(std::move(options)),
      columns_(std::move(columns)),
      files_(std::move(files)),
      batch_size_(batch_size),
      drop_remainder_(drop_remainder) {
  if (batch_size_ < 1) {
    throw ConfigError(fmt::format("data_config.batch_size: must be >= 1, got {}", batch_size_));
  }
  if (!options_.with_header) {
    if (options_.input_fields.empty()) {
      throw ConfigError(
          "data_config.input_fields: CSV files without header (with_header: false) need "
          "input_fields listing every column in file order");
    }
    std::unordered_map<std::string, int> index;
    for (size_t i = 0; i < options_.input_fields.size(); ++i) {
      if (!index.emplace(options_.input_fields[i], static_cast<int>(i)).second) {
        throw ConfigError(fmt::format("data_config.input_fields[{}]: duplicate column name '{}'", i,
                                      options_.input_fields[i]));
      }
    }
    for (const auto& c : columns_) {
      auto it = index.find(c);
      if (it == index.end()) {
        throw ConfigError(fmt::format(
            "data_config.input_fields: column '{}' is needed (feature input, label or sample "
            "weight) but not listed; the CSV files have no header, so add it to input_fields "
            "(columns now: {})",
            c, join_names(options_.input_fields)));
      }
      column_map_.push_back(it->second);
    }
    expected_fields_ = options_.input_fields.size();
  }
}

CsvBatchReader::~CsvBatchReader() = default;

bool CsvBatchReader::open_next_file() {
  stream_.reset();
  if (file_pos_ >= files_.size()) return false;
  const FileSlice& slice = files_[file_pos_++];
  stream_ = std::make_unique<CsvRecordStream>(slice.path, options_.delimiter);
  current_file_id_ = slice.file_id;
  if (options_.with_header) {
    std::vector<std::string_view> header;
    column_map_.clear();
    if (!stream_->next(&header)) {
      expected_fields_ = 0;
      column_map_.assign(columns_.size(), -1);
    } else {
      std::vector<std::string> names(header.begin(), header.end());
      expected_fields_ = names.size();
      for (const auto& c : columns_) {
        int found = -1;
        for (size_t i = 0; i < names.size(); ++i) {
          if (names[i] != c) continue;
          if (found >= 0) {
            throw DataError(fmt::format("{} line {}: header names column '{}' twice", slice.path,
                                        stream_->record_line(), c));
          }
          found = static_cast<int>(i);
        }
        if (found < 0) {
          throw DataError(fmt::format(
              "{}: column '{}' is needed (feature input, label or sample weight) but the CSV "
              "header has no such column (header: {}); fix the file or the config",
              slice.path, c, join_names(names)));
        }
        column_map_.push_back(found);
      }
    }
  }
  for (int64_t i = 0; i < slice.skip_rows; ++i) {
    if (!stream_->skip()) {
      throw DataError(fmt::format(
          "{}: the resume position says {} rows of this file were consumed but it has only {}; "
          "the input files changed since the checkpoint was written",
          slice.path, slice.skip_rows, i));
    }
  }
  return true;
}

std::optional<SourcedBatch> CsvBatchReader::next() {
  SourcedBatch out;
  RecordBatch& rb = out.records;
  rb.columns.resize(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) rb.columns[i].name = columns_[i];
  int32_t local_file = -1;
  int32_t local_file_id = -1;
  while (rb.num_rows() < batch_size_) {
    if (!stream_ && !open_next_file()) break;
    if (!stream_->next(&fields_)) {
      stream_.reset();
      continue;
    }
    if (fields_.size() != expected_fields_) {
      throw DataError(fmt::format(
          "{} line {}: expected {} columns, got {}; check data_config.delimiter, quoting and {}",
          stream_->path(), stream_->record_line(), expected_fields_, fields_.size(),
          options_.with_header ? "the header" : "data_config.input_fields"));
    }
    if (local_file_id != current_file_id_ || local_file < 0) {
      rb.files.push_back(stream_->path());
      out.file_ids.push_back(current_file_id_);
      local_file = static_cast<int32_t>(rb.files.size()) - 1;
      local_file_id = current_file_id_;
    }
    for (size_t c = 0; c < columns_.size(); ++c) {
      rb.columns[c].append(fields_[static_cast<size_t>(column_map_[c])]);
    }
    rb.origins.push_back(RowOrigin{local_file, stream_->record_line()});
  }
  if (rb.num_rows() == 0) return std::nullopt;
  if (rb.num_rows() < batch_size_ && drop_remainder_) {
    return std::nullopt;
  }
  return out;
}

}  // namespace tzrec::data
