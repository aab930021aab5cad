#include "parquet/writer.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "base/logging.h"
#include "parquet/codecs.h"
#include "parquet/column_writer.h"
#include "parquet/errors.h"
#include "parquet/thread_pool.h"

namespace tzrec::parquet {
namespace {

constexpr char kMagic[4] = {'P', 'A', 'R', '1'};

SchemaElement group(const std::string& name, Repetition rep, int children, ConvertedType ct = ConvertedType::kNone) {
  SchemaElement e;
  e.name = name;
  e.repetition = rep;
  e.num_children = children;
  e.converted_type = ct;
  if (ct == ConvertedType::kList) e.logical_type.kind = LogicalType::Kind::kList;
  return e;
}

void add_field_elements(const WriterField& f, std::vector<SchemaElement>* out) {
  auto rep_of = [](bool nullable) { return nullable ? Repetition::kOptional : Repetition::kRequired; };
  SchemaElement leaf;
  leaf.type = f.type;
  if (f.type == PhysicalType::kByteArray && f.string) {
    leaf.converted_type = ConvertedType::kUtf8;
    leaf.logical_type.kind = LogicalType::Kind::kString;
  }
  if (f.integer_bits > 0) {
    const int index = f.integer_bits == 8 ? 0 : f.integer_bits == 16 ? 1 : f.integer_bits == 32 ? 2 : 3;
    leaf.converted_type = static_cast<ConvertedType>(static_cast<int>(f.integer_signed ? ConvertedType::kInt8
                                                                                       : ConvertedType::kUint8) +
                                                     index);
    leaf.logical_type.kind = LogicalType::Kind::kInteger;
    leaf.logical_type.bit_width = static_cast<int8_t>(f.integer_bits);
    leaf.logical_type.is_signed = f.integer_signed;
  }
  if (f.list_depth == 0) {
    leaf.name = f.name;
    leaf.repetition = rep_of(f.nullable);
    out->push_back(leaf);
    return;
  }
  // Standard three-level lists: <rep> group name (LIST) { repeated group list { <rep> element } }.
  out->push_back(group(f.name, rep_of(f.nullable), 1, ConvertedType::kList));
  out->push_back(group("list", Repetition::kRepeated, 1));
  for (int d = 1; d < f.list_depth; ++d) {
    out->push_back(group("element", rep_of(f.element_nullable), 1, ConvertedType::kList));
    out->push_back(group("list", Repetition::kRepeated, 1));
  }
  leaf.name = "element";
  leaf.repetition = rep_of(f.element_nullable);
  out->push_back(leaf);
}

[[noreturn]] void bad_input(const std::string& path, const std::string& column, const std::string& what) {
  throw DataError(fmt::format("parquet writer '{}': column '{}': {}", path, column, what));
}

// The schema elements of `fields` (root first), checked: unique non-empty names, types and list
// depths a FileWriter writes. `path` names the file in errors ("" before one exists).
std::vector<SchemaElement> schema_elements(const std::vector<WriterField>& fields, const std::string& path) {
  std::set<std::string> names;
  std::vector<SchemaElement> elements(1);
  elements[0].name = "schema";
  elements[0].num_children = static_cast<int32_t>(fields.size());
  for (const auto& f : fields) {
    if (f.name.empty() || !names.insert(f.name).second) {
      throw DataError(fmt::format("parquet writer '{}': field names must be unique and non-empty ('{}')", path, f.name));
    }
    switch (f.type) {
      case PhysicalType::kBoolean:
      case PhysicalType::kInt32:
      case PhysicalType::kInt64:
      case PhysicalType::kFloat:
      case PhysicalType::kDouble:
      case PhysicalType::kByteArray: break;
      default:
        throw DataError(fmt::format("parquet writer '{}': field '{}' has unsupported type {}", path, f.name,
                                    to_string(f.type)));
    }
    const bool int_type = f.type == PhysicalType::kInt32 || f.type == PhysicalType::kInt64;
    if (f.integer_bits != 0 &&
        (!int_type || (f.integer_bits != 8 && f.integer_bits != 16 && f.integer_bits != 32 && f.integer_bits != 64) ||
         f.integer_bits > (f.type == PhysicalType::kInt32 ? 32 : 64) || (f.type == PhysicalType::kInt64 && f.integer_bits != 64))) {
      throw DataError(fmt::format("parquet writer '{}': field '{}' cannot be a {}-bit integer of type {}", path, f.name,
                                  f.integer_bits, to_string(f.type)));
    }
    if (f.list_depth < 0 || f.list_depth > 2) {
      throw DataError(fmt::format("parquet writer '{}': field '{}' has list_depth {} (0, 1 or 2)", path, f.name,
                                  f.list_depth));
    }
    add_field_elements(f, &elements);
  }
  return elements;
}

}  // namespace

Schema writer_schema(const std::vector<WriterField>& fields) { return Schema::build(schema_elements(fields, "")); }

FileWriter::FileWriter(const std::string& path, std::vector<WriterField> fields, WriterOptions options)
    : path_(path), fields_(std::move(fields)), options_(std::move(options)) {
  if (fields_.empty()) throw DataError(fmt::format("parquet writer '{}': no fields", path_));
  if (options_.row_group_rows <= 0) throw DataError(fmt::format("parquet writer '{}': row_group_rows must be > 0", path_));
  if (!codec_supported(options_.compression) || options_.compression == Compression::kLz4Raw ||
      options_.compression == Compression::kBrotli) {
    throw DataError(fmt::format("parquet writer '{}': unsupported codec {} (use UNCOMPRESSED, SNAPPY, GZIP or ZSTD)",
                                path_, to_string(options_.compression)));
  }
  std::vector<SchemaElement> elements = schema_elements(fields_, path_);
  schema_ = Schema::build(elements);
  metadata_.version = 1;
  metadata_.schema = std::move(elements);
  metadata_.created_by = options_.created_by;
  metadata_.key_value_metadata = options_.key_value_metadata;
  pool_ = std::make_unique<ThreadPool>(std::max(1, options_.num_threads));
  out_ = std::make_unique<OutputFile>(path_);
  out_->write(kMagic, 4);
}

FileWriter::~FileWriter() {
  if (!closed_) log::warning("parquet writer '{}' destroyed without close(): the file has no footer", path_);
}

void FileWriter::validate(const Table& table) const {
  if (table.columns.size() != fields_.size()) {
    throw DataError(fmt::format("parquet writer '{}': table has {} columns, the file has {} fields", path_,
                                table.columns.size(), fields_.size()));
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    const ColumnData& c = table.columns[i];
    const ColumnDescriptor& d = schema_.column(static_cast<int>(i));
    const std::string& name = fields_[i].name;
    if (c.descriptor.type != d.type) {
      bad_input(path_, name, fmt::format("type {} but the field is {}", to_string(c.descriptor.type), to_string(d.type)));
    }
    if (static_cast<int>(c.lists.size()) != d.max_rep) {
      bad_input(path_, name, fmt::format("{} list levels but the field has {}", c.lists.size(), d.max_rep));
    }
    if (c.num_rows != table.num_rows) {
      bad_input(path_, name, fmt::format("{} rows but the table has {}", c.num_rows, table.num_rows));
    }
    int64_t count = c.num_rows;  // slots at the current level
    for (size_t k = 0; k < c.lists.size(); ++k) {
      const ListLevel& lv = c.lists[k];
      if (lv.offsets.empty() || lv.size() != count || lv.offsets.front() != 0) bad_input(path_, name, fmt::format("list level {} offsets do not match its {} lists", k, count));
      for (size_t j = 1; j < lv.offsets.size(); ++j) {
        if (lv.offsets[j] < lv.offsets[j - 1]) bad_input(path_, name, fmt::format("list level {} offsets decrease", k));
      }
      if (!lv.validity.empty()) {
        if (static_cast<int64_t>(lv.validity.size()) != count) bad_input(path_, name, fmt::format("list level {} validity size", k));
        if (!d.list_nullable[k] && std::count(lv.validity.begin(), lv.validity.end(), 0) > 0) {
          bad_input(path_, name, fmt::format("null list at level {} but the field's lists are not nullable", k));
        }
      }
      count = lv.offsets.back();
    }
    if (c.num_values() != count) bad_input(path_, name, fmt::format("{} values for {} slots", c.num_values(), count));
    if (d.type == PhysicalType::kByteArray) {
      if (c.offsets.empty()) bad_input(path_, name, "byte-array column without offsets");
      for (size_t j = 1; j < c.offsets.size(); ++j) {
        if (c.offsets[j] < c.offsets[j - 1]) bad_input(path_, name, "byte-array offsets decrease");
      }
      if (c.offsets.front() != 0 || c.offsets.back() != static_cast<int64_t>(c.values.size())) {
        bad_input(path_, name, "byte-array offsets do not cover the value bytes");
      }
    }
    if (!c.validity.empty()) {
      if (static_cast<int64_t>(c.validity.size()) != count) bad_input(path_, name, "validity size differs from the values");
      if (!d.leaf_nullable && std::count(c.validity.begin(), c.validity.end(), 0) > 0) {
        bad_input(path_, name, "null value but the field is not nullable");
      }
    }
  }
}

void FileWriter::write(const Table& table) { write(Table(table)); }

void FileWriter::write(Table&& table) {
  if (closed_) throw DataError(fmt::format("parquet writer '{}': write after close", path_));
  validate(table);
  if (table.num_rows == 0) return;
  pending_rows_ += table.num_rows;
  pending_.push_back(std::move(table));
  while (pending_rows_ >= options_.row_group_rows) flush_row_group(options_.row_group_rows);
}

void FileWriter::flush_row_group(int64_t rows) {
  const size_t num_columns = fields_.size();
  // Segments of the pending tables making up `rows` rows.
  std::vector<std::vector<ColumnSegment>> segments(num_columns);
  int64_t need = rows;
  size_t t = 0;
  int64_t start = pending_consumed_;
  while (need > 0) {
    const Table& table = pending_[t];
    int64_t take = std::min(need, table.num_rows - start);
    for (size_t c = 0; c < num_columns; ++c) segments[c].push_back({&table.columns[c], start, start + take});
    need -= take;
    start += take;
    if (start == table.num_rows) {
      ++t;
      start = 0;
    }
  }
  std::vector<EncodedChunk> chunks(num_columns);
  pool_->parallel_for(static_cast<int64_t>(num_columns), [&](int64_t c) {
    chunks[static_cast<size_t>(c)] =
        encode_column_chunk(schema_.column(static_cast<int>(c)), segments[static_cast<size_t>(c)], options_);
  });
  RowGroup rg;
  rg.num_rows = rows;
  rg.file_offset = out_->position();
  rg.ordinal = static_cast<int16_t>(std::min<size_t>(metadata_.row_groups.size(), INT16_MAX));
  std::vector<OffsetIndex> indexes(num_columns);
  int64_t compressed = 0;
  for (size_t c = 0; c < num_columns; ++c) {
    EncodedChunk& ch = chunks[c];
    const int64_t base = out_->position();
    ColumnChunk cc;
    cc.meta_data = std::move(ch.meta);
    cc.has_meta_data = true;
    cc.meta_data.data_page_offset += base;
    if (cc.meta_data.dictionary_page_offset) *cc.meta_data.dictionary_page_offset += base;
    for (auto& loc : ch.pages) loc.offset += base;
    indexes[c].page_locations = std::move(ch.pages);
    out_->write(ch.bytes.data(), ch.bytes.size());
    rg.total_byte_size += cc.meta_data.total_uncompressed_size;
    compressed += cc.meta_data.total_compressed_size;
    rg.columns.push_back(std::move(cc));
  }
  rg.total_compressed_size = compressed;
  metadata_.row_groups.push_back(std::move(rg));
  offset_indexes_.push_back(std::move(indexes));
  metadata_.num_rows += rows;
  rows_written_ += rows;
  // Drop the tables fully written.
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(t));
  pending_consumed_ = start;
  pending_rows_ -= rows;
}

