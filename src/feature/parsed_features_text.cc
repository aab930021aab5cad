#include "feature/parsed_features_text.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "base/python_float.h"

namespace tzrec::feature {
namespace {

torch::Tensor cpu(const torch::Tensor& t) { return t.to(torch::kCPU).contiguous(); }

const torch::Tensor& at(const std::map<std::string, torch::Tensor>& tensors, const std::string& name) {
  const auto it = tensors.find(name);
  if (it == tensors.end()) throw std::logic_error("parsed_features_column: no sequence tensors for " + name);
  return it->second;
}

// The feature's ids, lengths and weights from the data group that holds it.
sparse::JaggedTensor sparse_of(const sparse::Batch& batch, const std::string& name) {
  if (batch.sparse_features.contains(name)) return batch.sparse_features[name];
  if (batch.neg_sparse_features.contains(name)) return batch.neg_sparse_features[name];
  throw std::logic_error("parsed_features_column: sparse feature " + name + " is not in the batch");
}

torch::Tensor dense_of(const sparse::Batch& batch, const std::string& name) {
  if (batch.dense_features.contains(name)) return batch.dense_features[name];
  if (batch.neg_dense_features.contains(name)) return batch.neg_dense_features[name];
  throw std::logic_error("parsed_features_column: dense feature " + name + " is not in the batch");
}

void append_floats(const float* v, int64_t n, std::string* out) {
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) *out += ',';
    *out += numpy_float32_str(v[i]);
  }
}

// Appends each row's text of one feature to rows[r].
void append_feature(const FeatureInfo& info, const sparse::Batch& batch, std::vector<std::string>* rows) {
  const int64_t num_rows = static_cast<int64_t>(rows->size());
  if (info.is_sparse) {
    const sparse::JaggedTensor jt = sparse_of(batch, info.name);
    const torch::Tensor values = cpu(jt.values.to(torch::kInt64));
    const int64_t* ids = values.data_ptr<int64_t>();
    if (info.is_sequence) {
      const torch::Tensor items = cpu(at(batch.sequence_lengths, info.name));
      torch::Tensor per_item;
      if (info.value_dim != 1) per_item = cpu(at(batch.sequence_item_lengths, info.name));
      int64_t item = 0;
      int64_t id = 0;
      for (int64_t r = 0; r < num_rows; ++r) {
        std::string& out = (*rows)[static_cast<size_t>(r)];
        for (int64_t k = 0; k < items.data_ptr<int64_t>()[r]; ++k, ++item) {
          if (k > 0) out += info.sequence_delim;
          const int64_t n = per_item.defined() ? per_item.data_ptr<int64_t>()[item] : 1;
          for (int64_t j = 0; j < n; ++j, ++id) {
            if (j > 0) out += ',';
            out += std::to_string(ids[id]);
          }
        }
      }
      return;
    }
    const torch::Tensor lengths = cpu(jt.lengths);
    torch::Tensor weights;
    if (info.weighted && jt.weights.defined()) weights = cpu(jt.weights.to(torch::kFloat32));
    int64_t id = 0;
    std::vector<std::string> pairs;
    for (int64_t r = 0; r < num_rows; ++r) {
      std::string& out = (*rows)[static_cast<size_t>(r)];
      const int64_t n = lengths.data_ptr<int64_t>()[r];
      if (!weights.defined()) {
        for (int64_t j = 0; j < n; ++j, ++id) {
          if (j > 0) out += ',';
          out += std::to_string(ids[id]);
        }
        continue;
      }
      pairs.clear();
      for (int64_t j = 0; j < n; ++j, ++id) {
        pairs.push_back(std::to_string(ids[id]) + ":" + numpy_float32_str(weights.data_ptr<float>()[id]));
      }
      std::sort(pairs.begin(), pairs.end());
      for (size_t j = 0; j < pairs.size(); ++j) {
        if (j > 0) out += ',';
        out += pairs[j];
      }
    }
    return;
  }
  const int64_t dim = info.value_dim;
  if (info.is_sequence) {
    const torch::Tensor items = cpu(at(batch.sequence_lengths, info.name));
    const torch::Tensor values = cpu(at(batch.sequence_dense_features, info.name).to(torch::kFloat32));
    const float* v = values.data_ptr<float>();
    int64_t item = 0;
    for (int64_t r = 0; r < num_rows; ++r) {
      std::string& out = (*rows)[static_cast<size_t>(r)];
      for (int64_t k = 0; k < items.data_ptr<int64_t>()[r]; ++k, ++item) {
        if (k > 0) out += info.sequence_delim;
        append_floats(v + item * dim, dim, &out);
      }
    }
    return;
  }
  const torch::Tensor values = cpu(dense_of(batch, info.name).to(torch::kFloat32));
  const float* v = values.data_ptr<float>();
  for (int64_t r = 0; r < num_rows; ++r) append_floats(v + r * dim, dim, &(*rows)[static_cast<size_t>(r)]);
}

}  // namespace

data::StringColumn parsed_features_column(const std::vector<FeaturePtr>& features, const sparse::Batch& batch) {
  std::vector<std::string> rows(static_cast<size_t>(batch.batch_size));
  bool first = true;
  for (const FeaturePtr& f : features) {
    const FeatureInfo& info = f->info();
    if (info.stub) continue;
    for (std::string& row : rows) {
      if (!first) row += " | ";
      row += info.name;
      row += ':';
    }
    first = false;
    append_feature(info, batch, &rows);
  }
  data::StringColumn column;
  column.name = kParsedFeaturesColumn;
  for (const std::string& row : rows) column.append(row);
  return column;
}

}  // namespace tzrec::feature
