#include "data/cost_batch_source.h"

#include <cmath>
#include <cstdlib>
#include <utility>

#include "base/error.h"
#include "parquet/column_slice.h"

namespace tzrec::data {
namespace {

// Appends rows [begin, end) of `src` to `*dst`, whose columns are shaped like src's (or absent
// while dst has no rows).
void append_batch_rows(const SourcedBatch& src, int64_t begin, int64_t end, SourcedBatch* dst) {
  const RecordBatch& from = src.records;
  RecordBatch& to = dst->records;
  if (to.columns.size() != from.columns.size() || to.typed_columns.size() != from.typed_columns.size()) {
    to.columns.assign(from.columns.size(), StringColumn{});
    for (size_t c = 0; c < from.columns.size(); ++c) to.columns[c].name = from.columns[c].name;
    to.typed_columns.assign(from.typed_columns.size(), TypedColumn{});
    for (size_t c = 0; c < from.typed_columns.size(); ++c) {
      const TypedColumn& f = from.typed_columns[c];
      to.typed_columns[c].name = f.name;
      to.typed_columns[c].values = parquet::empty_column(f.values.descriptor);
      if (f.is_map()) to.typed_columns[c].map_values = parquet::empty_column(f.map_values->descriptor);
    }
    to.origin_unit = from.origin_unit;
  }
  for (size_t c = 0; c < from.columns.size(); ++c) {
    for (int64_t r = begin; r < end; ++r) to.columns[c].append(from.columns[c].cell(r));
  }
  for (size_t c = 0; c < from.typed_columns.size(); ++c) {
    const TypedColumn& f = from.typed_columns[c];
    parquet::append_rows(f.values, begin, end, &to.typed_columns[c].values);
    if (f.is_map()) parquet::append_rows(*f.map_values, begin, end, &*to.typed_columns[c].map_values);
  }
  for (int64_t r = begin; r < end; ++r) {
    const RowOrigin& o = from.origins[static_cast<size_t>(r)];
    const int32_t file_id = src.file_ids[static_cast<size_t>(o.file_index)];
    if (dst->file_ids.empty() || dst->file_ids.back() != file_id) {
      dst->file_ids.push_back(file_id);
      to.files.push_back(from.files[static_cast<size_t>(o.file_index)]);
    }
    to.origins.push_back(RowOrigin{static_cast<int32_t>(to.files.size()) - 1, o.line});
  }
  dst->data_timestamp = std::max(dst->data_timestamp, src.data_timestamp);
}

}  // namespace

CostBatchSource::CostBatchSource(std::unique_ptr<BatchSource> inner, CostBatchOptions options)
    : inner_(std::move(inner)), options_(std::move(options)) {}

bool CostBatchSource::pull() {
  if (exhausted_) return false;
  std::optional<SourcedBatch> more = inner_->next();
  if (!more || more->records.num_rows() == 0) {
    exhausted_ = true;
    return false;
  }
  // Streams are not cut by cost (config/stream_batches.h): their positions are per message.
  if (!more->stream_marks.empty()) throw std::logic_error("CostBatchSource over a stream");
  if (pending_start_ > 0) {  // drop the rows given out before appending
    SourcedBatch rest;
    append_batch_rows(pending_, pending_start_, pending_.records.num_rows(), &rest);
    pending_ = std::move(rest);
    pending_start_ = 0;
  }
  append_batch_rows(*more, 0, more->records.num_rows(), &pending_);
  return true;
}

double CostBatchSource::cost(int64_t row) const {
  const RecordBatch& rb = pending_.records;
  const std::string& field = options_.cost_field;
  double value = NAN;
  bool missing = false;
  if (const int c = rb.column_index(field); c >= 0) {
    const std::string cell(rb.columns[static_cast<size_t>(c)].cell(row));
    missing = cell.empty();
    char* end = nullptr;
    value = std::strtod(cell.c_str(), &end);
    if (!missing && (end == cell.c_str() || *end != '\0')) {
      throw DataError(fmt::format("{}: data_config.sample_cost_field '{}' is '{}', not a number",
                                  rb.describe_row(row), field, cell));
    }
  } else if (const TypedColumn* t = rb.typed_column(field); t != nullptr) {
    const parquet::ColumnData& v = t->values;
    const auto type = v.type();
    if (t->list_depth() != 0 || t->is_map() ||
        (type != parquet::PhysicalType::kInt32 && type != parquet::PhysicalType::kInt64 &&
         type != parquet::PhysicalType::kFloat && type != parquet::PhysicalType::kDouble)) {
      throw DataError(fmt::format("{}: data_config.sample_cost_field '{}' must be a number column (int32, int64, "
                                  "float or double)",
                                  rb.files.front(), field));
    }
    missing = v.is_null(row);
    if (!missing) {
      switch (type) {
        case parquet::PhysicalType::kInt32: value = v.data<int32_t>()[row]; break;
        case parquet::PhysicalType::kInt64: value = static_cast<double>(v.data<int64_t>()[row]); break;
        case parquet::PhysicalType::kFloat: value = v.data<float>()[row]; break;
        default: value = v.data<double>()[row]; break;
      }
    }
  } else {
    throw DataError(fmt::format("{}: no column '{}' (data_config.sample_cost_field)", rb.files.front(), field));
  }
  if (missing) {
    throw DataError(fmt::format("{}: data_config.sample_cost_field '{}' is missing (null); every row needs a cost",
                                rb.describe_row(row), field));
  }
  if (!(value >= 0)) {
    throw DataError(fmt::format("{}: data_config.sample_cost_field '{}' is {}; a cost must be >= 0",
                                rb.describe_row(row), field, value));
  }
  if (value > options_.batch_cost_size) {
    throw DataError(fmt::format("{}: data_config.sample_cost_field '{}' is {}, above data_config.batch_cost_size "
                                "{}: no batch can hold the row; raise batch_cost_size",
                                rb.describe_row(row), field, value, options_.batch_cost_size));
  }
  return value;
}

std::optional<SourcedBatch> CostBatchSource::next() {
  // Like TorchEasyRec's read buffer: at least batch_size rows read ahead while there are more.
  while (pending_.records.num_rows() - pending_start_ < options_.batch_size && pull()) {
  }
  const int64_t available = pending_.records.num_rows() - pending_start_;
  if (available == 0) return std::nullopt;
  if (available < options_.batch_size && options_.drop_remainder) return std::nullopt;
  // The longest run within the limit, up to batch_size rows (at least one: cost() refuses a row
  // above the limit).
  int64_t take = 0;
  double total = 0;
  while (take < available && take < options_.batch_size) {
    const double c = cost(pending_start_ + take);
    if (total + c > options_.batch_cost_size) break;
    total += c;
    ++take;
  }
  SourcedBatch out;
  append_batch_rows(pending_, pending_start_, pending_start_ + take, &out);
  pending_start_ += take;
  return out;
}

}  // namespace tzrec::data