void FileWriter::close() {
  if (closed_) return;
  if (pending_rows_ > 0) flush_row_group(pending_rows_);
  pending_.clear();
  if (options_.offset_index) {
    for (size_t g = 0; g < offset_indexes_.size(); ++g) {
      for (size_t c = 0; c < offset_indexes_[g].size(); ++c) {
        std::string bytes;
        encode_offset_index(offset_indexes_[g][c], &bytes);
        ColumnChunk& cc = metadata_.row_groups[g].columns[c];
        cc.offset_index_offset = out_->position();
        cc.offset_index_length = static_cast<int32_t>(bytes.size());
        out_->write(bytes.data(), bytes.size());
      }
    }
  }
  std::string footer;
  encode_file_metadata(metadata_, &footer);
  out_->write(footer.data(), footer.size());
  uint32_t len = static_cast<uint32_t>(footer.size());
  out_->write(&len, 4);
  out_->write(kMagic, 4);
  out_->close();
  closed_ = true;
}

// ---- ColumnBuilder ------------------------------------------------------------------------------

ColumnBuilder::ColumnBuilder(const ColumnDescriptor& descriptor) : column_(empty_column(descriptor)) {}

void ColumnBuilder::begin_slot() {
  if (depth_ == 0) {
    ++column_.num_rows;
  } else {
    column_.lists[static_cast<size_t>(depth_ - 1)].offsets.back() += 1;
  }
}

