#include "embedding/fused_embedding_bags.h"

#include <chrono>

#include <unordered_map>

#include <fmt/ranges.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include "base/error.h"
#include "embedding/table_memory.h"
#include "embedding/tbe_kernels.h"
#include "embedding/touched_rows.h"

namespace tzrec::embedding {

struct FusedEmbeddingBags::Group {
  struct Table {
    FusedTableSpec spec;
    torch::Tensor momentum1;  // per state_layout, undefined where none (and for frozen tables)
    torch::Tensor momentum2;
    int64_t step = 0;
    std::shared_ptr<TouchedRows> touched;  // set by track_touched_rows()
  };
  struct Feature {
    FusedFeatureSpec spec;
    int64_t table = 0;
    bool mean = false;
    int64_t output_offset = 0;
  };
  FusedOptimizerOptions options;
  OptimizerStateLayout layout;
  std::vector<Table> tables;
  std::vector<Feature> features;
  int64_t total_dim = 0;
  FusedEmbeddingBags::Timing timing;
  std::optional<double> gradient_scale;  // loss scale S of incoming gradients; nullopt: none
  bool last_found_inf = false;
  bool track_touched = false;
};

namespace {

using Group = FusedEmbeddingBags::Group;

// One feature's batch values, validated and in the kernels' layout.
struct PreparedInput {
  torch::Tensor ids;      // [N] int64 contiguous
  torch::Tensor offsets;  // [B + 1] int64 contiguous
  torch::Tensor weights;  // [N] float32 contiguous or undefined
};

tbe::TableBuffers table_buffers(Group::Table& t) {
  tbe::TableBuffers b;
  b.weight = t.spec.weight.data_ptr();
  b.weight_type = t.spec.weight.scalar_type() == torch::kFloat16 ? tbe::WeightType::kFloat16
                                                                  : tbe::WeightType::kFloat32;
  b.num_rows = t.spec.weight.size(0);
  b.dim = t.spec.weight.size(1);
  b.trainable = t.spec.trainable;
  b.momentum1 = t.momentum1.defined() ? t.momentum1.data_ptr<float>() : nullptr;
  b.momentum2 = t.momentum2.defined() ? t.momentum2.data_ptr<float>() : nullptr;
  return b;
}

std::vector<tbe::FeatureBuffers> feature_buffers(const Group& g,
                                                 const std::vector<PreparedInput>& inputs) {
  std::vector<tbe::FeatureBuffers> out;
  for (size_t f = 0; f < g.features.size(); ++f) {
    tbe::FeatureBuffers b;
    b.ids = inputs[f].ids.data_ptr<int64_t>();
    b.offsets = inputs[f].offsets.data_ptr<int64_t>();
    b.per_id_weights = inputs[f].weights.defined() ? inputs[f].weights.data_ptr<float>() : nullptr;
    b.table = g.features[f].table;
    b.mean = g.features[f].mean;
    b.output_offset = g.features[f].output_offset;
    out.push_back(b);
  }
  return out;
}

// Backward of one forward() call: runs the fused optimizer update, returns no weight gradient.
class FusedEmbeddingBagsBackward : public torch::autograd::Node {
 public:
  FusedEmbeddingBagsBackward(std::shared_ptr<Group> group, std::vector<PreparedInput> inputs,
                             int64_t batch_size)
      : group_(std::move(group)), inputs_(std::move(inputs)), batch_size_(batch_size) {}

