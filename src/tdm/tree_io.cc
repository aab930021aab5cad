#include "tdm/tree_io.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"
#include "data/csv_value_types.h"
#include "data/dataset_sources.h"
#include "data/file_output.h"
#include "data/sampler_table.h"
#include "parquet/writer.h"

namespace tzrec::tdm {
namespace {

// One input column gathered over the whole table: typed values and where each row came from.
struct Gathered {
  std::string name;
  AttrType type = AttrType::kString;
  std::vector<AttrValue> values;
};

struct RowWhere {
  int32_t file = 0;
  int64_t line = 0;
};

AttrType parquet_type(const parquet::ColumnData& c, const std::string& file, const std::string& column) {
  switch (c.type()) {
    case parquet::PhysicalType::kInt32: return AttrType::kInt32;
    case parquet::PhysicalType::kInt64: return AttrType::kInt64;
    case parquet::PhysicalType::kFloat: return AttrType::kFloat;
    case parquet::PhysicalType::kDouble: return AttrType::kDouble;
    case parquet::PhysicalType::kBoolean: return AttrType::kBool;
    case parquet::PhysicalType::kByteArray: return AttrType::kString;
    default: break;
  }
  throw DataError(fmt::format("{} column {}: Parquet physical type not supported for tdm_init_tree; use int32, int64, "
                              "float, double, bool or string columns",
                              file, column));
}

AttrValue parquet_value(const parquet::ColumnData& c, int64_t row) {
  if (c.is_null(row)) return AttrValue::null();
  switch (c.type()) {
    case parquet::PhysicalType::kInt32: return AttrValue::of_int(c.data<int32_t>()[row]);
    case parquet::PhysicalType::kInt64: return AttrValue::of_int(c.data<int64_t>()[row]);
    case parquet::PhysicalType::kFloat: return AttrValue::of_double(c.data<float>()[row]);
    case parquet::PhysicalType::kDouble: return AttrValue::of_double(c.data<double>()[row]);
    case parquet::PhysicalType::kBoolean: return AttrValue::of_int(c.data<uint8_t>()[row] != 0 ? 1 : 0);
    default: return AttrValue::of_string(std::string(c.bytes(row)));
  }
}

// Types the text cells of one CSV column as pyarrow infers them (data/csv_value_types.h), then
// takes its values as from a Parquet column.
void infer_csv_column(const data::StringColumn& cells, const std::string& file, Gathered* out) {
  const data::TypedColumn typed = data::typed_csv_column(cells);
  out->type = parquet_type(typed.values, file, cells.name);
  out->values.clear();
  out->values.reserve(static_cast<size_t>(cells.size()));
  for (int64_t r = 0; r < cells.size(); ++r) out->values.push_back(parquet_value(typed.values, r));
}

std::string cate_text(const AttrValue& v, AttrType type) {
  if (v.is_null) return "";
  if (type == AttrType::kBool) return v.i ? "true" : "false";
  if (type == AttrType::kFloat || type == AttrType::kDouble) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v.d);
    return std::string(buf, r.ptr);
  }
  return python_str(v, type, "");
}

std::ofstream open_text(const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw IoError(fmt::format("tdm_init_tree: cannot write {}", path));
  return f;
}

void close_text(std::ofstream& f, const std::string& path) {
  f.close();
  if (!f) throw IoError(fmt::format("tdm_init_tree: writing {} failed", path));
}

// "<level>,<id>[,<attrs>][,<raw attrs>]" without the level.
std::string node_features(const Tree& tree, const TreeNode& node, const std::string& d) {
  std::string out = tree.id_of(node);
  if (!node.attrs.empty()) {
    out += d;
    for (size_t c = 0; c < node.attrs.size(); ++c) {
      if (c > 0) out += d;
      out += python_str(node.attrs[c], tree.attr_columns[c].type, "");
    }
  }
  if (!node.raw_attrs.empty()) {
    out += d;
    for (size_t c = 0; c < node.raw_attrs.size(); ++c) {
      if (c > 0) out += d;
      out += python_str(node.raw_attrs[c], tree.raw_attr_columns[c].type, "0");
    }
  }
  return out;
}

