#include "datagen/sampler_tables.h"

#include <fstream>
#include <set>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "base/error.h"
#include "datagen/feature_view.h"
#include "data/file_output.h"
#include "datagen/random.h"
#include "parquet/writer.h"
#include "tdm/tree_io.h"

namespace tzrec::datagen {

namespace pb = google::protobuf;

namespace {

constexpr uint64_t kSaltHardNegative = 0x4a2d0e6e5a000001ULL;
constexpr int kHardNegativesPerUser = 2;

class TableFile {
 public:
  TableFile(const std::string& path, const std::string& header) : path_(path), out_(path, std::ios::trunc) {
    if (!out_) throw IoError(fmt::format("gen_data: cannot write sampler table {}", path));
    out_ << header << '\n';
  }
  std::ofstream& out() { return out_; }
  void close() {
    out_.close();
    if (!out_) throw IoError(fmt::format("gen_data: cannot write sampler table {}", path_));
  }

 private:
  std::string path_;
  std::ofstream out_;
};

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

pb::Message* sampler_message(protos::EasyRecConfig* config) {
  auto* data = config->mutable_data_config();
  const auto* oneof = data->GetDescriptor()->FindOneofByName("sampler");
  const auto* fd = oneof == nullptr ? nullptr : data->GetReflection()->GetOneofFieldDescriptor(*data, oneof);
  return fd == nullptr ? nullptr : data->GetReflection()->MutableMessage(data, fd);
}

void set_string(pb::Message* m, const std::string& field, const std::string& value) {
  const auto* fd = m->GetDescriptor()->FindFieldByName(field);
  if (fd != nullptr && !value.empty()) m->GetReflection()->SetString(m, fd, value);
}

// One row per item: each attr column's value for the item under the attr field's own name
// (int64 when the attribute is integer, else a string column of its text).
void write_item_rows(const RowGenerator& rows, const SamplerInfo& s, const std::vector<int>& attr_columns,
                     const std::string& path) {
  std::vector<parquet::WriterField> fields;
  std::vector<bool> integer;
  Cell cell;
  for (size_t a = 0; a < attr_columns.size(); ++a) {
    parquet::WriterField f;
    f.name = s.attr_fields[a].substr(s.sequence_prefix.size());
    integer.push_back(rows.num_items() > 0 && (rows.item_attribute(0, attr_columns[a], &cell), cell.ints.size() == 1));
    f.type = integer.back() ? parquet::PhysicalType::kInt64 : parquet::PhysicalType::kByteArray;
    fields.push_back(f);
  }
  parquet::WriterOptions options;
  data::write_parquet_file(path, fields, options, "gen_data", [&](parquet::FileWriter& writer) {
    std::vector<parquet::ColumnBuilder> builders;
    for (size_t c = 0; c < fields.size(); ++c) builders.emplace_back(writer.schema().column(static_cast<int>(c)));
    for (int64_t k = 0; k < rows.num_items(); ++k) {
      for (size_t a = 0; a < attr_columns.size(); ++a) {
        rows.item_attribute(k, attr_columns[a], &cell);
        if (integer[a] && cell.ints.size() == 1) {
          builders[a].append<int64_t>(cell.ints[0]);
        } else if (integer[a]) {
          builders[a].append_null();
        } else {
          builders[a].append_string(ValueGenerator::cell_text(cell, s.multival_sep));
        }
      }
    }
    parquet::Table table;
    table.num_rows = rows.num_items();
    for (auto& b : builders) table.columns.push_back(b.finish());
    writer.write(std::move(table));
  });
}

}  // namespace

std::vector<std::string> SamplerTables::paths() const {
  std::vector<std::string> out;
  for (const auto* p : {&tdm_item_table_path, &item_path, &edge_path, &predict_edge_path, &user_path, &pos_edge_path,
                        &hard_neg_edge_path, &item_rows_path}) {
    if (!p->empty()) out.push_back(*p);
  }
  return out;
}

SamplerTables write_sampler_tables(const RowGenerator& rows, const std::string& dir,
                                   const std::vector<std::pair<int64_t, int64_t>>& train_pairs,
                                   uint64_t seed) {
  SamplerTables tables;
  const ColumnPlan& plan = rows.plan();
  const SamplerInfo& s = plan.sampler;
  if (s.type.empty()) return tables;
  const std::string& fd = s.field_delimiter;
  auto header = [&](std::vector<std::string> fields) { return join(fields, fd); };
  const std::string delim = s.attr_delimiter.empty() ? ":" : s.attr_delimiter;
  auto path_of = [&](const std::string& name) { return (dir + "/") + name; };

  if (s.type == "tdm_sampler") {
    // The item table, then the tree built from it as tzrec tdm_init_tree builds it.
    tables.tdm_item_table_path = path_of("tdm_items.csv");
    std::vector<int> attr_columns;
    for (const auto& name : s.attr_fields) attr_columns.push_back(plan.index_of(name));
    {
      std::ofstream out(tables.tdm_item_table_path, std::ios::trunc);
      out << join(std::vector<std::string>{s.item_id_field}, ",");
      for (const auto& name : s.attr_fields) out << ',' << name;
      out << '\n';
      Cell cell;
      for (int64_t k = 0; k < rows.num_items(); ++k) {
        out << k;
        for (int c : attr_columns) {
          rows.item_attribute(k, c, &cell);
          out << ',' << ValueGenerator::cell_text(cell, s.multival_sep);
        }
        out << '\n';
      }
      out.close();
      if (!out) throw IoError(fmt::format("gen_data: cannot write {}", tables.tdm_item_table_path));
    }
    tdm::InitTreeOptions o;
    o.item_input_path = tables.tdm_item_table_path;
    o.item_id_field = s.item_id_field;
    o.cate_id_field = s.attr_fields.empty() ? s.item_id_field : s.attr_fields.front();
    o.attr_fields = join(s.attr_fields, ",");
    o.attr_delimiter = s.attr_delimiter.empty() ? ":" : s.attr_delimiter;
    o.node_edge_output_file = path_of("tdm_tree");
    o.ids = tdm::tree_ids_from_environment();
    const tdm::Tree tree = tdm::init_tree(o);
    tables.item_path = path_of("tdm_tree/node_table.txt");
    tables.edge_path = path_of("tdm_tree/edge_table.txt");
    tables.predict_edge_path = path_of("tdm_tree/predict_edge_table.txt");
    tables.tdm_levels = tree.num_levels();
    return tables;
  }
  // Items.
  tables.item_path = path_of("sampler_item.txt");
  {
    std::vector<int> attr_columns;
    for (const auto& name : s.attr_fields) attr_columns.push_back(plan.index_of(name));
    TableFile items(tables.item_path,
                    attr_columns.empty() ? header({"id:int64", "weight:float"})
                                         : header({"id:int64", "weight:float", "attrs:string"}));
    Cell cell;
    for (int64_t k = 0; k < rows.num_items(); ++k) {
      items.out() << k << fd << 1;
      if (!attr_columns.empty()) {
        std::vector<std::string> attrs;
        for (int c : attr_columns) {
          rows.item_attribute(k, c, &cell);
          attrs.push_back(ValueGenerator::cell_text(cell, s.multival_sep));
        }
        items.out() << fd << join(attrs, delim);
      }
      items.out() << '\n';
    }
    items.close();
    if (!s.sequence_prefix.empty() && !attr_columns.empty()) {
      tables.item_rows_path = path_of("items.parquet");
      write_item_rows(rows, s, attr_columns, tables.item_rows_path);
    }
  }
  if (s.type == "negative_sampler") return tables;

  // Users.
  tables.user_path = path_of("sampler_user.txt");
  {
    TableFile users(tables.user_path, header({"id:int64", "weight:float"}));
    for (int64_t u = 0; u < rows.num_users(); ++u) users.out() << u << fd << "1\n";
    users.close();
  }
  if (s.type == "negative_sampler_v2" || s.type == "hard_negative_sampler_v2") {
    tables.pos_edge_path = path_of("sampler_pos_edge.txt");
    TableFile edges(tables.pos_edge_path, header({"userid:int64", "itemid:int64", "weight:float"}));
    std::set<std::pair<int64_t, int64_t>> seen;
    for (const auto& pair : train_pairs) {
      if (pair.first < 0 || pair.second < 0 || !seen.insert(pair).second) continue;
      edges.out() << pair.first << fd << pair.second << fd << "1\n";
    }
    edges.close();
  }
  if (s.type == "hard_negative_sampler" || s.type == "hard_negative_sampler_v2") {
    tables.hard_neg_edge_path = path_of("sampler_hard_neg_edge.txt");
    TableFile edges(tables.hard_neg_edge_path, header({"userid:int64", "itemid:int64", "weight:float"}));
    for (int64_t u = 0; u < rows.num_users(); ++u) {
      Rng rng(mix(seed, kSaltHardNegative, static_cast<uint64_t>(u)));
      for (int k = 0; k < kHardNegativesPerUser && rows.num_items() > 0; ++k) {
        edges.out() << u << fd << rng.uniform_int(0, rows.num_items() - 1) << fd << "1\n";
      }
    }
    edges.close();
  }
  return tables;
}

void point_sampler_at(const SamplerTables& tables, protos::EasyRecConfig* config) {
  pb::Message* m = sampler_message(config);
  if (m == nullptr) return;
  if (m->GetDescriptor()->name() == "NegativeSampler") {
    set_string(m, "input_path", tables.item_path);
    return;
  }
  set_string(m, "item_input_path", tables.item_path);
  if (m->GetDescriptor()->name() == "TDMSampler") {
    auto* t = static_cast<protos::TDMSampler*>(m);
    t->set_edge_input_path(tables.edge_path);
    t->set_predict_edge_input_path(tables.predict_edge_path);
    if (tables.tdm_levels > 0 && t->layer_num_sample_size() != tables.tdm_levels) {
      std::vector<uint32_t> n(t->layer_num_sample().begin(), t->layer_num_sample().end());
      const uint32_t last = n.empty() ? 1 : n.back();
      n.resize(static_cast<size_t>(tables.tdm_levels), last);
      n[0] = 0;
      t->clear_layer_num_sample();
      for (uint32_t x : n) t->add_layer_num_sample(x);
    }
    return;
  }
  set_string(m, "user_input_path", tables.user_path);
  set_string(m, "pos_edge_input_path", tables.pos_edge_path);
  set_string(m, "hard_neg_edge_input_path", tables.hard_neg_edge_path);
}

}  // namespace tzrec::datagen