void ColumnBuilder::begin_value() {
  if (depth_ != column_.descriptor.max_rep) {
    throw DataError(fmt::format("ColumnBuilder '{}': a value at list depth {} (the column has {} list levels)",
                                column_.descriptor.path_string, depth_, column_.descriptor.max_rep));
  }
  begin_slot();
}

void ColumnBuilder::end_value(bool valid) {
  if (column_.descriptor.leaf_nullable) column_.validity.push_back(valid ? 1 : 0);
  if (column_.descriptor.type == PhysicalType::kByteArray) {
    column_.offsets.push_back(static_cast<int64_t>(column_.values.size()));
  }
}

void ColumnBuilder::check_type(PhysicalType type) const {
  if (column_.descriptor.type != type) {
    throw DataError(fmt::format("ColumnBuilder '{}': {} value for a {} column", column_.descriptor.path_string,
                                to_string(type), to_string(column_.descriptor.type)));
  }
}

void ColumnBuilder::append(bool value) {
  check_type(PhysicalType::kBoolean);
  begin_value();
  *column_.values.grow(1) = value ? 1 : 0;
  end_value(true);
}

void ColumnBuilder::append_string(std::string_view value) {
  if (column_.descriptor.type != PhysicalType::kByteArray) {
    throw DataError(fmt::format("ColumnBuilder '{}': string value for a {} column", column_.descriptor.path_string,
                                to_string(column_.descriptor.type)));
  }
  begin_value();
  column_.values.append(value.data(), value.size());
  end_value(true);
}

