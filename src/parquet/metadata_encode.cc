// Thrift compact encoding of FileMetaData, PageHeader and OffsetIndex (what our writer emits).
#include "parquet/metadata.h"
#include "parquet/thrift_compact.h"

namespace tzrec::parquet {
namespace {

using thrift::CompactWriter;
namespace wt = thrift;

void encode_key_values(CompactWriter& w, int16_t id, const std::vector<KeyValue>& kvs) {
  w.field_list_begin(id, wt::kStruct, static_cast<int64_t>(kvs.size()));
  for (const auto& kv : kvs) {
    w.struct_begin();
    w.field_binary(1, kv.key);
    if (kv.value) w.field_binary(2, *kv.value);
    w.struct_end();
  }
}

void encode_statistics(CompactWriter& w, int16_t id, const Statistics& st) {
  w.field_struct_begin(id);
  if (st.null_count) w.field_i64(3, *st.null_count);
  if (st.distinct_count) w.field_i64(4, *st.distinct_count);
  if (st.max_value) w.field_binary(5, *st.max_value);
  if (st.min_value) w.field_binary(6, *st.min_value);
  w.struct_end();
}

void encode_logical_type(CompactWriter& w, const LogicalType& lt) {
  using K = LogicalType::Kind;
  w.field_struct_begin(10);
  int16_t member = static_cast<int16_t>(lt.kind);
  w.field_struct_begin(member);
  switch (lt.kind) {
    case K::kDecimal:
      w.field_i32(1, lt.scale);
      w.field_i32(2, lt.precision);
      break;
    case K::kTime:
    case K::kTimestamp:
      w.field_bool(1, lt.adjusted_to_utc);
      w.field_struct_begin(2);
      w.field_struct_begin(static_cast<int16_t>(lt.unit));
      w.struct_end();
      w.struct_end();
      break;
    case K::kInteger:
      w.field_byte(1, lt.bit_width);
      w.field_bool(2, lt.is_signed);
      break;
    default: break;
  }
  w.struct_end();
  w.struct_end();
}

void encode_schema_element(CompactWriter& w, const SchemaElement& e) {
  w.struct_begin();
  if (e.type) w.field_i32(1, static_cast<int32_t>(*e.type));
  if (e.type && *e.type == PhysicalType::kFixedLenByteArray) w.field_i32(2, e.type_length);
  if (e.repetition) w.field_i32(3, static_cast<int32_t>(*e.repetition));
  w.field_binary(4, e.name);
  if (!e.type) w.field_i32(5, e.num_children);
  if (e.converted_type != ConvertedType::kNone) w.field_i32(6, static_cast<int32_t>(e.converted_type));
  if (e.field_id) w.field_i32(9, *e.field_id);
  if (e.logical_type.kind != LogicalType::Kind::kNone && e.logical_type.kind != LogicalType::Kind::kOther) {
    encode_logical_type(w, e.logical_type);
  }
  w.struct_end();
}

void encode_column_metadata(CompactWriter& w, const ColumnMetaData& m) {
  w.field_struct_begin(3);
  w.field_i32(1, static_cast<int32_t>(m.type));
  w.field_list_begin(2, wt::kI32, static_cast<int64_t>(m.encodings.size()));
  for (Encoding e : m.encodings) w.write_i32(static_cast<int32_t>(e));
  w.field_list_begin(3, wt::kBinary, static_cast<int64_t>(m.path_in_schema.size()));
  for (const auto& p : m.path_in_schema) w.write_binary(p);
  w.field_i32(4, static_cast<int32_t>(m.codec));
  w.field_i64(5, m.num_values);
  w.field_i64(6, m.total_uncompressed_size);
  w.field_i64(7, m.total_compressed_size);
  if (!m.key_value_metadata.empty()) encode_key_values(w, 8, m.key_value_metadata);
  w.field_i64(9, m.data_page_offset);
  if (m.index_page_offset) w.field_i64(10, *m.index_page_offset);
  if (m.dictionary_page_offset) w.field_i64(11, *m.dictionary_page_offset);
  if (m.statistics) encode_statistics(w, 12, *m.statistics);
  w.struct_end();
}

}  // namespace

void encode_file_metadata(const FileMetaData& md, std::string* out) {
  CompactWriter w(out);
  w.struct_begin();
  w.field_i32(1, md.version);
  w.field_list_begin(2, wt::kStruct, static_cast<int64_t>(md.schema.size()));
  for (const auto& e : md.schema) encode_schema_element(w, e);
  w.field_i64(3, md.num_rows);
  w.field_list_begin(4, wt::kStruct, static_cast<int64_t>(md.row_groups.size()));
  for (const auto& g : md.row_groups) {
    w.struct_begin();
    w.field_list_begin(1, wt::kStruct, static_cast<int64_t>(g.columns.size()));
    for (const auto& c : g.columns) {
      w.struct_begin();
      if (c.file_path) w.field_binary(1, *c.file_path);
      w.field_i64(2, c.file_offset);
      encode_column_metadata(w, c.meta_data);
      if (c.offset_index_offset) w.field_i64(4, *c.offset_index_offset);
      if (c.offset_index_length) w.field_i32(5, *c.offset_index_length);
      if (c.column_index_offset) w.field_i64(6, *c.column_index_offset);
      if (c.column_index_length) w.field_i32(7, *c.column_index_length);
      w.struct_end();
    }
    w.field_i64(2, g.total_byte_size);
    w.field_i64(3, g.num_rows);
    if (g.file_offset) w.field_i64(5, *g.file_offset);
    if (g.total_compressed_size) w.field_i64(6, *g.total_compressed_size);
    w.struct_end();
  }
  if (!md.key_value_metadata.empty()) encode_key_values(w, 5, md.key_value_metadata);
  if (md.created_by) w.field_binary(6, *md.created_by);
  w.struct_end();
}

void encode_page_header(const PageHeader& h, std::string* out) {
  CompactWriter w(out);
  w.struct_begin();
  w.field_i32(1, static_cast<int32_t>(h.type));
  w.field_i32(2, h.uncompressed_page_size);
  w.field_i32(3, h.compressed_page_size);
  if (h.crc) w.field_i32(4, static_cast<int32_t>(*h.crc));
  if (h.data_page_header) {
    const auto& d = *h.data_page_header;
    w.field_struct_begin(5);
    w.field_i32(1, d.num_values);
    w.field_i32(2, static_cast<int32_t>(d.encoding));
    w.field_i32(3, static_cast<int32_t>(d.definition_level_encoding));
    w.field_i32(4, static_cast<int32_t>(d.repetition_level_encoding));
    if (d.statistics) encode_statistics(w, 5, *d.statistics);
    w.struct_end();
  }
  if (h.dictionary_page_header) {
    const auto& d = *h.dictionary_page_header;
    w.field_struct_begin(7);
    w.field_i32(1, d.num_values);
    w.field_i32(2, static_cast<int32_t>(d.encoding));
    if (d.is_sorted) w.field_bool(3, true);
    w.struct_end();
  }
  if (h.data_page_header_v2) {
    const auto& d = *h.data_page_header_v2;
    w.field_struct_begin(8);
    w.field_i32(1, d.num_values);
    w.field_i32(2, d.num_nulls);
    w.field_i32(3, d.num_rows);
    w.field_i32(4, static_cast<int32_t>(d.encoding));
    w.field_i32(5, d.definition_levels_byte_length);
    w.field_i32(6, d.repetition_levels_byte_length);
    w.field_bool(7, d.is_compressed);
    if (d.statistics) encode_statistics(w, 8, *d.statistics);
    w.struct_end();
  }
  w.struct_end();
}

void encode_offset_index(const OffsetIndex& index, std::string* out) {
  CompactWriter w(out);
  w.struct_begin();
  w.field_list_begin(1, wt::kStruct, static_cast<int64_t>(index.page_locations.size()));
  for (const auto& loc : index.page_locations) {
    w.struct_begin();
    w.field_i64(1, loc.offset);
    w.field_i32(2, loc.compressed_page_size);
    w.field_i64(3, loc.first_row_index);
    w.struct_end();
  }
  w.struct_end();
}

}  // namespace tzrec::parquet