parquet::PhysicalType writer_type(AttrType t) {
  switch (t) {
    case AttrType::kInt32: return parquet::PhysicalType::kInt32;
    case AttrType::kInt64: return parquet::PhysicalType::kInt64;
    case AttrType::kFloat: return parquet::PhysicalType::kFloat;
    case AttrType::kDouble: return parquet::PhysicalType::kDouble;
    case AttrType::kBool: return parquet::PhysicalType::kBoolean;
    case AttrType::kString: return parquet::PhysicalType::kByteArray;
  }
  return parquet::PhysicalType::kByteArray;
}

void append_value(const AttrValue& v, AttrType t, parquet::ColumnBuilder* b) {
  if (v.is_null) {
    b->append_null();
    return;
  }
  switch (t) {
    case AttrType::kInt32: b->append<int32_t>(static_cast<int32_t>(v.i)); break;
    case AttrType::kInt64: b->append<int64_t>(v.i); break;
    case AttrType::kFloat: b->append<float>(static_cast<float>(v.d)); break;
    case AttrType::kDouble: b->append<double>(v.d); break;
    case AttrType::kBool: b->append(v.i != 0); break;
    case AttrType::kString: b->append_string(v.s); break;
  }
}

}  // namespace

std::vector<std::string> split_field_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string name = trim(list.substr(start, end - start));
    if (!name.empty()) out.push_back(std::move(name));
    start = end + 1;
  }
  return out;
}

namespace {

// An embedding cell as text: numbers separated by ',' (or blanks), optionally in [ ] (TorchEasyRec
// eval()s a string column of Python lists).
bool parse_embedding_text(std::string_view s, std::vector<float>* out) {
  out->clear();
  while (!s.empty() && (s.front() == ' ' || s.front() == '[')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == ']')) s.remove_suffix(1);
  while (!s.empty()) {
    size_t end = s.find_first_of(", ");
    std::string_view tok = s.substr(0, end);
    s = end == std::string_view::npos ? std::string_view() : s.substr(end + 1);
    if (tok.empty()) continue;
    double v = 0;
    if (!data::parse_csv_double(tok, &v)) return false;
    out->push_back(static_cast<float>(v));
  }
  return !out->empty();
}

}  // namespace

TreeIds tree_ids_from_environment() {
  return data::use_hash_node_id_from_env() ? TreeIds::kText : TreeIds::kInteger;
}