  std::string name() const override { return "FusedEmbeddingBagsBackward"; }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    TORCH_CHECK(!released_, "FusedEmbeddingBagsBackward: backward run twice over the same graph; "
                            "the fused optimizer updates the tables once per forward");
    torch::autograd::variable_list no_grads(num_outputs());
    if (grads.empty() || !grads[0].defined()) return no_grads;
    torch::NoGradGuard no_grad;
    Group& g = *group_;
    const auto start = std::chrono::steady_clock::now();
    torch::Tensor grad = grads[0].to(torch::kFloat32).contiguous();  // [B, total_dim]
    TORCH_CHECK(grad.dim() == 2 && grad.size(0) == batch_size_ && grad.size(1) == g.total_dim,
                "FusedEmbeddingBagsBackward: gradient has shape ", grad.sizes(), ", expected [",
                batch_size_, ", ", g.total_dim, "]");
    if (g.gradient_scale) {
      if (!torch::isfinite(grad).all().item<bool>()) {
        // An overflowed (loss-scaled) step: leave every row and all optimizer state as they are.
        g.last_found_inf = true;
        release_variables();
        return no_grads;
      }
      // Out of place: the incoming gradient may be shared with other consumers.
      grad = grad * static_cast<float>(1.0 / *g.gradient_scale);
    }
    if (g.options.gradient_clipping) {
      grad = grad.clamp(-g.options.max_gradient, g.options.max_gradient);
    }
    std::vector<tbe::TableBuffers> tables;
    for (Group::Table& t : g.tables) {
      if (t.spec.trainable) ++t.step;
      tbe::TableBuffers b = table_buffers(t);
      b.scalars = make_row_update_scalars(g.options, g.options.lr, t.step);
      tables.push_back(b);
    }
    tbe::backward_update(tables, feature_buffers(g, inputs_), batch_size_, grad.data_ptr<float>(),
                         g.total_dim, g.layout);
    g.timing.backward_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++g.timing.backward_calls;
    release_variables();
    return no_grads;
  }

  void release_variables() override {
    inputs_.clear();
    released_ = true;
  }

 private:
  std::shared_ptr<Group> group_;
  std::vector<PreparedInput> inputs_;
  int64_t batch_size_;
  bool released_ = false;
};

PreparedInput prepare_input(const Group& g, size_t f, const FusedFeatureInput& in,
                            int64_t& batch_size) {
  const Group::Feature& feature = g.features[f];
  const FusedTableSpec& table = g.tables[feature.table].spec;
  const std::string& name = feature.spec.name;
  PreparedInput p;
  TORCH_CHECK(in.ids.defined() && in.ids.dim() == 1, "feature ", name, ": ids must be 1-D");
  TORCH_CHECK(in.ids.device().is_cpu(), "feature ", name, ": ids must be on the CPU");
  p.ids = in.ids.to(torch::kInt64).contiguous();
  const int64_t n = p.ids.numel();
  if (in.offsets.defined()) {
    TORCH_CHECK(in.offsets.dim() == 1 && in.offsets.size(0) >= 1, "feature ", name,
                ": offsets must be 1-D [B + 1]");
    p.offsets = in.offsets.to(torch::kInt64).contiguous();
  } else {
    TORCH_CHECK(in.lengths.defined() && in.lengths.dim() == 1, "feature ", name,
                ": give offsets [B + 1] or lengths [B]");
    torch::Tensor lengths = in.lengths.to(torch::kInt64);
    if (lengths.numel() > 0 && lengths.min().item<int64_t>() < 0) {
      throw DataError(fmt::format("feature '{}': negative length in the batch", name));
    }
    p.offsets = offsets_from_lengths(lengths);
  }
  const int64_t b = p.offsets.size(0) - 1;
  if (batch_size < 0) batch_size = b;
  if (b != batch_size) {
    throw DataError(fmt::format("feature '{}' has {} rows in the batch, the group's first feature "
                                "has {}",
                                name, b, batch_size));
  }
  const int64_t* off = p.offsets.data_ptr<int64_t>();
  bool monotone = off[0] == 0 && off[b] == n;
  for (int64_t i = 0; i < b && monotone; ++i) monotone = off[i] <= off[i + 1];
  if (!monotone) {
    throw DataError(fmt::format("feature '{}': offsets must rise from 0 to the number of ids ({}); "
                                "got first {} and last {}",
                                name, n, off[0], off[b]));
  }
  if (in.weights.defined()) {
    if (in.weights.requires_grad() && torch::GradMode::is_enabled()) {
      throw NotSupportedError(fmt::format(
          "gradient with respect to the per-id weights of feature '{}' in the fused embedding "
          "kernels; pass weights that do not require grad",
          name));
    }
    TORCH_CHECK(in.weights.dim() == 1 && in.weights.numel() == n, "feature ", name, ": weights has ",
                in.weights.numel(), " values for ", n, " ids");
    p.weights = in.weights.detach().to(torch::kFloat32).contiguous();
  }
  const int64_t rows = table.weight.size(0);
  const int64_t bad = tbe::find_out_of_range_id(p.ids.data_ptr<int64_t>(), n, rows);
  if (bad >= 0) {
    throw DataError(fmt::format(
        "feature '{}': id {} is outside embedding table '{}' with num_embeddings {}; ids must be "
        "in [0, {}) (check the feature's num_buckets / hash_bucket_size)",
        name, p.ids.data_ptr<int64_t>()[bad], table.name, rows, rows));
  }
  return p;
}

}  // namespace

