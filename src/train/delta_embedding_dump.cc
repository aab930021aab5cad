#include "train/delta_embedding_dump.h"

#include <chrono>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/logging.h"
#include "data/file_output.h"
#include "embedding/quint8_rowwise_f16.h"

namespace tzrec::train {
namespace {

constexpr const char* kField = "train_config.delta_embedding_dump_config";
constexpr const char* kSource = "model_delta_tracker";

// TorchEasyRec's FQN of a table from this engine's state-dict name of its weight: the name in its
// TrainWrapper ("model." first), without ".weight"; a dynamic table's collection is TorchEasyRec's
// plain one there (its dynamic tables are a sharding of the plain EmbeddingBagCollection /
// EmbeddingCollection).
std::string torcheasyrec_table_fqn(std::string name) {
  const std::string weight = ".weight";
  if (name.size() > weight.size() && name.compare(name.size() - weight.size(), weight.size(), weight) == 0) {
    name.resize(name.size() - weight.size());
  }
  name = "model." + name;
  const std::string dynamic_ebc = "dynamicemb_ebc._embedding_module.";
  if (size_t at = name.find(dynamic_ebc); at != std::string::npos) name.replace(at, dynamic_ebc.size(), "ebc.");
  const std::string dynamic_ec = "dynamicemb_ec_dict.";
  if (size_t at = name.find(dynamic_ec); at != std::string::npos) {
    name.replace(at, dynamic_ec.size(), "ec_dict.");
    const std::string inner = "._embedding_module.";
    if (size_t in = name.find(inner, at); in != std::string::npos) name.replace(in, inner.size(), ".");
  }
  return name;
}

// The features reading `table`, in bag order, joined by "," (TorchRec's table feature_names).
std::string feature_names_of(const std::vector<embedding::BagConfig>& bags, const std::string& table) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const embedding::BagConfig& b : bags) {
    if (b.table_name == table && seen.insert(b.feature_name).second) names.push_back(b.feature_name);
  }
  return fmt::format("{}", fmt::join(names, ","));
}

// One table of a dump, as columns.
struct Chunk {
  const std::string* feature_name;
  const std::string* fqn;
  torch::Tensor keys;    // [K] int64
  torch::Tensor values;  // [K, dim] float32, or [K, dim + 4] uint8
};

}  // namespace

void check_delta_embedding_dump_tables(const protos::EasyRecConfig& config, const embedding::EmbeddingGroupSet& group) {
  const auto& train = config.train_config();
  if (!train.has_delta_embedding_dump_config()) return;
  if (train.delta_embedding_dump_config().quant_type() != protos::DELTA_EMBEDDING_QUANT_INT8) return;
  for (const auto& c : group.collections()) {
    for (const embedding::TableConfig& t : c.ebc->table_configs()) {
      if (t.embedding_dim % 2 != 0) {
        throw ConfigError(fmt::format(
            "{}.quant_type: DELTA_EMBEDDING_QUANT_INT8 stores a row as embedding_dim + 4 bytes (QUint8RowwiseF16), "
            "which must be even, but embedding table '{}' has embedding_dim {}; make it even or use "
            "DELTA_EMBEDDING_QUANT_NONE",
            kField, c.prefix + t.name, t.embedding_dim));
      }
    }
  }
}