ItemTable read_item_table(const InitTreeOptions& o, const std::string& embedding_field) {
  if (o.item_input_path.rfind("odps://", 0) == 0) {
    throw NotSupportedError("tdm_init_tree --item_input_path odps:// (MaxCompute tables)");
  }
  const bool csv = ends_with(o.item_input_path, ".csv");
  if (!csv && !ends_with(o.item_input_path, ".parquet")) {
    throw UsageError(fmt::format("--item_input_path {}: name .csv or .parquet files (TorchEasyRec picks the reader from "
                                 "the suffix)",
                                 o.item_input_path));
  }
  if (o.item_id_field.empty()) throw UsageError("--item_id_field is required");
  if (o.cate_id_field.empty() && embedding_field.empty()) throw UsageError("--cate_id_field is required");
  const std::vector<std::string> attrs = split_field_list(o.attr_fields);
  const std::vector<std::string> raws = split_field_list(o.raw_attr_fields);
  if (std::find(attrs.begin(), attrs.end(), o.item_id_field) != attrs.end()) {
    throw UsageError(fmt::format("--attr_fields lists the item id field {}; the node table holds the id already — "
                                 "remove it",
                                 o.item_id_field));
  }
  std::vector<std::string> columns;
  auto add = [&](const std::string& c) {
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  };
  add(o.item_id_field);
  if (!o.cate_id_field.empty()) add(o.cate_id_field);
  if (!embedding_field.empty()) add(embedding_field);
  for (const auto& c : attrs) add(c);
  for (const auto& c : raws) add(c);

  protos::DataConfig dc;
  dc.set_dataset_type(csv ? protos::CsvDataset : protos::ParquetDataset);
  dc.set_with_header(csv);
  dc.set_num_workers(1);
  data::BatchOptions batch;
  batch.batch_size = 4096;
  data::DatasetSources sources =
      data::make_dataset_sources(dc, o.item_input_path, columns, batch, nullptr, 0, 1, /*log_worker_changes=*/false);

  std::vector<Gathered> gathered(columns.size());
  std::vector<data::StringColumn> text(columns.size());  // CSV: each column's cells
  std::vector<RowWhere> where;
  std::vector<std::string> files;
  std::string origin_unit = csv ? "line" : "row";
  std::unordered_map<std::string, int32_t> file_index;
  for (size_t c = 0; c < columns.size(); ++c) gathered[c].name = columns[c];
  bool typed_known = false;
  // The embedding column (cluster_tree): one vector per row, checked below.
  std::vector<std::vector<float>> embeddings;
  std::vector<std::string> embedding_errors;  // per row: "" or why it is not a vector
  auto add_embedding_text = [&](std::string_view cell) {
    std::vector<float> v;
    embedding_errors.push_back(parse_embedding_text(cell, &v) ? ""
                                                              : fmt::format("'{}' is not a list of numbers", cell));
    embeddings.push_back(std::move(v));
  };
  while (auto b = sources.sources.at(0)->next()) {
    const data::RecordBatch& rb = b->records;
    std::vector<int32_t> local(rb.files.size());
    for (size_t f = 0; f < rb.files.size(); ++f) {
      auto [it, fresh] = file_index.emplace(rb.files[f], static_cast<int32_t>(files.size()));
      if (fresh) files.push_back(rb.files[f]);
      local[f] = it->second;
    }
    for (int64_t r = 0; r < rb.num_rows(); ++r) {
      where.push_back({local[static_cast<size_t>(rb.origins[r].file_index)], rb.origins[r].line});
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      if (!embedding_field.empty() && columns[c] == embedding_field) {
        if (csv) {
          const data::StringColumn& col = rb.columns.at(static_cast<size_t>(rb.column_index(columns[c])));
          for (int64_t r = 0; r < rb.num_rows(); ++r) add_embedding_text(col.cell(r));
          continue;
        }
        const data::TypedColumn* col = rb.typed_column(columns[c]);
        const parquet::ColumnData& v = col->values;
        if (col->list_depth() == 0 && v.type() == parquet::PhysicalType::kByteArray) {
          for (int64_t r = 0; r < rb.num_rows(); ++r) add_embedding_text(v.is_null(r) ? "" : v.bytes(r));
          continue;
        }
        if (col->list_depth() != 1 ||
            (v.type() != parquet::PhysicalType::kFloat && v.type() != parquet::PhysicalType::kDouble)) {
          throw DataError(fmt::format("{} column {}: the embedding must be a list<float> / list<double> column (as "
                                      "predict writes item_emb) or text of numbers; check --embedding_field",
                                      rb.num_rows() > 0 ? rb.describe_row(0) : o.item_input_path, columns[c]));
        }
        for (int64_t r = 0; r < rb.num_rows(); ++r) {
          const auto [begin, end] = v.row_slots(r);
          std::vector<float> e;
          std::string err = begin == end ? "the embedding is empty" : "";
          for (int64_t k = begin; k < end; ++k) {
            if (v.is_null(k)) err = "the embedding has a null value";
            e.push_back(v.type() == parquet::PhysicalType::kFloat ? v.data<float>()[k]
                                                                   : static_cast<float>(v.data<double>()[k]));
          }
          embedding_errors.push_back(err);
          embeddings.push_back(std::move(e));
        }
        continue;
      }
      if (csv) {
        const int ci = rb.column_index(columns[c]);
        const data::StringColumn& col = rb.columns.at(static_cast<size_t>(ci));
        for (int64_t r = 0; r < rb.num_rows(); ++r) text[c].append(col.cell(r));
        continue;
      }
      const data::TypedColumn* col = rb.typed_column(columns[c]);
      const std::string file = rb.num_rows() > 0 ? rb.describe_row(0) : o.item_input_path;
      if (col->list_depth() > 0) {
        throw DataError(fmt::format("{} column {}: lists and maps are not supported by tdm_init_tree; use scalar "
                                    "columns",
                                    file, columns[c]));
      }
      const AttrType t = parquet_type(col->values, file, columns[c]);
      if (typed_known && t != gathered[c].type) {
        throw DataError(fmt::format("{} column {}: type {} differs from the {} of earlier files", file, columns[c],
                                    attr_type_name(t), attr_type_name(gathered[c].type)));
      }
      gathered[c].type = t;
      for (int64_t r = 0; r < rb.num_rows(); ++r) gathered[c].values.push_back(parquet_value(col->values, r));
    }
    typed_known = true;
  }
  if (csv) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (!embedding_field.empty() && columns[c] == embedding_field) continue;
      text[c].name = columns[c];
      infer_csv_column(text[c], o.item_input_path, &gathered[c]);
    }
  }
  auto describe = [&](size_t row, const std::string& column) {
    const RowWhere& w = where[row];
    return fmt::format("{} {} {} column {}", files[static_cast<size_t>(w.file)], origin_unit, w.line, column);
  };
  auto column_of = [&](const std::string& name) -> const Gathered& {
    return gathered[static_cast<size_t>(std::find(columns.begin(), columns.end(), name) - columns.begin())];
  };

  ItemTable out;
  for (const auto& c : attrs) out.attr_columns.push_back({c, column_of(c).type});
  for (const auto& c : raws) out.raw_attr_columns.push_back({c, column_of(c).type});
  const Gathered& ids = column_of(o.item_id_field);
  const Gathered* cates = o.cate_id_field.empty() ? nullptr : &column_of(o.cate_id_field);
  const bool text_ids = o.ids == TreeIds::kText;
  std::unordered_map<int64_t, size_t> seen;
  std::unordered_map<std::string, size_t> seen_text;
  out.items.reserve(where.size());
  for (size_t r = 0; r < where.size(); ++r) {
    const AttrValue& v = ids.values[r];
    TreeItem item;
    if (v.is_null || (text_ids && ids.type == AttrType::kString && v.s.empty())) {
      throw DataError(fmt::format("{}: the item id is empty; every item needs {} id", describe(r, o.item_id_field),
                                  text_ids ? "an" : "an integer"));
    }
    if (text_ids) {
      if (ids.type == AttrType::kString) {
        item.text_id = v.s;
      } else if (ids.type == AttrType::kInt32 || ids.type == AttrType::kInt64) {
        item.text_id = std::to_string(v.i);
      } else {
        throw DataError(fmt::format("{}: the item id column is {}; with USE_HASH_NODE_ID=1 ids are strings or "
                                    "integers",
                                    describe(r, o.item_id_field), attr_type_name(ids.type)));
      }
      auto [it, fresh] = seen_text.emplace(item.text_id, r);
      if (!fresh) {
        throw DataError(fmt::format("{}: item id '{}' repeats the id of {}; item ids must be unique",
                                    describe(r, o.item_id_field), item.text_id, describe(it->second, o.item_id_field)));
      }
    } else if (ids.type == AttrType::kString) {
      if (!data::parse_csv_int64(v.s, &item.id)) {
        throw DataError(fmt::format("{}: item id '{}' is not an integer (string ids need USE_HASH_NODE_ID=1, not "
                                    "supported yet)",
                                    describe(r, o.item_id_field), v.s));
      }
    } else if (ids.type == AttrType::kFloat || ids.type == AttrType::kDouble) {
      if (v.d != std::floor(v.d) || std::abs(v.d) > 9.2e18) {
        throw DataError(fmt::format("{}: item id {} is not an integer", describe(r, o.item_id_field),
                                    python_float_repr(v.d)));
      }
      item.id = static_cast<int64_t>(v.d);
    } else {
      item.id = v.i;
    }
    if (!text_ids) {
      auto [it, fresh] = seen.emplace(item.id, r);
      if (!fresh) {
        throw DataError(fmt::format("{}: item id {} repeats the id of {}; item ids must be unique",
                                    describe(r, o.item_id_field), item.id, describe(it->second, o.item_id_field)));
      }
    }
    if (cates != nullptr) item.cate = cate_text(cates->values[r], cates->type);
    if (!embedding_field.empty()) {
      if (!embedding_errors[r].empty()) throw DataError(fmt::format("{}: {}", describe(r, embedding_field), embedding_errors[r]));
      std::vector<float>& e = embeddings[r];
      if (out.embedding_dim == 0) out.embedding_dim = static_cast<int64_t>(e.size());
      if (static_cast<int64_t>(e.size()) != out.embedding_dim) {
        throw DataError(fmt::format("{}: the embedding has {} values, earlier rows {}; every item needs one width",
                                    describe(r, embedding_field), e.size(), out.embedding_dim));
      }
      out.embeddings.insert(out.embeddings.end(), e.begin(), e.end());
    }
    for (const auto& c : attrs) item.attrs.push_back(column_of(c).values[r]);
    for (const auto& c : raws) item.raw_attrs.push_back(column_of(c).values[r]);
    out.items.push_back(std::move(item));
  }
  if (out.items.empty()) throw DataError(fmt::format("{}: the item table has no rows", o.item_input_path));
  for (const AttrColumn& c : out.raw_attr_columns) {
    if (c.type == AttrType::kString || c.type == AttrType::kBool) {
      throw DataError(fmt::format("{} column {}: raw_attr_fields are averaged over a node's items and must be "
                                  "numbers, but the column is {}",
                                  o.item_input_path, c.name, attr_type_name(c.type)));
    }
  }
  return out;
}

