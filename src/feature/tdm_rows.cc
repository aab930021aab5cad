#include "feature/tdm_rows.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "base/error.h"
#include "base/stable_hash.h"
#include "data/row_key.h"
#include "data/sampler_table.h"
#include "data/typed_rows.h"
#include "feature/column_cells.h"

namespace tzrec::feature {

TdmRows::TdmRows(std::shared_ptr<const tdm::TdmSampler> sampler, std::vector<std::string> label_fields,
                 std::string list_sep, int32_t rank, uint64_t seed, bool is_training)
    : sampler_(std::move(sampler)),
      label_fields_(std::move(label_fields)),
      list_sep_(std::move(list_sep)),
      rank_(rank),
      seed_(seed),
      is_training_(is_training) {}

data::RecordBatch TdmRows::expand(const data::RecordBatch& batch) const {
  const auto& config = sampler_->config();
  const int64_t rows = batch.num_rows();
  // Item ids as the tables' keys: integers, an empty cell 0 (TorchEasyRec's fill_null(0)); with
  // hashed ids graphlearn's hash of the id's text (data/sampler_table.h).
  const ColumnCells id_cells(batch, config.item_id_field, config.config_path + ".item_id_field");
  if (!id_cells.is_scalar()) {
    throw DataError(fmt::format("column {} is a {}; the TDM sampler reads one item id per row from it", id_cells.name(),
                                id_cells.describe_type()));
  }
  auto id_text = [&](int64_t r, std::string* buf) {
    return id_cells.empty(r) ? std::string_view() : as_text(id_cells.scalar(r), buf);
  };
  std::vector<int64_t> keys(static_cast<size_t>(rows));
  std::string buf;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t key = 0;
    if (config.hash_ids) {
      key = *data::sampler_key_of_text(id_text(r, &buf), true);
    } else if (!id_cells.empty(r) && !as_int64(id_cells.scalar(r), &key)) {
      throw DataError(fmt::format("{}: item id '{}' is not an integer; the tree's tables use integer ids (for "
                                  "string ids set USE_HASH_NODE_ID=1 and build the tree with it)",
                                  id_cells.where(r), display(id_cells.scalar(r))));
    }
    keys[static_cast<size_t>(r)] = key;
  }
  uint64_t seed = chain_seed(seed_, {0x74646d5f73616d70ULL /* "tdm_samp" */, is_training_ ? 1u : 2u,
                                     static_cast<uint32_t>(rank_)});
  if (rows > 0) seed = chain_seed(seed, {data::row_key(batch, 0)});
  tdm::TdmSamples samples;
  // Rows for messages; with hashed ids also the id's text (the keys are hashes).
  const auto where = [&](int64_t r) {
    std::string out = fmt::format("{} column {}", batch.describe_row(r), config.item_id_field);
    if (config.hash_ids) out += fmt::format(" (id '{}')", id_text(r, &buf));
    return out;
  };
  sampler_->sample(keys, seed, where, &samples);

  const int64_t num_pos = rows * samples.pos_per_row;
  const int64_t num_neg = rows * samples.neg_per_row;
  // The batch row each sample was drawn for, and its node.
  std::vector<int64_t> owner;
  std::vector<int64_t> node;
  owner.reserve(static_cast<size_t>(num_pos + num_neg));
  node.reserve(static_cast<size_t>(num_pos + num_neg));
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t k = 0; k < samples.pos_per_row; ++k) {
      owner.push_back(j);
      node.push_back(samples.pos_nodes[static_cast<size_t>(j * samples.pos_per_row + k)]);
    }
  }
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t k = 0; k < samples.neg_per_row; ++k) {
      owner.push_back(j);
      node.push_back(samples.neg_nodes[static_cast<size_t>(j * samples.neg_per_row + k)]);
    }
  }

  data::RecordBatch out;
  out.files = batch.files;
  out.origin_unit = batch.origin_unit;
  out.origins = batch.origins;
  for (int64_t o : owner) out.origins.push_back(batch.origins[static_cast<size_t>(o)]);

  auto attr_index = [&](const std::string& name) -> int {
    for (size_t k = 1; k < config.attr_fields.size(); ++k) {
      if (config.attr_fields[k] == name) return static_cast<int>(k);
    }
    return -1;
  };
  auto is_label = [&](const std::string& name) {
    return std::find(label_fields_.begin(), label_fields_.end(), name) != label_fields_.end();
  };
  // Item and label columns become text: the input cells, then the sampled ones.
  auto text_column = [&](const std::string& name) {
    data::StringColumn column;
    column.name = name;
    const ColumnCells cells(batch, name, config.config_path);
    if (cells.is_map()) {
      throw NotSupportedError(fmt::format("{}.attr_fields column {} as a {}", config.config_path, name,
                                          cells.describe_type()));
    }
    for (int64_t r = 0; r < rows; ++r) append_cell_text(cells, r, list_sep_, &buf, &column);
    const int k = attr_index(name);
    if (k >= 0) {
      for (int64_t s : node) column.append(sampler_->attr(s, static_cast<size_t>(k)));
    } else {
      for (int64_t i = 0; i < num_pos; ++i) column.append("1");
      for (int64_t i = 0; i < num_neg; ++i) column.append("0");
    }
    return column;
  };
  for (const data::StringColumn& c : batch.columns) {
    if (attr_index(c.name) >= 0 || is_label(c.name)) {
      out.columns.push_back(text_column(c.name));
      continue;
    }
    out.columns.push_back(data::take_rows(c, c.size(), owner));
  }
  for (const data::TypedColumn& c : batch.typed_columns) {
    if (attr_index(c.name) >= 0 || is_label(c.name)) {
      out.columns.push_back(text_column(c.name));
      continue;
    }
    out.typed_columns.push_back(data::take_rows(c, rows, owner));
  }
  return out;
}

}  // namespace tzrec::feature