void ColumnBuilder::append_null() {
  if (!column_.descriptor.leaf_nullable) {
    throw DataError(fmt::format("ColumnBuilder '{}': null value but the column is not nullable",
                                column_.descriptor.path_string));
  }
  begin_value();
  int w = column_.value_width();
  if (w > 0) std::memset(column_.values.grow(static_cast<size_t>(w)), 0, static_cast<size_t>(w));
  end_value(false);
}

void ColumnBuilder::begin_list() {
  if (depth_ >= column_.descriptor.max_rep) {
    throw DataError(fmt::format("ColumnBuilder '{}': begin_list() deeper than the column's {} list levels",
                                column_.descriptor.path_string, column_.descriptor.max_rep));
  }
  begin_slot();
  ListLevel& lv = column_.lists[static_cast<size_t>(depth_)];
  lv.offsets.push_back(lv.offsets.back());
  if (column_.descriptor.list_nullable[static_cast<size_t>(depth_)]) lv.validity.push_back(1);
  ++depth_;
}

void ColumnBuilder::end_list() {
  if (depth_ == 0) throw DataError(fmt::format("ColumnBuilder '{}': end_list() without begin_list()", column_.descriptor.path_string));
  --depth_;
}

void ColumnBuilder::append_null_list() {
  if (depth_ >= column_.descriptor.max_rep || !column_.descriptor.list_nullable[static_cast<size_t>(depth_)]) {
    throw DataError(fmt::format("ColumnBuilder '{}': null list where the column has no nullable list",
                                column_.descriptor.path_string));
  }
  begin_slot();
  ListLevel& lv = column_.lists[static_cast<size_t>(depth_)];
  lv.offsets.push_back(lv.offsets.back());
  lv.validity.push_back(0);
}

ColumnData ColumnBuilder::finish() {
  if (depth_ != 0) throw DataError(fmt::format("ColumnBuilder '{}': finish() inside a list", column_.descriptor.path_string));
  ColumnData out = std::move(column_);
  column_ = empty_column(out.descriptor);
  return out;
}

}  // namespace tzrec::parquet
