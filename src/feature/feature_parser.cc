#include "feature/feature_parser.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "base/error.h"
#include "base/logging.h"
#include "config/feature_util.h"
#include "feature/column_cells.h"

namespace tzrec::feature {
namespace {

// ---- labels -----------------------------------------------------------------------------------

torch::Tensor parse_scalar_column(const ColumnCells& cells, int64_t rows, const char* what) {
  if (!cells.is_scalar()) {
    throw DataError(fmt::format("column {} is a {}; a {} column must hold one number per row",
                                cells.name(), cells.describe_type(), what));
  }
  auto out = torch::empty({rows}, torch::kFloat32);
  float* p = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    if (cells.empty(r)) {
      throw DataError(fmt::format("{}: empty {} '{}'; every row needs a numeric {}",
                                  cells.where(r), what, cells.name(), what));
    }
    const CellValue v = cells.scalar(r);
    double x = 0;
    if (!as_double(v, &x)) {
      throw DataError(fmt::format("{}: {} '{}' value '{}' is not a number; fix the data",
                                  cells.where(r), what, cells.name(), display(v)));
    }
    p[r] = static_cast<float>(x);
  }
  return out;
}

// A label from a list<number> column (TorchEasyRec's jagged labels): values [Σ n] float32 and
// lengths [B] int64; an empty list is a row without items, a null or non-numeric element a
// DataError.
void parse_jagged_label(const ColumnCells& cells, int64_t rows, torch::Tensor* values, torch::Tensor* lengths) {
  std::vector<float> v;
  *lengths = torch::empty({rows}, torch::kInt64);
  int64_t* len = lengths->data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const size_t before = v.size();
    if (!cells.empty(r)) {
      cells.for_each_item(r, "", "", [&](const ColumnCells::Item& item) {
        if (item.empty()) {
          throw DataError(fmt::format("{}: label '{}' has a null element; every candidate needs a numeric label",
                                      cells.where(r), cells.name()));
        }
        item.for_each([&](const CellValue& x) {
          double d = 0;
          if (!as_double(x, &d)) {
            throw DataError(fmt::format("{}: label '{}' element '{}' is not a number; fix the data", cells.where(r),
                                        cells.name(), display(x)));
          }
          v.push_back(static_cast<float>(d));
        });
      });
    }
    len[r] = static_cast<int64_t>(v.size() - before);
  }
  auto t = torch::empty({static_cast<int64_t>(v.size())}, torch::kFloat32);
  std::copy(v.begin(), v.end(), t.data_ptr<float>());
  *values = t;
}

// A 1-D tensor owning the vector's buffer (no copy).
template <typename T>
torch::Tensor to_tensor(std::vector<T>&& v, torch::ScalarType type) {
  auto* owned = new std::vector<T>(std::move(v));
  return torch::from_blob(
      owned->data(), {static_cast<int64_t>(owned->size())},
      [owned](void*) { delete owned; }, torch::TensorOptions().dtype(type));
}

}  // namespace

FeatureParser::FeatureParser(const protos::EasyRecConfig& config) : FeatureParser(config, true) {}

FeatureParser::FeatureParser(const protos::EasyRecConfig& config, bool read_labels)
    : FeatureParser(config, read_labels, hash_kind_from_env()) {
  // As TorchEasyRec warns (tzrec/utils/env_util.py use_rtp()), once per process here.
  static std::once_flag warned;
  if (config::rtp_naming() && hash_kind_ != HashKind::kFarmHash) {
    std::call_once(warned, [] {
      log::warning("USE_RTP=1 without USE_FARM_HASH_TO_BUCKETIZE=true: RTP serving buckets string ids with "
                   "farmhash; set USE_FARM_HASH_TO_BUCKETIZE=true for train, eval and export");
    });
  }
}

