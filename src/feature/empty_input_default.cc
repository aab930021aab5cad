#include "feature/empty_input_default.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::feature {

std::string empty_input_fg_output(const Feature& fg_feature, HashKind hash_kind, const std::string& sep) {
  const FeatureInfo& info = fg_feature.info();
  if (info.weighted) {
    throw NotSupportedError(fmt::format("{}.use_mask of a weighted feature under fg_mode FG_NONE without "
                                        "fg_encoded_default_value: set fg_encoded_default_value",
                                        info.path));
  }
  data::RecordBatch row;
  row.files = {"(empty inputs of " + info.name + ")"};
  row.origins.resize(1);
  for (const std::string& column : fg_feature.input_columns()) {
    data::StringColumn c;
    c.name = column;
    c.append("");
    row.columns.push_back(std::move(c));
  }
  ParseOutput po;
  po.rows = 1;
  po.hash_kind = hash_kind;
  SparseOut sparse;
  std::vector<float> dense(static_cast<size_t>(std::max<int64_t>(info.value_dim, 1)), 0.0f);
  if (info.is_sparse) {
    po.sparse = &sparse;
  } else {
    po.dense = dense.data();
    po.dense_stride = static_cast<int64_t>(dense.size());
  }
  fg_feature.parse(row, po);
  std::string out;
  if (info.is_sparse) {
    for (int64_t id : sparse.values) out += (out.empty() ? "" : sep) + std::to_string(id);
  } else {
    for (size_t i = 0; i < dense.size(); ++i) out += (i ? sep : "") + fmt::format("{}", dense[i]);
  }
  return out;
}

std::unique_ptr<google::protobuf::Message> with_fg_encoded_default(const google::protobuf::Message& msg,
                                                                   const std::string& value) {
  std::unique_ptr<google::protobuf::Message> copy(msg.New());
  copy->CopyFrom(msg);
  const auto* field = copy->GetDescriptor()->FindFieldByName("fg_encoded_default_value");
  if (field == nullptr) throw std::logic_error(msg.GetDescriptor()->name() + " has no fg_encoded_default_value");
  copy->GetReflection()->SetString(copy.get(), field, value);
  return copy;
}

}  // namespace tzrec::feature
