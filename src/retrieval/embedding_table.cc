#include "retrieval/embedding_table.h"

#include <charconv>

#include <fmt/format.h>

#include "base/error.h"
#include "data/table_sources.h"

namespace tzrec::retrieval {
namespace {

// A cell's numbers into `out` ("where" names the cell in errors).
void append_numbers(const feature::CellValue& v, const std::string& where, std::vector<float>* out) {
  if (v.kind == feature::CellValue::Kind::kText) {
    float f = 0;
    const char* b = v.text.data();
    const char* e = b + v.text.size();
    while (b < e && *b == ' ') ++b;
    auto [p, ec] = std::from_chars(b, e, f);
    if (ec != std::errc() || p != e) {
      throw DataError(fmt::format("{}: '{}' is not a number; embeddings are lists of floats or ','-joined text",
                                  where, v.text));
    }
    out->push_back(f);
  } else {
    out->push_back(v.kind == feature::CellValue::Kind::kInt ? static_cast<float>(v.i) : static_cast<float>(v.d));
  }
}

}  // namespace

std::string id_text(const feature::CellValue& v) {
  switch (v.kind) {
    case feature::CellValue::Kind::kText:
      return std::string(v.text);
    case feature::CellValue::Kind::kInt:
      return std::to_string(v.i);
    default:
      return fmt::format("{}", v.d);
  }
}

// The embedding(s) of one row: `interests` vectors of width *dim (set by the first row read).
// A list<float> cell is one vector; lists of lists and text (',' between values, ';' between
// vectors) hold one vector per interest, as TorchEasyRec's tool reads them.
void read_embeddings(const data::RecordBatch& rb, const feature::ColumnCells& cells, int64_t row, int64_t interests,
                     int64_t* dim, std::vector<float>* out) {
  const size_t before = out->size();
  const std::string where = cells.where(row);
  const data::TypedColumn* typed = rb.typed_column(cells.name());
  int64_t vectors = 0;
  if (typed != nullptr && typed->list_depth() == 1) {
    vectors = 1;
    cells.for_each(row, ",", [&](const feature::CellValue& v) { append_numbers(v, where, out); });
  } else {
    cells.for_each_item(row, ";", ",", [&](const feature::ColumnCells::Item& item) {
      ++vectors;
      item.for_each([&](const feature::CellValue& v) { append_numbers(v, where, out); });
    });
  }
  const auto values = static_cast<int64_t>(out->size() - before);
  if (vectors != interests) {
    throw DataError(fmt::format("{}: {} embedding vector(s), expected {} (--num_interests)", where, vectors,
                                interests));
  }
  if (*dim == 0) *dim = values / interests;
  if (values != *dim * interests || *dim == 0) {
    throw DataError(fmt::format("{}: {} embedding values, expected {} vector(s) of width {} (the width of the item "
                                "embeddings)",
                                where, values, interests, *dim));
  }
}

EmbeddingTable read_embedding_table(const std::string& path, const std::string& reader_type,
                                    const std::string& id_field, const std::string& embedding_field,
                                    int64_t batch_size, const EmbeddingTableNames& names) {
  data::DatasetSources sources = data::open_table(data::table_format(reader_type, path, names.command), path,
                                                  {id_field, embedding_field}, batch_size, /*workers=*/1, 0, 1);
  data::BatchSource& source = *sources.sources.at(0);
  EmbeddingTable table;
  std::vector<float> values;
  int64_t dim = 0;
  while (auto batch = source.next()) {
    const data::RecordBatch& rb = batch->records;
    feature::ColumnCells ids(rb, id_field, names.command + " " + names.id_flag);
    feature::ColumnCells emb(rb, embedding_field, names.command + " " + names.embedding_flag, /*sequence=*/true);
    for (int64_t r = 0; r < rb.num_rows(); ++r) {
      if (!ids.is_scalar()) {
        throw DataError(fmt::format("{}: {} ids must be one value per row", ids.where(r), names.what));
      }
      table.ids.push_back(id_text(ids.scalar(r)));
      read_embeddings(rb, emb, r, 1, &dim, &values);
    }
  }
  if (table.ids.empty()) throw DataError(fmt::format("{}: the {} table has no rows", path, names.what));
  table.embeddings = torch::from_blob(values.data(), {static_cast<int64_t>(table.ids.size()), dim}, torch::kFloat32)
                         .clone();
  return table;
}

}  // namespace tzrec::retrieval
