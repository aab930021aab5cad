#include "export/tdm_retrieval.h"

#include <algorithm>
#include <filesystem>
#include <type_traits>
#include <unordered_set>

#include <fmt/format.h>
#include <torch/torch.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/text.h"
#include "data/prediction_writer.h"
#include "data/reserved_columns.h"
#include "data/sampler_table.h"
#include "data/typed_rows.h"
#include "dist/process_group.h"
#include "export/exported_model.h"
#include "export/predictor.h"
#include "feature/batch_loader.h"
#include "feature/column_cells.h"
#include "feature/feature_parser.h"
#include "models/rank/tdm.h"
#include "parquet/writer.h"
#include "tdm/beam_search.h"
#include "train/run_config.h"

namespace fs = std::filesystem;

namespace tzrec::exporting {
namespace {

constexpr const char* kRecallIdsColumn = "recall_ids";

// "recall_ids": list<int64>, or list<string> for text ids (a nullable list of required
// elements), one list per row.
template <typename Id>
data::TypedColumn recall_ids_column(const std::vector<std::vector<Id>>& ids) {
  constexpr bool kText = std::is_same_v<Id, std::string>;
  const parquet::Schema schema = parquet::writer_schema({parquet::WriterField{
      kRecallIdsColumn, kText ? parquet::PhysicalType::kByteArray : parquet::PhysicalType::kInt64, /*nullable=*/true,
      /*list_depth=*/1, /*element_nullable=*/false, /*string=*/kText}});
  parquet::ColumnBuilder builder(schema.column(0));
  for (const auto& row : ids) {
    builder.begin_list();
    for (const Id& id : row) {
      if constexpr (kText) {
        builder.append_string(id);
      } else {
        builder.append(id);
      }
    }
    builder.end_list();
  }
  data::TypedColumn out;
  out.name = kRecallIdsColumn;
  out.values = builder.finish();
  return out;
}

// The retrieved ids of each row and how many rows found their ground truth: node keys (integer
// ids) or the nodes' id attr (hashed ids: the ids as the tree's tables write them), compared with
// the row's item id.
template <typename Id>
data::TypedColumn retrieved_ids(const tdm::PredictTree& tree, const std::vector<std::vector<int64_t>>& found,
                                const std::vector<Id>& truth, int64_t* hits) {
  std::vector<std::vector<Id>> ids(found.size());
  for (size_t b = 0; b < found.size(); ++b) {
    for (int64_t n : found[b]) {
      if constexpr (std::is_same_v<Id, std::string>) {
        ids[b].emplace_back(tree.attr(n, 1));
      } else {
        ids[b].push_back(tree.key(n));
      }
    }
    if (std::find(ids[b].begin(), ids[b].end(), truth[b]) != ids[b].end()) ++*hits;
  }
  return recall_ids_column(ids);
}

// The rows to score: for candidate j, the user row owner[j] with the item columns set to node
// node[j]'s attributes (see the header). `attr_of` maps a column name to its attr index or -1.
data::RecordBatch candidate_rows(const data::RecordBatch& users, const std::vector<int64_t>& owner,
                                 const std::vector<int64_t>& node, const tdm::PredictTree& tree) {
  const auto& attrs = tree.config().attr_fields;
  auto attr_index = [&](const std::string& name) -> int {
    for (size_t k = 1; k < attrs.size(); ++k) {
      if (attrs[k] == name) return static_cast<int>(k);
    }
    return -1;
  };
  data::RecordBatch out;
  out.files = users.files;
  out.origin_unit = users.origin_unit;
  for (int64_t o : owner) out.origins.push_back(users.origins[static_cast<size_t>(o)]);
  auto item_column = [&](const std::string& name, int k) {
    data::StringColumn column;
    column.name = name;
    for (int64_t s : node) column.append(tree.attr(s, static_cast<size_t>(k)));
    return column;
  };
  for (const data::StringColumn& c : users.columns) {
    if (const int k = attr_index(c.name); k >= 0) {
      out.columns.push_back(item_column(c.name, k));
      continue;
    }
    out.columns.push_back(data::take_rows(c, 0, owner));
  }
  for (const data::TypedColumn& c : users.typed_columns) {
    if (const int k = attr_index(c.name); k >= 0) {
      out.columns.push_back(item_column(c.name, k));
      continue;
    }
    out.typed_columns.push_back(data::take_rows(c, 0, owner));
  }
  return out;
}

}  // namespace

TdmRetrievalSummary tdm_retrieval(const TdmRetrievalOptions& options) {
  if (options.scripted_model_path.empty()) {
    throw UsageError("--scripted_model_path is required: the scorer package of a tdm export (export_dir/model)");
  }
  if (options.predict_input_path.empty()) throw UsageError("--predict_input_path is required");
  if (options.predict_output_path.empty()) throw UsageError("--predict_output_path is required");
  if (options.recall_num < 1) throw UsageError(fmt::format("--recall_num: {} is below 1", options.recall_num));
  if (options.n_cluster < 2) throw UsageError(fmt::format("--n_cluster: {} is below 2", options.n_cluster));
  check_debug_level(options.debug_level);
  if (options.debug_level > 0) {
    log::warning("--debug_level {}: tdm_retrieval writes no __features__ column (TorchEasyRec's retrieval tool "
                 "writes only the reserved columns and recall_ids); use `tzrec predict --debug_level 1` on the "
                 "scorer package to see the parsed features",
                 options.debug_level);
  }
  const fs::path dir(options.scripted_model_path);
  if (!fs::exists(dir / "model.safetensors") && fs::exists(dir / "model" / "model.safetensors")) {
    throw UsageError(fmt::format("--scripted_model_path {}: a tdm export holds the scorer in {}; pass that",
                                 options.scripted_model_path, (dir / "model").string()));
  }
  train::ConfigOverrides overrides;
  overrides.edit_config_json = options.edit_config_json;
  ExportedModel exported = load_exported_model(options.scripted_model_path, overrides);
  if (exported.config.model_config().model_case() != protos::ModelConfig::kTdm || !exported.tower.empty()) {
    throw UsageError(fmt::format("--scripted_model_path {}: not the scorer of a tdm model (it is {}); pass "
                                 "export_dir/model of a tdm export",
                                 options.scripted_model_path,
                                 exported.tower.empty() ? "another model" : "the package '" + exported.tower + "'"));
  }
  protos::EasyRecConfig config = exported.config;
  auto* dc = config.mutable_data_config();
  dc->clear_label_fields();
  dc->set_drop_remainder(false);
  apply_data_flags(options.batch_size, options.dataset_type, config);
  const auto sampler = tdm::tdm_sampler_config(*dc);
  if (!sampler) throw UsageError("the tdm model's config has no data_config.tdm_sampler; export it again");
  const auto tree = tdm::PredictTree::load(*sampler);
  const std::string& id_field = sampler->item_id_field;
  if (options.num_worker_per_level != 1) {
    log::info("--num_worker_per_level {}: levels are expanded on the calling thread here", options.num_worker_per_level);
  }

  const auto env = dist::dist_env_from_environment();
  const std::string writer_type =
      options.writer_type.empty() ? data::default_writer_type(protos::DatasetType_Name(dc->dataset_type()))
                                  : options.writer_type;
  auto writer = data::make_prediction_writer(writer_type, options.predict_output_path, env.rank);
  train::setup_runtime();
  const std::vector<std::string> user_reserved = split_comma_list(options.reserved_columns);
  std::vector<std::string> reserved = {"ALL_EFFECTIVE_COLUMNS", id_field};
  for (const auto& c : user_reserved) reserved.push_back(c);
  feature::BatchLoader loader(config, options.predict_input_path, feature::Mode::kPredict, nullptr,
                              {env.rank, env.world_size}, reserved);
  const feature::FeatureParser parser(config, /*read_labels=*/false);
  auto& net = exported.session->model();
  const std::string prob_name = net.num_class() == 2 ? "probs1" : "probs";
  torch::NoGradGuard no_grad;
  const int first = tdm::first_recall_level(options.n_cluster, options.recall_num, tree->num_levels());
  log::info("tdm_retrieval: tree of {} levels from {}, scoring levels {}..{}, recall_num {}", tree->num_levels(),
            sampler->item_input_path, first, tree->num_levels() - 1, options.recall_num);

  TdmRetrievalSummary summary;
  while (auto loaded = loader.next()) {
    const data::RecordBatch& users = loaded->reserved;
    const int64_t rows = users.num_rows();
    std::vector<int64_t> truth(static_cast<size_t>(rows), 0);
    std::vector<std::string> truth_text(sampler->hash_ids ? static_cast<size_t>(rows) : 0);
    {
      const feature::ColumnCells cells(users, id_field, sampler->config_path + ".item_id_field");
      std::string buf;
      for (int64_t r = 0; r < rows; ++r) {
        if (cells.empty(r)) continue;
        if (sampler->hash_ids) {
          truth_text[static_cast<size_t>(r)] = feature::as_text(cells.scalar(r), &buf);
        } else if (!feature::as_int64(cells.scalar(r), &truth[static_cast<size_t>(r)])) {
          throw DataError(fmt::format("{}: item id '{}' is not an integer; the tree's tables use integer ids (for "
                                      "string ids set USE_HASH_NODE_ID=1 and build the tree with it)",
                                      cells.where(r), feature::display(cells.scalar(r))));
        }
      }
    }
    auto score = [&](int, const std::vector<std::vector<int64_t>>& candidates) {
      std::vector<int64_t> owner, node;
      for (size_t b = 0; b < candidates.size(); ++b) {
        for (int64_t c : candidates[b]) {
          owner.push_back(static_cast<int64_t>(b));
          node.push_back(c);
        }
      }
      std::vector<std::vector<float>> out(candidates.size());
      if (node.empty()) return out;
      const sparse::Batch batch = parser.parse(candidate_rows(users, owner, node, *tree));
      const auto predictions = net.predict(batch);
      auto it = predictions.find(prob_name);
      TORCH_CHECK(it != predictions.end(), "the tdm model predicts no ", prob_name);
      const torch::Tensor p = it->second.detach().to(torch::kCPU, torch::kFloat32).reshape({-1}).contiguous();
      TORCH_CHECK(p.numel() == static_cast<int64_t>(node.size()), "one score per candidate");
      const float* v = p.data_ptr<float>();
      for (size_t j = 0; j < node.size(); ++j) out[static_cast<size_t>(owner[j])].push_back(v[j]);
      return out;
    };
    const auto found = tdm::beam_search(*tree, rows, options.n_cluster, options.recall_num, score);
    data::RecordBatch out = data::select_columns(users, user_reserved);
    out.typed_columns.push_back(sampler->hash_ids ? retrieved_ids(*tree, found, truth_text, &summary.hits)
                                                  : retrieved_ids(*tree, found, truth, &summary.hits));
    writer->write({}, out);
    summary.rows += rows;
  }
  writer->close();
  if (summary.rows > 0) summary.output_file = writer->path();
  summary.recall = summary.rows > 0 ? static_cast<double>(summary.hits) / static_cast<double>(summary.rows) : 0.0;
  log::info("retrieved for {} rows into {}", summary.rows, summary.output_file);
  log::info("Retrieval Finished. Recall:{}", summary.recall);
  return summary;
}

}  // namespace tzrec::exporting
