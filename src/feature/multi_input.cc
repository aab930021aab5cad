#include "feature/multi_input.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"
#include "feature/feature_support.h"

namespace tzrec::feature {

FgInput make_fg_input(const std::string& expr, const std::string& field, const BuildContext& ctx, bool sequence,
                      const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                      const std::string& separator, bool kv_map, bool single_input) {
  const FgInputName n = parse_fg_input(expr, field);
  FgInput in;
  in.field = field;
  in.side = n.side;
  in.name = n.name;
  in.kv_map = kv_map;
  in.separator = separator;
  if (sequence) {
    in.sequence = sequence_fields.empty()
                      ? (single_input ? n.side != "feature" && n.side != "const" : n.side == "item")
                      : std::find(sequence_fields.begin(), sequence_fields.end(), n.name) != sequence_fields.end();
  }
  in.column = fg_input_column(n, ctx, in.sequence, field);
  return in;
}

void check_sequence_inputs(const std::vector<FgInput>& inputs,
                           const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                           const std::string& path) {
  for (int j = 0; j < sequence_fields.size(); ++j) {
    const bool known =
        std::any_of(inputs.begin(), inputs.end(), [&](const FgInput& in) { return in.name == sequence_fields.Get(j); });
    if (!known) {
      throw ConfigError(fmt::format("{}.sequence_fields[{}]: '{}' is not an input name of the feature", path, j,
                                    sequence_fields.Get(j)));
    }
  }
  if (std::none_of(inputs.begin(), inputs.end(), [](const FgInput& in) { return in.sequence; })) {
    throw ConfigError(
        fmt::format("{}: a sequence feature needs an input per item: an 'item:' input, or name the per-item inputs in "
                    "sequence_fields",
                    path));
  }
}

void check_sequence_fields_need_sequence(bool sequence,
                                         const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                                         const std::string& path) {
  if (!sequence && !sequence_fields.empty()) {
    throw ConfigError(path + ".sequence_fields: only sequence features have per-item inputs");
  }
}

void check_single_input_sequence_fields(const std::string& expr, const std::string& expr_field, bool sequence,
                                        const google::protobuf::RepeatedPtrField<std::string>& sequence_fields,
                                        const std::string& path) {
  check_sequence_fields_need_sequence(sequence, sequence_fields, path);
  if (sequence_fields.empty()) return;
  const FgInputName n = parse_fg_input(expr, expr_field);
  for (int j = 0; j < sequence_fields.size(); ++j) {
    if (sequence_fields.Get(j) == n.name) continue;
    throw ConfigError(fmt::format(
        "{}.sequence_fields[{}]: '{}' is not the feature's input ('{}' of {}); a feature of one input reads it per "
        "item, so list only '{}' or leave sequence_fields unset",
        path, j, sequence_fields.Get(j), n.name, expr_field, n.name));
  }
}

MultiInputCells::MultiInputCells(const data::RecordBatch& batch, const std::vector<FgInput>& inputs,
                                 const std::string& user, std::string_view sequence_delim, int64_t max_items)
    : inputs_(&inputs), items_(inputs.size()), sequence_delim_(sequence_delim), max_items_(max_items) {
  cells_.reserve(inputs.size());
  for (const FgInput& in : inputs) {
    cells_.push_back(std::make_unique<ColumnCells>(batch, in.column, user, in.sequence, in.kv_map));
  }
}

int64_t MultiInputCells::begin_row(int64_t r) {
  int64_t items = -1;
  size_t first = 0;
  for (size_t i = 0; i < inputs_->size(); ++i) {
    auto& v = items_[i];
    v.clear();
    const FgInput& in = (*inputs_)[i];
    if (!in.sequence || cells_[i]->empty(r)) continue;
    cells_[i]->for_each_item(r, sequence_delim_, in.separator,
                             [&](const ColumnCells::Item& item) { v.push_back(item); });
    const auto n = static_cast<int64_t>(v.size());
    if (items < 0) {
      items = n;
      first = i;
    } else if (n != items) {
      throw DataError(fmt::format(
          "{}: the sequence inputs of one feature describe the same items, but column {} has {} items and column "
          "{} has {}; fix the data",
          cells_[i]->where(r), cells_[first]->name(), items, cells_[i]->name(), n));
    }
  }
  if (items < 0) items = 1;  // every sequence input empty: one item of the default value
  return max_items_ > 0 ? std::min(items, max_items_) : items;
}

std::vector<std::string> multi_input_columns(FgMode mode, const std::string& feature, const std::vector<FgInput>& inputs) {
  if (reads_encoded_column(mode)) return {feature};
  std::vector<std::string> cols;
  for (const FgInput& in : inputs) cols.push_back(in.column);
  return cols;
}

std::vector<SideInput> multi_side_inputs(FgMode mode, const std::vector<FgInput>& inputs) {
  if (reads_encoded_column(mode)) return {};
  std::vector<SideInput> out;
  for (const FgInput& in : inputs) out.push_back({in.side, in.column});
  return out;
}

}  // namespace tzrec::feature