torch::Tensor offsets_from_lengths(const torch::Tensor& lengths) {
  torch::Tensor l = lengths.to(torch::kInt64);
  torch::Tensor offsets = torch::zeros({l.numel() + 1}, l.options());
  if (l.numel() > 0) offsets.slice(0, 1).copy_(torch::cumsum(l, 0));
  return offsets;
}

FusedEmbeddingBags::FusedEmbeddingBags(std::vector<FusedTableSpec> tables,
                                       std::vector<FusedFeatureSpec> features,
                                       FusedOptimizerOptions options)
    : group_(std::make_shared<Group>()) {
  Group& g = *group_;
  g.options = options;
  g.layout = state_layout(options.kind);
  std::unordered_map<std::string, int64_t> index;
  torch::NoGradGuard no_grad;
  for (FusedTableSpec& spec : tables) {
    const torch::Tensor& w = spec.weight;
    TORCH_CHECK(w.defined() && w.dim() == 2 && w.is_contiguous() && w.device().is_cpu() &&
                    (w.scalar_type() == torch::kFloat32 || w.scalar_type() == torch::kFloat16),
                "FusedEmbeddingBags: table ", spec.name,
                " needs a 2-D contiguous CPU float32 or float16 weight");
    if (!index.emplace(spec.name, static_cast<int64_t>(g.tables.size())).second) {
      throw ConfigError(fmt::format("embedding table '{}' is defined twice", spec.name));
    }
    Group::Table t;
    if (spec.trainable) {
      if (!spec.weight.requires_grad()) spec.weight.requires_grad_(true);
      const int64_t rows = w.size(0), dim = w.size(1);
      auto make = [&](StateWidth width, double value) {
        if (width == StateWidth::kNone) return torch::Tensor();
        // Demand-paged state starts as zeros: only state whose initial value is 0 can.
        const bool on_demand = spec.rows_on_demand && value == 0.0;
        torch::Tensor s = width == StateWidth::kRow ? table_rows({rows}, torch::kFloat32, on_demand)
                                                    : table_rows({rows, dim}, torch::kFloat32, on_demand);
        return on_demand ? s : s.fill_(value);
      };
      t.momentum1 = make(g.layout.momentum1, initial_momentum1(options));
      t.momentum2 = make(g.layout.momentum2, 0.0);
    }
    t.spec = std::move(spec);
    g.tables.push_back(std::move(t));
  }
  for (FusedFeatureSpec& spec : features) {
    auto it = index.find(spec.table_name);
    if (it == index.end()) {
      throw ConfigError(fmt::format("feature '{}' uses embedding table '{}', which is not defined",
                                    spec.name, spec.table_name));
    }
    if (spec.pooling != "sum" && spec.pooling != "mean") {
      throw ConfigError(fmt::format("feature '{}': pooling must be \"sum\" or \"mean\", got \"{}\"",
                                    spec.name, spec.pooling));
    }
    Group::Feature f;
    f.table = it->second;
    f.mean = spec.pooling == "mean";
    f.output_offset = g.total_dim;
    g.total_dim += g.tables[f.table].spec.weight.size(1);
    f.spec = std::move(spec);
    g.features.push_back(std::move(f));
  }
}

