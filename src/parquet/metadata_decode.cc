// Thrift compact decoding of FileMetaData, PageHeader and OffsetIndex (field ids: parquet.thrift).
#include <fmt/format.h>

#include "parquet/errors.h"
#include "parquet/metadata.h"
#include "parquet/thrift_compact.h"

namespace tzrec::parquet {
namespace {

using thrift::CompactReader;
namespace wt = thrift;

// Enum values are stored as read (future values stay representable and are rejected only where
// they are used), but must fit the int8 storage.
template <typename E>
E read_enum(CompactReader& r, int16_t id, uint8_t type, const char* sname) {
  CompactReader::expect_type(id, type, wt::kI32, sname);
  int32_t v = r.read_i32();
  if (v < 0 || v > 127) throw_decode_error(fmt::format("thrift: {} field {} has invalid enum value {}", sname, id, v));
  return static_cast<E>(v);
}

int32_t read_i32_field(CompactReader& r, int16_t id, uint8_t type, const char* sname) {
  CompactReader::expect_type(id, type, wt::kI32, sname);
  return r.read_i32();
}

int64_t read_i64_field(CompactReader& r, int16_t id, uint8_t type, const char* sname) {
  // Some writers use i32 where the spec says i64 for small values; both decode the same way.
  if (type != wt::kI64 && type != wt::kI32) CompactReader::expect_type(id, type, wt::kI64, sname);
  return r.read_i64();
}

std::string read_binary_field(CompactReader& r, int16_t id, uint8_t type, const char* sname) {
  CompactReader::expect_type(id, type, wt::kBinary, sname);
  return r.read_binary();
}

bool read_bool_field(CompactReader& r, int16_t id, uint8_t type, const char* sname) {
  CompactReader::expect_type(id, type, wt::kBoolTrue, sname);
  return r.read_bool(type);
}

// Reads a list header and checks the element type.
int64_t read_list(CompactReader& r, int16_t id, uint8_t type, uint8_t elem, const char* sname) {
  CompactReader::expect_type(id, type, wt::kList, sname);
  thrift::ListHeader h = r.read_list_header();
  bool ok = h.elem_type == elem || (elem == wt::kBoolTrue && h.elem_type == wt::kBoolFalse);
  if (!ok && h.size > 0) {
    throw_decode_error(fmt::format("thrift: {} field {} is a list of wire type {}, expected {}", sname, id,
                                   h.elem_type, elem));
  }
  return h.size;
}

void require(bool present, const char* sname, const char* field) {
  if (!present) throw_decode_error(fmt::format("thrift: {} lacks required field {}", sname, field));
}

KeyValue decode_key_value(CompactReader& r) {
  KeyValue kv;
  bool has_key = false;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  while (r.next_field(&id, &t)) {
    if (id == 1) {
      kv.key = read_binary_field(r, id, t, "KeyValue");
      has_key = true;
    } else if (id == 2) {
      kv.value = read_binary_field(r, id, t, "KeyValue");
    } else {
      r.skip(t);
    }
  }
  require(has_key, "KeyValue", "key");
  return kv;
}

std::vector<KeyValue> decode_key_values(CompactReader& r, int16_t id, uint8_t t, const char* sname) {
  int64_t n = read_list(r, id, t, wt::kStruct, sname);
  std::vector<KeyValue> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(decode_key_value(r));
  return out;
}

TimeUnit decode_time_unit(CompactReader& r) {
  TimeUnit unit = TimeUnit::kMillis;
  bool seen = false;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  while (r.next_field(&id, &t)) {
    if (id >= 1 && id <= 3 && t == wt::kStruct) {
      unit = static_cast<TimeUnit>(id);
      seen = true;
    }
    r.skip(t);
  }
  require(seen, "TimeUnit", "MILLIS|MICROS|NANOS");
  return unit;
}

LogicalType decode_logical_type(CompactReader& r) {
  using K = LogicalType::Kind;
  LogicalType lt;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  while (r.next_field(&id, &t)) {
    if (t != wt::kStruct) {
      r.skip(t);
      continue;
    }
    switch (id) {
      case 5: {  // DecimalType
        lt.kind = K::kDecimal;
        r.begin_struct();
        int16_t fid;
        uint8_t ft;
        while (r.next_field(&fid, &ft)) {
          if (fid == 1) lt.scale = read_i32_field(r, fid, ft, "DecimalType");
          else if (fid == 2) lt.precision = read_i32_field(r, fid, ft, "DecimalType");
          else r.skip(ft);
        }
        break;
      }
      case 7:    // TimeType
      case 8: {  // TimestampType
        lt.kind = id == 7 ? K::kTime : K::kTimestamp;
        r.begin_struct();
        int16_t fid;
        uint8_t ft;
        while (r.next_field(&fid, &ft)) {
          if (fid == 1) lt.adjusted_to_utc = read_bool_field(r, fid, ft, "TimestampType");
          else if (fid == 2 && ft == wt::kStruct) lt.unit = decode_time_unit(r);
          else r.skip(ft);
        }
        break;
      }
      case 10: {  // IntType
        lt.kind = K::kInteger;
        r.begin_struct();
        int16_t fid;
        uint8_t ft;
        while (r.next_field(&fid, &ft)) {
          if (fid == 1) {
            CompactReader::expect_type(fid, ft, wt::kByte, "IntType");
            lt.bit_width = r.read_byte();
          } else if (fid == 2) {
            lt.is_signed = read_bool_field(r, fid, ft, "IntType");
          } else {
            r.skip(ft);
          }
        }
        break;
      }
      case 1: case 2: case 3: case 4: case 6: case 11: case 12: case 13: case 14: case 15:
        lt.kind = static_cast<K>(id);
        r.skip(t);
        break;
      default:
        lt.kind = K::kOther;
        r.skip(t);
        break;
    }
  }
  return lt;
}

SchemaElement decode_schema_element(CompactReader& r) {
  SchemaElement e;
  bool has_name = false;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  const char* s = "SchemaElement";
  while (r.next_field(&id, &t)) {
    switch (id) {
      case 1: e.type = read_enum<PhysicalType>(r, id, t, s); break;
      case 2: e.type_length = read_i32_field(r, id, t, s); break;
      case 3: e.repetition = read_enum<Repetition>(r, id, t, s); break;
      case 4: e.name = read_binary_field(r, id, t, s); has_name = true; break;
      case 5: e.num_children = read_i32_field(r, id, t, s); break;
      case 6: e.converted_type = read_enum<ConvertedType>(r, id, t, s); break;
      case 7: e.scale = read_i32_field(r, id, t, s); break;
      case 8: e.precision = read_i32_field(r, id, t, s); break;
      case 9: e.field_id = read_i32_field(r, id, t, s); break;
      case 10:
        CompactReader::expect_type(id, t, wt::kStruct, s);
        e.logical_type = decode_logical_type(r);
        break;
      default: r.skip(t); break;
    }
  }
  require(has_name, s, "name");
  return e;
}

Statistics decode_statistics(CompactReader& r) {
  Statistics st;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  const char* s = "Statistics";
  std::optional<std::string> legacy_min, legacy_max;
  while (r.next_field(&id, &t)) {
    switch (id) {
      case 1: legacy_max = read_binary_field(r, id, t, s); break;
      case 2: legacy_min = read_binary_field(r, id, t, s); break;
      case 3: st.null_count = read_i64_field(r, id, t, s); break;
      case 4: st.distinct_count = read_i64_field(r, id, t, s); break;
      case 5: st.max_value = read_binary_field(r, id, t, s); break;
      case 6: st.min_value = read_binary_field(r, id, t, s); break;
      default: r.skip(t); break;
    }
  }
  if (!st.min_value) st.min_value = legacy_min;
  if (!st.max_value) st.max_value = legacy_max;
  return st;
}

ColumnMetaData decode_column_metadata(CompactReader& r) {
  ColumnMetaData m;
  bool has[10] = {};
  r.begin_struct();
  int16_t id;
  uint8_t t;
  const char* s = "ColumnMetaData";
  while (r.next_field(&id, &t)) {
    if (id >= 1 && id <= 9) has[id] = true;
    switch (id) {
      case 1: m.type = read_enum<PhysicalType>(r, id, t, s); break;
      case 2: {
        int64_t n = read_list(r, id, t, wt::kI32, s);
        for (int64_t i = 0; i < n; ++i) {
          int32_t v = r.read_i32();
          if (v < 0 || v > 127) throw_decode_error(fmt::format("thrift: invalid encoding {}", v));
          m.encodings.push_back(static_cast<Encoding>(v));
        }
        break;
      }
      case 3: {
        int64_t n = read_list(r, id, t, wt::kBinary, s);
        for (int64_t i = 0; i < n; ++i) m.path_in_schema.push_back(r.read_binary());
        break;
      }
      case 4: m.codec = read_enum<Compression>(r, id, t, s); break;
      case 5: m.num_values = read_i64_field(r, id, t, s); break;
      case 6: m.total_uncompressed_size = read_i64_field(r, id, t, s); break;
      case 7: m.total_compressed_size = read_i64_field(r, id, t, s); break;
      case 8: m.key_value_metadata = decode_key_values(r, id, t, s); break;
      case 9: m.data_page_offset = read_i64_field(r, id, t, s); break;
      case 10: m.index_page_offset = read_i64_field(r, id, t, s); break;
      case 11: m.dictionary_page_offset = read_i64_field(r, id, t, s); break;
      case 12:
        CompactReader::expect_type(id, t, wt::kStruct, s);
        m.statistics = decode_statistics(r);
        break;
      default: r.skip(t); break;
    }
  }
  require(has[1], s, "type");
  require(has[4], s, "codec");
  require(has[5], s, "num_values");
  require(has[7], s, "total_compressed_size");
  require(has[9], s, "data_page_offset");
  return m;
}

ColumnChunk decode_column_chunk(CompactReader& r) {
  ColumnChunk c;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  const char* s = "ColumnChunk";
  while (r.next_field(&id, &t)) {
    switch (id) {
      case 1: c.file_path = read_binary_field(r, id, t, s); break;
      case 2: c.file_offset = read_i64_field(r, id, t, s); break;
      case 3:
        CompactReader::expect_type(id, t, wt::kStruct, s);
        c.meta_data = decode_column_metadata(r);
        c.has_meta_data = true;
        break;
      case 4: c.offset_index_offset = read_i64_field(r, id, t, s); break;
      case 5: c.offset_index_length = read_i32_field(r, id, t, s); break;
      case 6: c.column_index_offset = read_i64_field(r, id, t, s); break;
      case 7: c.column_index_length = read_i32_field(r, id, t, s); break;
      case 8:
      case 9:
        c.encrypted = true;
        r.skip(t);
        break;
      default: r.skip(t); break;
    }
  }
  return c;
}

RowGroup decode_row_group(CompactReader& r) {
  RowGroup g;
  bool has_columns = false, has_rows = false;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  const char* s = "RowGroup";
  while (r.next_field(&id, &t)) {
    switch (id) {
      case 1: {
        int64_t n = read_list(r, id, t, wt::kStruct, s);
        g.columns.reserve(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) g.columns.push_back(decode_column_chunk(r));
        has_columns = true;
        break;
      }
      case 2: g.total_byte_size = read_i64_field(r, id, t, s); break;
      case 3: g.num_rows = read_i64_field(r, id, t, s); has_rows = true; break;
      case 5: g.file_offset = read_i64_field(r, id, t, s); break;
      case 6: g.total_compressed_size = read_i64_field(r, id, t, s); break;
      case 7:
        CompactReader::expect_type(id, t, wt::kI16, s);
        g.ordinal = r.read_i16();
        break;
      default: r.skip(t); break;
    }
  }
  require(has_columns, s, "columns");
  require(has_rows, s, "num_rows");
  return g;
}

}  // namespace

FileMetaData decode_file_metadata(const uint8_t* data, size_t size) {
  CompactReader r(data, size);
  FileMetaData md;
  bool has_schema = false, has_rows = false, has_groups = false;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  const char* s = "FileMetaData";
  while (r.next_field(&id, &t)) {
    switch (id) {
      case 1: md.version = read_i32_field(r, id, t, s); break;
      case 2: {
        int64_t n = read_list(r, id, t, wt::kStruct, s);
        md.schema.reserve(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) md.schema.push_back(decode_schema_element(r));
        has_schema = true;
        break;
      }
      case 3: md.num_rows = read_i64_field(r, id, t, s); has_rows = true; break;
      case 4: {
        int64_t n = read_list(r, id, t, wt::kStruct, s);
        md.row_groups.reserve(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) md.row_groups.push_back(decode_row_group(r));
        has_groups = true;
        break;
      }
      case 5: md.key_value_metadata = decode_key_values(r, id, t, s); break;
      case 6: md.created_by = read_binary_field(r, id, t, s); break;
      case 8:
        md.encrypted = true;
        r.skip(t);
        break;
      default: r.skip(t); break;
    }
  }
  require(has_schema, s, "schema");
  require(has_rows, s, "num_rows");
  require(has_groups, s, "row_groups");
  return md;
}

PageHeader decode_page_header(const uint8_t* data, size_t size, size_t* header_size) {
  CompactReader r(data, size);
  PageHeader h;
  bool has_type = false, has_usize = false, has_csize = false;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  const char* s = "PageHeader";
  while (r.next_field(&id, &t)) {
    switch (id) {
      case 1: h.type = read_enum<PageType>(r, id, t, s); has_type = true; break;
      case 2: h.uncompressed_page_size = read_i32_field(r, id, t, s); has_usize = true; break;
      case 3: h.compressed_page_size = read_i32_field(r, id, t, s); has_csize = true; break;
      case 4: h.crc = static_cast<uint32_t>(read_i32_field(r, id, t, s)); break;
      case 5: {
        CompactReader::expect_type(id, t, wt::kStruct, s);
        DataPageHeader d;
        bool has[5] = {};
        r.begin_struct();
        int16_t fid;
        uint8_t ft;
        const char* ds = "DataPageHeader";
        while (r.next_field(&fid, &ft)) {
          if (fid >= 1 && fid <= 4) has[fid] = true;
          switch (fid) {
            case 1: d.num_values = read_i32_field(r, fid, ft, ds); break;
            case 2: d.encoding = read_enum<Encoding>(r, fid, ft, ds); break;
            case 3: d.definition_level_encoding = read_enum<Encoding>(r, fid, ft, ds); break;
            case 4: d.repetition_level_encoding = read_enum<Encoding>(r, fid, ft, ds); break;
            case 5:
              CompactReader::expect_type(fid, ft, wt::kStruct, ds);
              d.statistics = decode_statistics(r);
              break;
            default: r.skip(ft); break;
          }
        }
        require(has[1], ds, "num_values");
        require(has[2], ds, "encoding");
        h.data_page_header = d;
        break;
      }
      case 7: {
        CompactReader::expect_type(id, t, wt::kStruct, s);
        DictionaryPageHeader d;
        bool has_n = false;
        r.begin_struct();
        int16_t fid;
        uint8_t ft;
        const char* ds = "DictionaryPageHeader";
        while (r.next_field(&fid, &ft)) {
          switch (fid) {
            case 1: d.num_values = read_i32_field(r, fid, ft, ds); has_n = true; break;
            case 2: d.encoding = read_enum<Encoding>(r, fid, ft, ds); break;
            case 3: d.is_sorted = read_bool_field(r, fid, ft, ds); break;
            default: r.skip(ft); break;
          }
        }
        require(has_n, ds, "num_values");
        h.dictionary_page_header = d;
        break;
      }
      case 8: {
        CompactReader::expect_type(id, t, wt::kStruct, s);
        DataPageHeaderV2 d;
        bool has[7] = {};
        r.begin_struct();
        int16_t fid;
        uint8_t ft;
        const char* ds = "DataPageHeaderV2";
        while (r.next_field(&fid, &ft)) {
          if (fid >= 1 && fid <= 6) has[fid] = true;
          switch (fid) {
            case 1: d.num_values = read_i32_field(r, fid, ft, ds); break;
            case 2: d.num_nulls = read_i32_field(r, fid, ft, ds); break;
            case 3: d.num_rows = read_i32_field(r, fid, ft, ds); break;
            case 4: d.encoding = read_enum<Encoding>(r, fid, ft, ds); break;
            case 5: d.definition_levels_byte_length = read_i32_field(r, fid, ft, ds); break;
            case 6: d.repetition_levels_byte_length = read_i32_field(r, fid, ft, ds); break;
            case 7: d.is_compressed = read_bool_field(r, fid, ft, ds); break;
            case 8:
              CompactReader::expect_type(fid, ft, wt::kStruct, ds);
              d.statistics = decode_statistics(r);
              break;
            default: r.skip(ft); break;
          }
        }
        for (int i = 1; i <= 6; ++i) require(has[i], ds, "num_values/num_nulls/num_rows/encoding/level lengths");
        h.data_page_header_v2 = d;
        break;
      }
      default: r.skip(t); break;
    }
  }
  require(has_type, s, "type");
  require(has_usize, s, "uncompressed_page_size");
  require(has_csize, s, "compressed_page_size");
  *header_size = r.position();
  return h;
}

OffsetIndex decode_offset_index(const uint8_t* data, size_t size) {
  CompactReader r(data, size);
  OffsetIndex index;
  r.begin_struct();
  int16_t id;
  uint8_t t;
  while (r.next_field(&id, &t)) {
    if (id != 1) {
      r.skip(t);
      continue;
    }
    int64_t n = read_list(r, id, t, wt::kStruct, "OffsetIndex");
    index.page_locations.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      PageLocation loc;
      bool has[4] = {};
      r.begin_struct();
      int16_t fid;
      uint8_t ft;
      while (r.next_field(&fid, &ft)) {
        if (fid >= 1 && fid <= 3) has[fid] = true;
        switch (fid) {
          case 1: loc.offset = read_i64_field(r, fid, ft, "PageLocation"); break;
          case 2: loc.compressed_page_size = read_i32_field(r, fid, ft, "PageLocation"); break;
          case 3: loc.first_row_index = read_i64_field(r, fid, ft, "PageLocation"); break;
          default: r.skip(ft); break;
        }
      }
      require(has[1] && has[2] && has[3], "PageLocation", "offset/compressed_page_size/first_row_index");
      index.page_locations.push_back(loc);
    }
  }
  return index;
}

}  // namespace tzrec::parquet