DeltaEmbeddingDumper::DeltaEmbeddingDumper(const protos::EasyRecConfig& config, embedding::EmbeddingGroupSet& group,
                                           int rank, int world_size)
    : rank_(rank),
      world_size_(world_size),
      quantize_(config.train_config().delta_embedding_dump_config().quant_type() == protos::DELTA_EMBEDDING_QUANT_INT8),
      schedule_(config.train_config().delta_embedding_dump_config()) {
  const auto& c = config.train_config().delta_embedding_dump_config();
  check_delta_embedding_dump_tables(config, group);
  output_dir_ = c.output_dir().empty() ? (std::filesystem::path(config.model_dir()) / "delta_embedding_dump").string()
                                       : c.output_dir();
  file_prefix_ = c.file_prefix().empty() ? "delta_embedding" : c.file_prefix();
  std::error_code ec;
  std::filesystem::create_directories(output_dir_, ec);
  if (ec) {
    throw IoError(fmt::format("{}.output_dir: cannot create '{}': {}", kField, output_dir_, ec.message()));
  }

  // One entry per table: its kind, TorchEasyRec's FQN, its features and its index in the collection.
  auto add = [&](Kind kind, const std::string& prefix, const std::string& name, size_t t,
                 const std::vector<embedding::BagConfig>& bags) -> Table& {
    tables_.push_back(Table{kind, torcheasyrec_table_fqn(group.parameter_name_of(prefix + name)),
                            feature_names_of(bags, name), t});
    return tables_.back();
  };
  for (auto coll : group.collections()) {
    if (!coll.remapping.empty()) continue;  // zero-collision hashed and dynamic tables: below, by raw id
    const auto& tables = coll.ebc->table_configs();
    if (tables.empty()) continue;
    coll.ebc->track_touched_rows();
    for (size_t t = 0; t < tables.size(); ++t) {
      add(Kind::kPlain, coll.prefix, tables[t].name, t, coll.ebc->bag_configs()).ebc = coll.ebc;
    }
  }
  for (auto [prefix, zch] : group.zch_collections()) {
    zch->track_touched_ids();
    const auto& tables = zch->zch_table_configs();
    for (size_t t = 0; t < tables.size(); ++t) {
      add(Kind::kZch, prefix, tables[t].table.name, t, zch->bag_configs()).zch = zch;
    }
  }
  for (auto [prefix, dynamic] : group.dynamic_collections()) {
    dynamic->track_touched_ids();
    const auto& tables = dynamic->dynamic_table_configs();
    for (size_t t = 0; t < tables.size(); ++t) {
      add(Kind::kDynamic, prefix, tables[t].table.name, t, dynamic->bag_configs()).dynamic = dynamic;
    }
  }
  if (rank_ == 0) {
    log::info("delta embedding dump: the rows of {} embedding table(s) every {} to {}, {}", tables_.size(),
              c.has_dump_interval_minutes() ? fmt::format("{} minutes", c.dump_interval_minutes())
                                            : fmt::format("{} steps", c.dump_interval_steps()),
              output_dir_, protos::DeltaEmbeddingQuantType_Name(c.quant_type()));
  }
}

void DeltaEmbeddingDumper::after_step(int64_t step) {
  if (schedule_.due_after(step)) dump(step);
}

void DeltaEmbeddingDumper::final_dump(int64_t step) {
  if (schedule_.final_due(step)) dump(step);
}

std::pair<torch::Tensor, torch::Tensor> DeltaEmbeddingDumper::take(Table& table) {
  switch (table.kind) {
    case Kind::kPlain: {
      torch::Tensor rows = table.ebc->take_touched_rows(table.index);
      return {rows, table.ebc->read_rows(table.index, rows)};
    }
    case Kind::kZch:
      return table.zch->take_touched(table.index);
    case Kind::kDynamic: {
      int64_t missing = 0;
      auto out = table.dynamic->take_touched(table.index, &missing);
      if (missing > 0) {
        log::warning("delta embedding dump: {} id(s) of dynamic table {} that training looked up are not in the "
                     "table (not admitted, or evicted since) and are left out",
                     missing, table.fqn);
      }
      return out;
    }
  }
  return {};
}

std::string DeltaEmbeddingDumper::path_of(int64_t step) const {
  const std::filesystem::path dir(output_dir_);
  if (world_size_ == 1) return (dir / fmt::format("{}_step_{}.parquet", file_prefix_, step)).string();
  return (dir / fmt::format("step_{}", step) /
          fmt::format("{}_step_{}_rank_{}_of_{}.parquet", file_prefix_, step, rank_, world_size_))
      .string();
}