FeatureParser::FeatureParser(const protos::EasyRecConfig& config, bool read_labels, HashKind hash_kind)
    : features_(build_features(config)), hash_kind_(hash_kind) {
  if (!read_labels) return;
  const auto& dc = config.data_config();
  label_fields_.assign(dc.label_fields().begin(), dc.label_fields().end());
  sample_weight_fields_.assign(dc.sample_weight_fields().begin(), dc.sample_weight_fields().end());
}

std::vector<std::string> FeatureParser::input_columns() const {
  std::vector<std::string> out;
  auto add = [&](const std::string& c) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  for (const auto& f : features_.features) {
    // Stub features are evaluated only as FG_DAG producers (§5.2): otherwise their inputs are not read.
    if (f->info().stub && !features_.fg_dag) continue;
    for (const std::string& c : f->input_columns()) {
      if (!is_dag_column(c)) add(c);  // added by parse(), not read
    }
  }
  for (const auto& c : label_fields_) add(c);
  for (const auto& c : sample_weight_fields_) add(c);
  return out;
}

std::vector<std::string> FeatureParser::neg_input_columns() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < features_.features.size(); ++i) {
    const FeatureInfo& info = features_.features[i]->info();
    const bool candidate = features_.candidate && features_.candidate->holds(info);
    if (!(features_.neg[i] || candidate) || info.stub) continue;
    for (const std::string& c : features_.features[i]->input_columns()) {
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  return out;
}

sparse::Batch FeatureParser::parse(const data::RecordBatch& b) const {
  if (features_.dag.empty()) return parse_rows(b, nullptr, nullptr);
  data::RecordBatch with_dag = b;
  return parse_in_place(&with_dag, nullptr);
}

sparse::Batch FeatureParser::parse_in_place(data::RecordBatch* b, const data::RecordBatch* neg_rows,
                                            const SampleMasks* masks) const {
  if (!features_.dag.empty()) add_dag_columns(features_.dag, features_.features, hash_kind_, b);
  return parse_rows(*b, neg_rows, masks);
}

void FeatureParser::parse_group(const data::RecordBatch& b, Group group, sparse::KeyedJaggedTensor* sparse_out,
                                sparse::KeyedTensor* dense_out, sparse::Batch* out,
                                const std::vector<uint8_t>* mask) const {
  const int64_t rows = b.num_rows();
  const bool neg = group == Group::kNeg;
  auto in_group = [&](size_t i) {
    const FeatureInfo& info = features_.features[i]->info();
    if (info.stub) return false;
    if (group == Group::kCandidate) return features_.candidate->holds(info);
    return features_.neg[i] == neg;
  };
  SparseOut sp;
  sp.values = recycled_values_->take();
  sp.lengths = recycled_lengths_->take();
  std::vector<std::string> sparse_keys, dense_keys;
  std::vector<int64_t> dense_dims;
  int64_t dense_width = 0;
  for (size_t i = 0; i < features_.features.size(); ++i) {
    if (!in_group(i)) continue;
    const FeatureInfo& info = features_.features[i]->info();
    if (info.is_sparse) {
      sparse_keys.push_back(info.name);
      sp.with_weights = sp.with_weights || info.weighted;
    } else if (!info.is_sequence) {
      dense_keys.push_back(info.name);
      dense_dims.push_back(info.value_dim);
      dense_width += info.value_dim;
    }
  }
  // Most features have one value per row: reserve that much (the base group: at least as much as
  // the largest batch so far), vectors grow for the rest.
  const size_t one_each = static_cast<size_t>(rows) * sparse_keys.size();
  const auto expected = group != Group::kBase ? one_each : std::max(one_each, values_hint_->load());
  sp.lengths.reserve(one_each);
  sp.values.reserve(expected);
  if (sp.with_weights) {
    sp.weights = recycled_weights_->take();
    sp.weights.reserve(expected);
  }
  auto dense = torch::empty({rows, dense_width}, torch::kFloat32);
  ParseOutput po;
  po.rows = rows;
  po.hash_kind = hash_kind_;
  po.sparse = &sp;
  po.dense = dense.data_ptr<float>();
  po.dense_stride = dense_width;
  std::vector<int64_t> sequence_lengths, item_lengths;
  std::vector<float> sequence_dense;
  // The items per row of each grouped sequence's first sub-feature: the others describe the same
  // items and must have as many.
  std::map<std::string, std::pair<const Feature*, std::vector<int64_t>>> history_lengths;
  const bool any_weighted = sp.with_weights;
  for (size_t i = 0; i < features_.features.size(); ++i) {
    if (!in_group(i)) continue;
    const FeaturePtr& f = features_.features[i];
    const FeatureInfo& info = f->info();
    // The weights of an unweighted feature's ids are all 1: filled after it in one go rather than
    // pushed id by id.
    sp.with_weights = any_weighted && info.weighted;
    if (info.is_sequence) {
      sequence_lengths.clear();
      item_lengths.clear();
      sequence_dense.clear();
      po.sequence_lengths = &sequence_lengths;
      po.item_lengths = &item_lengths;
      po.sequence_dense = &sequence_dense;
    }
    std::vector<std::string> mask_inputs;
    std::string masked_column;
    if (mask != nullptr && info.use_mask) {
      mask_inputs = f->input_columns();
      masked_column = first_maskable_column(b, mask_inputs);
    }
    if (masked_column.empty()) {
      f->parse(b, po);
    } else {
      f->parse(with_masked_column(b, mask_inputs, masked_column, *mask), po);
    }
    if (any_weighted) sp.weights.resize(sp.values.size(), 1.0f);
    if (info.is_sequence && !info.sequence_name.empty()) {
      auto [it, first] = history_lengths.emplace(info.sequence_name, std::make_pair(f.get(), sequence_lengths));
      for (int64_t r = 0; !first && r < rows; ++r) {
        if (it->second.second[r] == sequence_lengths[r]) continue;
        throw DataError(fmt::format(
            "{}: sequence '{}' has {} items in {} but {} in {} (columns {} and {}); the sub-features of a sequence "
            "describe the same items — fix the data",
            b.describe_row(r), info.sequence_name, it->second.second[r], it->second.first->info().name,
            sequence_lengths[r], info.name, it->second.first->input_columns().front(), f->input_columns().front()));
      }
    }
    if (info.is_sequence) {  // base or candidate group only (data_groups.h)
      out->sequence_lengths[info.name] = torch::tensor(sequence_lengths, torch::kInt64);
      if (info.is_sparse && info.value_dim != 1) {
        out->sequence_item_lengths[info.name] = torch::tensor(item_lengths, torch::kInt64);
      }
      if (!info.is_sparse) {
        const auto items = static_cast<int64_t>(sequence_dense.size()) / info.value_dim;
        out->sequence_dense_features[info.name] = to_tensor(std::move(sequence_dense), torch::kFloat32)
                                                      .view({items, info.value_dim});
        sequence_dense = {};
      }
    } else if (!info.is_sparse) {
      po.dense_offset += info.value_dim;
    }
  }
  sp.with_weights = any_weighted;
  if (group == Group::kBase && sp.values.size() > values_hint_->load()) values_hint_->store(sp.values.size());
  if (!sparse_keys.empty()) {
    *sparse_out = sparse::KeyedJaggedTensor(
        sparse_keys, recycled_values_->to_tensor(std::move(sp.values), torch::kInt64),
        recycled_lengths_->to_tensor(std::move(sp.lengths), torch::kInt64),
        sp.with_weights ? recycled_weights_->to_tensor(std::move(sp.weights), torch::kFloat32)
                        : torch::Tensor());
  }
  if (!dense_keys.empty()) *dense_out = sparse::KeyedTensor(dense_keys, dense_dims, dense);
}

namespace {

// force_base_data_group (TorchEasyRec's pad_to_max_bs): the __NEG__ features join __BASE__, whose
// own features get zero-length bags, zero dense rows and zero sequence lengths for the negatives'
// rows. Key-major KJTs: a key's padding rows come after its rows and hold no values.
void merge_into_base(sparse::Batch* batch) {
  const int64_t b = batch->batch_size, nb = batch->neg_batch_size, pad = nb - b;
  const sparse::KeyedJaggedTensor& base = batch->sparse_features;
  const sparse::KeyedJaggedTensor& neg = batch->neg_sparse_features;
  std::vector<std::string> keys = base.keys();
  keys.insert(keys.end(), neg.keys().begin(), neg.keys().end());
  std::vector<torch::Tensor> values, lengths, weights;
  const bool weighted = base.has_weights() || neg.has_weights();
  if (!base.empty()) {
    const auto k = static_cast<int64_t>(base.keys().size());
    values.push_back(base.values());
    lengths.push_back(torch::cat({base.lengths().view({k, b}), torch::zeros({k, pad}, torch::kInt64)}, 1).view({-1}));
    if (weighted) weights.push_back(base.has_weights() ? base.weights() : torch::ones({base.values().size(0)}));
  }
  if (!neg.empty()) {
    values.push_back(neg.values());
    lengths.push_back(neg.lengths());
    if (weighted) weights.push_back(neg.has_weights() ? neg.weights() : torch::ones({neg.values().size(0)}));
  }
  if (!keys.empty()) {
    batch->sparse_features = sparse::KeyedJaggedTensor(keys, torch::cat(values), torch::cat(lengths),
                                                       weighted ? torch::cat(weights) : torch::Tensor());
  }
  const sparse::KeyedTensor& dense = batch->dense_features;
  const sparse::KeyedTensor& neg_dense = batch->neg_dense_features;
  std::vector<std::string> dense_keys = dense.keys();
  dense_keys.insert(dense_keys.end(), neg_dense.keys().begin(), neg_dense.keys().end());
  if (!dense_keys.empty()) {
    std::vector<int64_t> dims = dense.length_per_key();
    dims.insert(dims.end(), neg_dense.length_per_key().begin(), neg_dense.length_per_key().end());
    std::vector<torch::Tensor> parts;
    if (!dense.keys().empty()) {
      parts.push_back(torch::cat({dense.values(), torch::zeros({pad, dense.values().size(1)})}, 0));
    }
    if (!neg_dense.keys().empty()) parts.push_back(neg_dense.values());
    batch->dense_features = sparse::KeyedTensor(dense_keys, dims, torch::cat(parts, 1));
  }
  for (auto& [name, l] : batch->sequence_lengths) l = torch::cat({l, torch::zeros({pad}, torch::kInt64)});
  batch->neg_sparse_features = {};
  batch->neg_dense_features = {};
  batch->base_padded = true;
}

// The candidate sequence's negatives (parsed over their own rows, `negatives`) appended to the
// last row of that sequence in *batch: per sparse key, the negatives' values after the key's
// values and its last row's length grown by theirs; the sequences' item counts, ids per item and
// dense items likewise (their last row's items are the last ones).
void append_to_last_row(const sparse::Batch& negatives, sparse::Batch* batch) {
  const int64_t b = batch->batch_size;
  const sparse::KeyedJaggedTensor& neg = negatives.sparse_features;
  const sparse::KeyedJaggedTensor& base = batch->sparse_features;
  if (!neg.empty()) {
    const bool weighted = base.has_weights() || neg.has_weights();
    std::vector<torch::Tensor> values, weights;
    torch::Tensor lengths = base.lengths().clone().view({-1, b});
    for (size_t k = 0; k < base.keys().size(); ++k) {
      const std::string& key = base.keys()[k];
      const int64_t start = base.offset_per_key()[k], n = base.length_per_key()[k];
      values.push_back(base.values().narrow(0, start, n));
      if (weighted) weights.push_back(base.has_weights() ? base.weights().narrow(0, start, n) : torch::ones({n}));
      if (!neg.contains(key)) continue;
      const int64_t nk = neg.key_index(key);
      const int64_t ns = neg.offset_per_key()[static_cast<size_t>(nk)];
      const int64_t nn = neg.length_per_key()[static_cast<size_t>(nk)];
      values.push_back(neg.values().narrow(0, ns, nn));
      if (weighted) weights.push_back(neg.has_weights() ? neg.weights().narrow(0, ns, nn) : torch::ones({nn}));
      lengths[static_cast<int64_t>(k)][b - 1] += nn;
    }
    batch->sparse_features = sparse::KeyedJaggedTensor(base.keys(), torch::cat(values), lengths.view({-1}),
                                                       weighted ? torch::cat(weights) : torch::Tensor());
  }
  for (const auto& [name, l] : negatives.sequence_lengths) {
    torch::Tensor& to = batch->sequence_lengths.at(name);
    to = to.clone();
    to[b - 1] += l.sum();
  }
  for (const auto& [name, l] : negatives.sequence_item_lengths) {
    torch::Tensor& to = batch->sequence_item_lengths.at(name);
    to = torch::cat({to, l});
  }
  for (const auto& [name, d] : negatives.sequence_dense_features) {
    torch::Tensor& to = batch->sequence_dense_features.at(name);
    to = torch::cat({to, d});
  }
}

}  // namespace

sparse::Batch FeatureParser::parse_rows(const data::RecordBatch& b, const data::RecordBatch* neg_rows,
                                        const SampleMasks* masks) const {
  const int64_t rows = b.num_rows();
  sparse::Batch out;
  out.batch_size = rows;
  parse_group(b, Group::kBase, &out.sparse_features, &out.dense_features, &out, masks ? &masks->rows : nullptr);
  if (features_.candidate) {
    const CandidateSequence& c = *features_.candidate;
    for (const auto& f : features_.features) {
      if (!c.holds(f->info())) continue;
      out.candidate_pos_lengths = out.sequence_lengths.at(f->info().name).clone();
      break;
    }
    if (neg_rows != nullptr && rows > 0 && neg_rows->num_rows() > 0) {
      sparse::Batch negatives;
      negatives.batch_size = neg_rows->num_rows();
      parse_group(*neg_rows, Group::kCandidate, &negatives.sparse_features, &negatives.dense_features, &negatives);
      append_to_last_row(negatives, &out);
    }
  }
  if (features_.has_neg()) {
    const data::RecordBatch& nb = neg_rows != nullptr ? *neg_rows : b;
    out.neg_batch_size = nb.num_rows();
    // The __NEG__ rows are the batch's followed by the negatives' (TorchEasyRec's C_NEG_SAMPLE_MASK).
    std::vector<uint8_t> neg_mask;
    if (masks != nullptr) {
      neg_mask = masks->rows;
      if (neg_rows != nullptr) neg_mask.insert(neg_mask.end(), masks->negatives.begin(), masks->negatives.end());
      if (static_cast<int64_t>(neg_mask.size()) != nb.num_rows()) {
        throw UsageError(fmt::format("FeatureParser: {} sample masks for {} __NEG__ rows", neg_mask.size(), nb.num_rows()));
      }
    }
    parse_group(nb, Group::kNeg, &out.neg_sparse_features, &out.neg_dense_features, &out,
                masks != nullptr ? &neg_mask : nullptr);
    if (features_.force_base_data_group) merge_into_base(&out);
  }
  for (const auto& name : label_fields_) {
    ColumnCells cells(b, name, "label_fields");
    if (!cells.is_scalar() && !cells.is_map() && cells.leaf_kind() != CellValue::Kind::kText) {
      parse_jagged_label(cells, rows, &out.jagged_label_values[name], &out.jagged_label_lengths[name]);
    } else {
      out.labels[name] = parse_scalar_column(cells, rows, "label");
    }
  }
  for (const auto& name : sample_weight_fields_) {
    out.sample_weights[name] =
        parse_scalar_column(ColumnCells(b, name, "sample_weight_fields"), rows, "sample weight");
  }
  return out;
}

}  // namespace tzrec::feature
