#include "train/model_dynamic_tables.h"

#include <regex>

#include <fmt/format.h>

namespace tzrec::train {

std::vector<ModelDynamicTable> model_dynamic_tables(TrainingSession& session) {
  static const std::regex collection_suffix(R"(^(.*)\.(dynamicemb_ebc|dynamicemb_ec_dict\.[0-9]+)$)");
  std::vector<ModelDynamicTable> out;
  const embedding::EmbeddingGroupSet& set = session.model().embeddings();
  for (const auto& member : set.members()) {
    for (auto& [prefix, collection] : member.group->dynamic_collections()) {
      for (const auto& config : collection->dynamic_table_configs()) {
        ModelDynamicTable d;
        d.table = config.table.name;
        d.base_name = config.table.base_name.empty() ? config.table.name : config.table.base_name;
        d.embedding_dim = config.table.embedding_dim;
        d.weight = set.parameter_name_of(member.table_prefix + prefix + d.table);
        std::string path = d.weight;
        for (const char* tables : {"embedding_bags", "embeddings"}) {
          const std::string suffix = fmt::format("._embedding_module.{}.{}.weight", tables, d.table);
          if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
            path.resize(path.size() - suffix.size());
            break;
          }
        }
        d.state_prefix = path + ".dynamic_tables." + d.table + ".";
        std::smatch m;
        d.group = std::regex_match(path, m, collection_suffix) ? m[1].str() : path;
        d.index = &collection->dynamic_table(d.table);
        out.push_back(std::move(d));
      }
    }
  }
  return out;
}

embedding::DynamicTableLoadResult load_dynamic_table_rows(embedding::DynamicTable& table,
                                                          const embedding::DynamicTableState& state,
                                                          const torch::Tensor& source, torch::Tensor weight) {
  embedding::DynamicTableLoadResult loaded = table.load(state, embedding::DynamicRowMode::kCompact);
  std::vector<int64_t> from, to;
  for (size_t i = 0; i < loaded.rows.size(); ++i) {
    if (loaded.rows[i] < 0) continue;
    from.push_back(state.rows[i]);
    to.push_back(loaded.rows[i]);
  }
  TORCH_CHECK(static_cast<int64_t>(to.size()) + loaded.dropped == static_cast<int64_t>(state.keys.size()),
              "load_dynamic_table_rows: load kept ", to.size(), " and dropped ", loaded.dropped, " of ",
              state.keys.size(), " entries");
  if (!to.empty()) {
    torch::NoGradGuard no_grad;
    const torch::Tensor rows_to = torch::tensor(to, torch::kInt64);
    TORCH_CHECK(rows_to.max().item<int64_t>() < weight.size(0), "load_dynamic_table_rows: row past the weight");
    weight.index_copy_(0, rows_to, source.index_select(0, torch::tensor(from, torch::kInt64)).to(weight.scalar_type()));
  }
  return loaded;
}

}  // namespace tzrec::train