std::string DeltaEmbeddingDumper::dump(int64_t step) {
  TORCH_CHECK(step > 0, "DeltaEmbeddingDumper::dump: step must be > 0");
  const auto start = std::chrono::steady_clock::now();
  torch::NoGradGuard no_grad;
  std::vector<Chunk> chunks;
  int64_t rows = 0;
  for (Table& table : tables_) {
    auto [keys, values] = take(table);
    if (keys.numel() == 0) continue;
    if (quantize_) {
      // A diverged row is named by its key (the quantizer only knows its place in this dump).
      const torch::Tensor finite = torch::isfinite(values).all(1);
      if (!finite.all().item<bool>()) {
        const int64_t at = finite.logical_not().nonzero()[0][0].item<int64_t>();
        throw DataError(fmt::format("delta embedding dump at step {}: row {} of table '{}' (feature '{}') holds a value "
                                    "that is not finite, which INT8 (QUint8RowwiseF16) cannot encode; the training "
                                    "diverged, or set {}.quant_type to DELTA_EMBEDDING_QUANT_NONE",
                                    step, keys[at].item<int64_t>(), table.fqn, table.feature_name, kField));
      }
      values = embedding::quantize_quint8_rowwise_f16(
          values, fmt::format("delta embedding dump INT8 quantization of feature '{}' (table '{}'); set {}.quant_type "
                              "to DELTA_EMBEDDING_QUANT_NONE to dump float32 rows",
                              table.feature_name, table.fqn, kField));
    }
    rows += keys.numel();
    chunks.push_back({&table.feature_name, &table.fqn, keys, values.contiguous()});
  }
  if (rows == 0 && world_size_ == 1) {
    log::debug("delta embedding dump: no touched rows at step {}", step);
    return "";
  }
  const std::string path = path_of(step);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  using parquet::PhysicalType;
  std::vector<parquet::WriterField> fields = {
      {"global_step", PhysicalType::kInt64},
      {"rank", PhysicalType::kInt32},
      {"world_size", PhysicalType::kInt32},
      {"feature_name", PhysicalType::kByteArray},
      {"table_fqn", PhysicalType::kByteArray},
      {"key_id", PhysicalType::kInt64},
      {"embedding", quantize_ ? PhysicalType::kInt32 : PhysicalType::kFloat, true, 1},
      {"source", PhysicalType::kByteArray},
  };
  if (quantize_) {
    fields[6].integer_bits = 8;
    fields[6].integer_signed = false;
  }
  data::write_parquet_file(path, std::move(fields), {}, "delta embedding dump", [&](parquet::FileWriter& writer) {
    for (const Chunk& chunk : chunks) {
      const parquet::Schema& schema = writer.schema();
      std::vector<parquet::ColumnBuilder> b;
      for (int c = 0; c < 8; ++c) b.emplace_back(schema.column(c));
      const int64_t k = chunk.keys.numel(), width = chunk.values.size(1);
      const int64_t* keys = chunk.keys.data_ptr<int64_t>();
      for (int64_t i = 0; i < k; ++i) {
        b[0].append<int64_t>(step);
        b[1].append<int32_t>(rank_);
        b[2].append<int32_t>(world_size_);
        b[3].append_string(*chunk.feature_name);
        b[4].append_string(*chunk.fqn);
        b[5].append<int64_t>(keys[i]);
        b[6].begin_list();
        if (quantize_) {
          const uint8_t* v = chunk.values.data_ptr<uint8_t>() + i * width;
          for (int64_t j = 0; j < width; ++j) b[6].append<int32_t>(v[j]);
        } else {
          const float* v = chunk.values.data_ptr<float>() + i * width;
          for (int64_t j = 0; j < width; ++j) b[6].append<float>(v[j]);
        }
        b[6].end_list();
        b[7].append_string(kSource);
      }
      parquet::Table table;
      table.num_rows = k;
      for (auto& builder : b) table.columns.push_back(builder.finish());
      writer.write(std::move(table));
    }
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank_ == 0) {
    log::info("delta embedding dump: {} row(s) at step {} to {} in {:.2f} s", rows, step, path, seconds);
  } else {
    log::debug("delta embedding dump: {} row(s) at step {} to {} in {:.2f} s", rows, step, path, seconds);
  }
  return path;
}

}  // namespace tzrec::train