torch::Tensor FusedEmbeddingBags::forward(const std::vector<FusedFeatureInput>& inputs) {
  Group& g = *group_;
  const auto start = std::chrono::steady_clock::now();
  TORCH_CHECK(inputs.size() == g.features.size(), "FusedEmbeddingBags: ", inputs.size(),
              " inputs for ", g.features.size(), " features");
  int64_t batch_size = -1;
  std::vector<PreparedInput> prepared;
  prepared.reserve(inputs.size());
  for (size_t f = 0; f < inputs.size(); ++f) {
    prepared.push_back(prepare_input(g, f, inputs[f], batch_size));
  }
  if (batch_size < 0) batch_size = 0;
  torch::Tensor output;
  {
    torch::NoGradGuard no_grad;
    output = torch::empty({batch_size, g.total_dim}, torch::kFloat32);
    std::vector<tbe::TableBuffers> tables;
    for (Group::Table& t : g.tables) tables.push_back(table_buffers(t));
    tbe::pooled_forward(tables, feature_buffers(g, prepared), batch_size, output.data_ptr<float>(),
                        g.total_dim);
  }
  if (g.track_touched && torch::GradMode::is_enabled()) {
    for (size_t f = 0; f < prepared.size(); ++f) {
      g.tables[g.features[f].table].touched->mark(prepared[f].ids.data_ptr<int64_t>(), prepared[f].ids.numel());
    }
  }
  std::vector<torch::Tensor> trainable_weights;
  for (const Group::Table& t : g.tables) {
    if (t.spec.trainable && t.spec.weight.requires_grad()) trainable_weights.push_back(t.spec.weight);
  }
  if (torch::GradMode::is_enabled() && !trainable_weights.empty()) {
    auto node = std::shared_ptr<FusedEmbeddingBagsBackward>(
        new FusedEmbeddingBagsBackward(group_, std::move(prepared), batch_size),
        torch::autograd::deleteNode);
    node->set_next_edges(torch::autograd::collect_next_edges(trainable_weights));
    torch::autograd::set_history(output, node);
    g.last_found_inf = false;
  }
  g.timing.forward_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++g.timing.forward_calls;
  return output;
}

const FusedEmbeddingBags::Timing& FusedEmbeddingBags::timing() const { return group_->timing; }

void FusedEmbeddingBags::reset_timing() { group_->timing = Timing(); }

int64_t FusedEmbeddingBags::total_dim() const { return group_->total_dim; }

void FusedEmbeddingBags::track_touched_rows() {
  Group& g = *group_;
  if (g.track_touched) return;
  for (Group::Table& t : g.tables) t.touched = std::make_shared<TouchedRows>(t.spec.weight.size(0));
  g.track_touched = true;
}

torch::Tensor FusedEmbeddingBags::take_touched_rows(size_t table) {
  TORCH_CHECK(group_->track_touched, "FusedEmbeddingBags::take_touched_rows: tracking is off");
  return group_->tables.at(table).touched->take();
}

torch::Tensor FusedEmbeddingBags::read_rows(size_t table, const torch::Tensor& rows) const {
  return read_weight_rows(group_->tables.at(table).spec.weight, rows);
}

std::vector<int64_t> FusedEmbeddingBags::feature_dims() const {
  std::vector<int64_t> dims;
  for (const Group::Feature& f : group_->features) {
    dims.push_back(group_->tables[f.table].spec.weight.size(1));
  }
  return dims;
}

std::vector<FusedTableSpec> FusedEmbeddingBags::tables() const {
  std::vector<FusedTableSpec> out;
  for (const Group::Table& t : group_->tables) out.push_back(t.spec);
  return out;
}

