#include "data/parquet_prediction_writer.h"

#include "base/error.h"

namespace tzrec::data {
namespace {

using parquet::ColumnData;
using parquet::ColumnDescriptor;
using parquet::PhysicalType;
using parquet::WriterField;

std::vector<WriterField> fields_of(const PredictionBatch& batch, const std::string& path) {
  std::vector<WriterField> fields;
  for (const auto& o : *batch.outputs) {
    const int depth = (o.width > 1 ? 1 : 0) + (o.row_offsets.empty() ? 0 : 1);
    fields.push_back(WriterField{o.name, o.int64 ? PhysicalType::kInt64 : PhysicalType::kFloat, /*nullable=*/false, depth,
                                 /*element_nullable=*/false, /*string=*/false});
  }
  for (const StringColumn* c : batch.text) {
    fields.push_back(WriterField{c->name, PhysicalType::kByteArray, true, 0, true, true});
  }
  for (const TypedColumn* c : batch.typed) {
    if (c->is_map()) {
      throw NotSupportedError(fmt::format(
          "{}: reserved column '{}' is a {}; ParquetWriter writes no map columns: drop it from "
          "the reserved columns or use --writer_type CsvWriter",
          path, c->name, typed_column_type(*c)));
    }
    fields.push_back(WriterField{c->name, c->values.type(), true, c->list_depth(), true,
                                 c->values.descriptor.is_string()});
  }
  for (const StringColumn* c : batch.appended) {
    fields.push_back(WriterField{c->name, PhysicalType::kByteArray, true, 0, true, true});
  }
  return fields;
}

// [rows, width] floats as FLOAT (width 1) or LIST<FLOAT> of width elements per row, or of the
// elements row_offsets gives each row.
ColumnData output_column(const OutputColumn& o, int64_t rows, const ColumnDescriptor& d) {
  ColumnData c = parquet::empty_column(d);
  c.num_rows = rows;
  if (o.int64) {
    c.values.append(o.int64_values.data(), o.int64_values.size() * sizeof(int64_t));
  } else {
    c.values.append(o.values.data(), o.values.size() * sizeof(float));
  }
  if (!o.row_offsets.empty()) {
    c.lists[0].offsets = o.row_offsets;
    if (o.width > 1) {
      const int64_t items = o.row_offsets.back();
      auto& inner = c.lists[1].offsets;
      inner.resize(static_cast<size_t>(items) + 1);
      for (int64_t i = 0; i <= items; ++i) inner[static_cast<size_t>(i)] = i * o.width;
    }
  } else if (o.width > 1) {
    auto& offsets = c.lists[0].offsets;
    offsets.resize(static_cast<size_t>(rows) + 1);
    for (int64_t r = 0; r <= rows; ++r) offsets[static_cast<size_t>(r)] = r * o.width;
  }
  return c;
}

// Text cells as STRING; an empty cell is null.
ColumnData text_column(const StringColumn& s, const ColumnDescriptor& d) {
  ColumnData c = parquet::empty_column(d);
  const int64_t rows = s.size();
  c.num_rows = rows;
  const int64_t base = s.offsets.front();
  c.offsets.resize(static_cast<size_t>(rows) + 1);
  for (int64_t r = 0; r <= rows; ++r) {
    c.offsets[static_cast<size_t>(r)] = s.offsets[static_cast<size_t>(r)] - base;
  }
  c.values.append(s.bytes.data() + base, static_cast<size_t>(s.offsets.back() - base));
  for (int64_t r = 0; r < rows; ++r) {
    if (s.offsets[static_cast<size_t>(r) + 1] != s.offsets[static_cast<size_t>(r)]) continue;
    if (c.validity.empty()) c.validity.assign(static_cast<size_t>(rows), 1);
    c.validity[static_cast<size_t>(r)] = 0;
  }
  return c;
}

}  // namespace

ParquetPredictionWriter::ParquetPredictionWriter(std::string path, parquet::WriterOptions options)
    : PredictionWriter(std::move(path)), options_(std::move(options)) {}

ParquetPredictionWriter::~ParquetPredictionWriter() = default;

void ParquetPredictionWriter::write_batch(const PredictionBatch& batch, bool first) {
  if (first)
    writer_ = std::make_unique<parquet::FileWriter>(path(), fields_of(batch, path()), options_);
  const parquet::Schema& schema = writer_->schema();
  parquet::Table table;
  table.num_rows = batch.rows;
  int index = 0;
  for (const auto& o : *batch.outputs) {
    table.columns.push_back(output_column(o, batch.rows, schema.column(index++)));
  }
  for (const StringColumn* c : batch.text) {
    table.columns.push_back(text_column(*c, schema.column(index++)));
  }
  for (const TypedColumn* c : batch.typed) {
    table.columns.push_back(c->values);  // the layout the reader produced, as the writer takes it
    ++index;
  }
  for (const StringColumn* c : batch.appended) {
    table.columns.push_back(text_column(*c, schema.column(index++)));
  }
  writer_->write(std::move(table));
}

void ParquetPredictionWriter::finish() {
  if (writer_) writer_->close();
}

}  // namespace tzrec::data
