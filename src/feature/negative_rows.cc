#include "feature/negative_rows.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "base/error.h"
#include "data/row_key.h"
#include "feature/column_cells.h"

namespace tzrec::feature {

namespace {

// The sampler's key of id `v` (a cell or an item of one); DataError at `where` for text ids that
// are not integers without USE_HASH_NODE_ID.
int64_t key_of(const data::NegativeSampler& sampler, const CellValue& v, const std::string& where,
               std::string* buf) {
  const std::optional<int64_t> key =
      v.kind == CellValue::Kind::kInt ? sampler.key_of(v.i) : sampler.key_of(as_text(v, buf));
  if (!key) {
    throw DataError(fmt::format("{}: id '{}' is not an integer; the sampler's tables use integer ids (set "
                                "USE_HASH_NODE_ID=1 for string ids)",
                                where, display(v)));
  }
  return *key;
}

}  // namespace

NegativeRows::NegativeRows(std::shared_ptr<const data::NegativeSampler> sampler, std::vector<std::string> columns,
                           std::string list_sep, int32_t rank, uint64_t seed,
                           std::optional<CandidateSequence> candidate)
    : sampler_(std::move(sampler)),
      columns_(std::move(columns)),
      list_sep_(std::move(list_sep)),
      rank_(rank),
      seed_(seed),
      candidate_(std::move(candidate)) {}

std::vector<std::string> NegativeRows::id_columns() const {
  std::vector<std::string> out{sampler_->config().item_id_field};
  if (sampler_->kind() != data::SamplerKind::kNegativeSampler) out.push_back(sampler_->config().user_id_field);
  return out;
}

std::vector<int64_t> NegativeRows::keys(const data::RecordBatch& batch, const std::string& column,
                                       std::vector<int64_t>* items_per_row) const {
  const ColumnCells cells(batch, column, sampler_->config().config_path + " (its id field)");
  std::vector<int64_t> out;
  std::string buf;
  if (items_per_row != nullptr) {
    // The candidate sequence's items, each one id (TorchEasyRec flattens the rows' positives).
    items_per_row->assign(static_cast<size_t>(batch.num_rows()), 0);
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      if (cells.empty(r)) continue;
      cells.for_each_item(r, candidate_->delim, list_sep_, [&](const ColumnCells::Item& item) {
        int values = 0;
        item.for_each([&](const CellValue& v) {
          if (++values > 1) {
            throw DataError(fmt::format("{}: an item of candidate sequence '{}' holds several ids; the negative "
                                        "sampler reads one id per item",
                                        cells.where(r), candidate_->name));
          }
          out.push_back(key_of(*sampler_, v, cells.where(r), &buf));
        });
        if (values == 0) out.push_back(*sampler_->key_of(std::string_view()));
        ++(*items_per_row)[static_cast<size_t>(r)];
      });
    }
    return out;
  }
  if (!cells.is_scalar()) {
    throw DataError(fmt::format("column {} is a {}; the negative sampler reads one id per row from it",
                                cells.name(), cells.describe_type()));
  }
  out.resize(static_cast<size_t>(batch.num_rows()));
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    out[r] = cells.empty(r) ? *sampler_->key_of(std::string_view()) : key_of(*sampler_, cells.scalar(r), cells.where(r), &buf);
  }
  return out;
}

data::RecordBatch NegativeRows::sample(const data::RecordBatch& batch, torch::Tensor* hard_neg_indices) const {
  const auto& config = sampler_->config();
  std::vector<int64_t> items_per_row;
  const std::vector<int64_t> items = keys(batch, config.item_id_field, candidate_ ? &items_per_row : nullptr);
  std::vector<int64_t> users;
  if (sampler_->kind() != data::SamplerKind::kNegativeSampler) {
    users = keys(batch, config.user_id_field);
    if (candidate_) {  // one user id per item
      std::vector<int64_t> per_item;
      per_item.reserve(items.size());
      for (size_t r = 0; r < users.size(); ++r) per_item.insert(per_item.end(), static_cast<size_t>(items_per_row[r]), users[r]);
      users = std::move(per_item);
    }
  }
  data::SampleContext ctx;
  ctx.seed = seed_;
  ctx.rank = rank_;
  if (batch.num_rows() > 0) ctx.batch_index = static_cast<int64_t>(data::row_key(batch, 0));
  data::SampledNegatives negatives;
  sampler_->sample(items, users, ctx, &negatives);

  data::RecordBatch out;
  out.files = batch.files;
  out.origin_unit = batch.origin_unit;
  if (!candidate_) out.origins = batch.origins;  // candidate negatives: their own rows only
  const int32_t table = static_cast<int32_t>(out.files.size());
  out.files.push_back(config.item_input_path + " negative");
  for (int64_t k = 0; k < negatives.size(); ++k) out.origins.push_back(data::RowOrigin{table, k});
  std::string buf;
  for (const std::string& name : columns_) {
    data::StringColumn column;
    column.name = name;
    std::string attr_name = name;
    if (candidate_) {
      attr_name = name.substr(candidate_->prefix.size());  // "<sequence>__<attr>"
    } else {
      const ColumnCells cells(batch, name, "the sampled items' " + config.config_path + ".attr_fields");
      if (cells.is_map()) {
        throw NotSupportedError(fmt::format("{}.attr_fields column {} as a {}", config.config_path, name,
                                            cells.describe_type()));
      }
      for (int64_t r = 0; r < batch.num_rows(); ++r) append_cell_text(cells, r, list_sep_, &buf, &column);
    }
    const auto attr = std::find(config.attr_fields.begin(), config.attr_fields.end(), attr_name);
    TORCH_CHECK(attr != config.attr_fields.end(), "negative rows: column ", name, " is not an attr field");
    const data::StringColumn& sampled = negatives.attrs.at(static_cast<size_t>(attr - config.attr_fields.begin()));
    for (int64_t k = 0; k < sampled.size(); ++k) column.append(sampled.cell(k));
    out.columns.push_back(std::move(column));
  }
  if (!negatives.hard_neg_indices.empty()) {
    const auto h = static_cast<int64_t>(negatives.hard_neg_indices.size());
    *hard_neg_indices = torch::empty({h, 2}, torch::kInt64);
    auto a = hard_neg_indices->accessor<int64_t, 2>();
    for (int64_t i = 0; i < h; ++i) {
      a[i][0] = negatives.hard_neg_indices[i][0];
      a[i][1] = negatives.hard_neg_indices[i][1];
    }
  }
  return out;
}

}  // namespace tzrec::feature