std::vector<FusedFeatureSpec> FusedEmbeddingBags::features() const {
  std::vector<FusedFeatureSpec> out;
  for (const Group::Feature& f : group_->features) out.push_back(f.spec);
  return out;
}

const FusedOptimizerOptions& FusedEmbeddingBags::options() const { return group_->options; }

void FusedEmbeddingBags::set_lr(double lr) { group_->options.lr = lr; }

double FusedEmbeddingBags::lr() const { return group_->options.lr; }

void FusedEmbeddingBags::set_gradient_scale(std::optional<double> scale) {
  TORCH_CHECK(!scale || *scale > 0, "FusedEmbeddingBags: gradient scale must be > 0, got ", *scale);
  group_->gradient_scale = scale;
}

std::optional<double> FusedEmbeddingBags::gradient_scale() const { return group_->gradient_scale; }

bool FusedEmbeddingBags::last_backward_found_inf() const { return group_->last_found_inf; }

std::map<std::string, torch::Tensor> FusedEmbeddingBags::state_dict() const {
  std::map<std::string, torch::Tensor> out;
  for (const Group::Table& t : group_->tables) {
    if (!t.spec.trainable) continue;
    const std::string& n = t.spec.name;
    if (t.momentum1.defined()) out[n + ".momentum1"] = t.momentum1;
    if (t.momentum2.defined()) out[n + ".momentum2"] = t.momentum2;
    if (group_->layout.has_step) out[n + ".step"] = torch::tensor(t.step, torch::kInt64);
  }
  return out;
}

void FusedEmbeddingBags::reset_state_rows(const std::string& table, const torch::Tensor& rows) {
  for (Group::Table& t : group_->tables) {
    if (t.spec.name != table) continue;
    if (t.momentum1.defined()) t.momentum1.index_fill_(0, rows, initial_momentum1(group_->options));
    if (t.momentum2.defined()) t.momentum2.index_fill_(0, rows, 0.0);
    return;
  }
  TORCH_CHECK(false, "FusedEmbeddingBags::reset_state_rows: no table '", table, "'");
}

void FusedEmbeddingBags::load_state_dict(const std::map<std::string, torch::Tensor>& state) {
  const std::string kind = optimizer_name(group_->options.kind);
  std::map<std::string, torch::Tensor> expected = state_dict();
  for (const auto& [key, value] : state) {
    if (expected.count(key) == 0) {
      throw CheckpointError(fmt::format(
          "sparse optimizer state '{}' does not belong to any trainable embedding table of this "
          "{} optimizer; the checkpoint was written with a different model or sparse_optimizer",
          key, kind));
    }
  }
  for (const auto& [key, target] : expected) {
    auto it = state.find(key);
    if (it == state.end()) {
      throw CheckpointError(fmt::format(
          "sparse optimizer state '{}' is missing from the checkpoint; it was written with a "
          "different model or sparse_optimizer (use --ignore_restore_optimizer to start fresh)",
          key));
    }
    if (!it->second.defined() || it->second.sizes() != target.sizes()) {
      throw CheckpointError(fmt::format(
          "sparse optimizer state '{}' has shape [{}] in the checkpoint, expected [{}]", key,
          it->second.defined() ? fmt::format("{}", fmt::join(it->second.sizes(), ", ")) : "none",
          fmt::join(target.sizes(), ", ")));
    }
  }
  torch::NoGradGuard no_grad;
  for (Group::Table& t : group_->tables) {
    if (!t.spec.trainable) continue;
    const std::string& n = t.spec.name;
    if (t.momentum1.defined()) t.momentum1.copy_(state.at(n + ".momentum1"));
    if (t.momentum2.defined()) t.momentum2.copy_(state.at(n + ".momentum2"));
    if (group_->layout.has_step) t.step = state.at(n + ".step").item<int64_t>();
  }
}

}  // namespace tzrec::embedding
