#include "data/typed_output_table.h"

#include <optional>

namespace tzrec::data {

TypedOutputTable::TypedOutputTable(const std::vector<TypedOutputColumn>& columns) {
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

void TypedOutputTable::flush(PredictionWriter& writer, int64_t rows) {
  RecordBatch batch;
  for (size_t i = 0; i < builders_.size(); ++i) {
    batch.typed_columns.push_back({names_[i], builders_[i].finish(), std::nullopt});
    builders_[i] = parquet::ColumnBuilder(schemas_[i]->column(0));
  }
  batch.origins.resize(static_cast<size_t>(rows));
  writer.write({}, batch);
}

}  // namespace tzrec::data