void write_tree_tables(const Tree& tree, const std::string& dir, const std::string& item_id_field,
                       const std::string& d) {
  std::filesystem::create_directories(dir);
  const char* id_type = tree.ids == TreeIds::kText ? "string" : "int64";
  const std::string edge_header = fmt::format("src_id:{0}\tdst_id:{0}\tweight:float\n", id_type);
  {
    const std::string path = dir + "/node_table.txt";
    std::ofstream f = open_text(path);
    f << "id:" << id_type << "\tweight:float\tfeature:string\n";
    bool first = true;
    for (const auto& level : tree.levels) {
      for (int64_t i : level) {
        const TreeNode& node = tree.nodes[static_cast<size_t>(i)];
        const std::string features = node_features(tree, node, d);
        if (first) {
          f << "-1\t1.0\t-1" << d << features << '\n';
          first = false;
        }
        f << tree.id_of(node) << "\t1.0\t" << node.level << d << features << '\n';
      }
    }
    close_text(f, path);
  }
  {
    const std::string path = dir + "/edge_table.txt";
    std::ofstream f = open_text(path);
    f << edge_header;
    const int max_level = tree.num_levels() - 1;
    for (int64_t leaf : tree.levels.back()) {
      const TreeNode& node = tree.nodes[static_cast<size_t>(leaf)];
      int64_t up = node.parent;
      for (int i = 0; i + 1 < max_level && up >= 0; ++i) {
        const TreeNode& anc = tree.nodes[static_cast<size_t>(up)];
        f << tree.id_of(node) << '\t' << tree.id_of(anc) << "\t1.0\n";
        up = anc.parent;
      }
    }
    close_text(f, path);
  }
  {
    const std::string path = dir + "/predict_edge_table.txt";
    std::ofstream f = open_text(path);
    f << edge_header;
    f << "-1\t" << tree.id_of(tree.root()) << "\t1.0\n";
    for (const auto& level : tree.levels) {
      for (int64_t i : level) {
        const TreeNode& node = tree.nodes[static_cast<size_t>(i)];
        for (int64_t c : node.children) {
          f << tree.id_of(node) << '\t' << tree.id_of(tree.nodes[static_cast<size_t>(c)]) << "\t1.0\n";
        }
      }
    }
    close_text(f, path);
  }
  {
    std::filesystem::create_directories(dir + "/node_feature");
    std::vector<parquet::WriterField> fields;
    if (tree.ids == TreeIds::kText) {
      parquet::WriterField id{item_id_field, parquet::PhysicalType::kByteArray};
      id.string = true;
      fields.push_back(id);
    } else {
      fields.push_back({item_id_field, parquet::PhysicalType::kInt64});
    }
    std::vector<const AttrColumn*> cols;
    for (const auto& c : tree.attr_columns) cols.push_back(&c);
    for (const auto& c : tree.raw_attr_columns) cols.push_back(&c);
    for (const AttrColumn* c : cols) {
      parquet::WriterField field{c->name, writer_type(c->type)};
      field.string = c->type == AttrType::kString;
      fields.push_back(field);
    }
    parquet::WriterOptions options;
    data::write_parquet_file(dir + "/node_feature/part-0.parquet", fields, options, "tdm_init_tree",
                             [&](parquet::FileWriter& writer) {
                               std::vector<parquet::ColumnBuilder> builders;
                               for (size_t c = 0; c < fields.size(); ++c) {
                                 builders.emplace_back(writer.schema().column(static_cast<int>(c)));
                               }
                               for (const auto& level : tree.levels) {
                                 for (int64_t i : level) {
                                   const TreeNode& node = tree.nodes[static_cast<size_t>(i)];
                                   if (tree.ids == TreeIds::kText) {
                                     builders[0].append_string(node.text_id);
                                   } else {
                                     builders[0].append<int64_t>(node.id);
                                   }
                                   size_t c = 1;
                                   for (size_t a = 0; a < node.attrs.size(); ++a, ++c) {
                                     append_value(node.attrs[a], tree.attr_columns[a].type, &builders[c]);
                                   }
                                   for (size_t a = 0; a < node.raw_attrs.size(); ++a, ++c) {
                                     append_value(node.raw_attrs[a], tree.raw_attr_columns[a].type, &builders[c]);
                                   }
                                 }
                               }
                               parquet::Table table;
                               table.num_rows = static_cast<int64_t>(tree.nodes.size());
                               for (auto& b : builders) table.columns.push_back(b.finish());
                               writer.write(std::move(table));
                             });
  }
}

