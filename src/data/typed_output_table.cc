#include "data/typed_output_table.h"

#include <optional>

namespace tzrec::data {

TypedOutputTable::TypedOutputTable(const std::string& writer_type, const std::string& dir,
                                   const std::vector<TypedOutputColumn>& columns)
    : writer_(make_prediction_writer(writer_type, dir, /*rank=*/0)) {
  for (const TypedOutputColumn& c : columns) {
    schemas_.push_back(std::make_unique<parquet::Schema>(
        parquet::writer_schema({parquet::WriterField{c.name, c.type, /*nullable=*/false, c.list_depth,
                                                     /*element_nullable=*/false}})));
    names_.push_back(c.name);
    builders_.emplace_back(schemas_.back()->column(0));
  }
}

void TypedOutputTable::append_list(size_t i, const int64_t* v, int64_t n) {
  builders_[i].begin_list();
  for (int64_t k = 0; k < n; ++k) builders_[i].append<int64_t>(v[k]);
  builders_[i].end_list();
}

void TypedOutputTable::end_row(int64_t values) {
  ++rows_;
  ++pending_rows_;
  pending_values_ += values;
  if (pending_rows_ >= kPieceRows || pending_values_ >= kPieceValues) flush();
}

void TypedOutputTable::flush() {
  if (pending_rows_ == 0) return;
  RecordBatch batch;
  for (size_t i = 0; i < builders_.size(); ++i) {
    batch.typed_columns.push_back({names_[i], builders_[i].finish(), std::nullopt});
    builders_[i] = parquet::ColumnBuilder(schemas_[i]->column(0));
  }
  batch.origins.resize(static_cast<size_t>(pending_rows_));
  writer_->write({}, batch);
  pending_rows_ = pending_values_ = 0;
}

int64_t TypedOutputTable::close() {
  flush();
  writer_->close();
  return rows_;
}

}  // namespace tzrec::data