void write_serving_tree(const Tree& tree, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/serving_tree";
  std::ofstream f = open_text(path);
  f << tree.num_levels() << ' ' << tree.n_cluster << '\n';
  for (const auto& level : tree.levels) {
    for (int64_t i : level) {
      const TreeNode& node = tree.nodes[static_cast<size_t>(i)];
      f << node.code << ' ' << tree.id_of(node) << '\n';
    }
  }
  close_text(f, path);
}

Tree init_tree(const InitTreeOptions& o) {
  if (o.node_edge_output_file.empty()) throw UsageError("--node_edge_output_file is required");
  if (o.node_edge_output_file.rfind("odps://", 0) == 0) {
    throw NotSupportedError("tdm_init_tree --node_edge_output_file odps:// (MaxCompute tables)");
  }
  if (o.attr_delimiter.empty()) throw UsageError("--attr_delimiter is empty; leave it unset for ','");
  ItemTable table = read_item_table(o);
  const size_t num_items = table.items.size();
  Tree tree = build_tree(std::move(table.items), std::move(table.attr_columns), std::move(table.raw_attr_columns),
                         o.n_cluster, o.ids);
  log::info("tdm_init_tree: {} items, tree of {} levels, n_cluster {}, {} nodes", num_items, tree.num_levels(),
           o.n_cluster, tree.nodes.size());
  write_tree_tables(tree, o.node_edge_output_file, o.item_id_field, o.attr_delimiter);
  if (!o.tree_output_dir.empty()) write_serving_tree(tree, o.tree_output_dir);
  return tree;
}

}  // namespace tzrec::tdm
