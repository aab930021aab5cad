#include "embedding/sparse_optimizer.h"

#include <cmath>
#include <set>

#include <fmt/ranges.h>

#include "base/error.h"

namespace tzrec::embedding {

SparseOptimizer::SparseOptimizer(SparseOptimizerOptions options, std::vector<EmbeddingTable> tables)
    : options_(options) {
  std::set<std::string> names;
  for (EmbeddingTable& t : tables) {
    TORCH_CHECK(names.insert(t.name).second, "SparseOptimizer: table ", t.name, " given twice");
    TORCH_CHECK(t.weight.defined() && t.weight.dim() == 2 && t.weight.scalar_type() == torch::kFloat32,
                "SparseOptimizer: table ", t.name, " must have a 2-D float32 weight");
    if (!t.trainable) continue;
    TableState s;
    s.table = t;
    auto opts = t.weight.options().requires_grad(false);
    if (options_.kind == SparseOptimizerOptions::Kind::kAdagrad) {
      s.momentum1 = torch::full(t.weight.sizes(), options_.initial_accumulator_value, opts);
    } else if (options_.kind == SparseOptimizerOptions::Kind::kAdam) {
      s.momentum1 = torch::zeros(t.weight.sizes(), opts);
      s.momentum2 = torch::zeros(t.weight.sizes(), opts);
    }
    tables_.push_back(std::move(s));
  }
}

void SparseOptimizer::zero_grad() {
  for (TableState& s : tables_) {
    if (s.table.weight.grad().defined()) s.table.weight.mutable_grad() = torch::Tensor();
  }
}

void SparseOptimizer::step() {
  torch::NoGradGuard no_grad;
  for (TableState& s : tables_) {
    // FBGEMM increments its iteration counter on every training forward of the module, whether or
    // not a given table received ids, so the Adam step advances for every trainable table.
    ++s.step;
    const torch::Tensor& grad = s.table.weight.grad();
    if (!grad.defined()) continue;
    update_table(s, grad);
  }
}

void SparseOptimizer::update_table(TableState& s, const torch::Tensor& grad) {
  TORCH_CHECK(grad.is_sparse(), "SparseOptimizer: table ", s.table.name,
              " has a dense gradient; embedding tables must be looked up through "
              "EmbeddingBagCollection, which produces sparse gradients");
  // Coalesce: one row per distinct id, duplicate ids' gradients summed (FBGEMM sums per row).
  torch::Tensor coalesced = grad.coalesce();
  torch::Tensor rows = coalesced.indices()[0];            // [U] int64, distinct row ids
  torch::Tensor g = coalesced.values().to(torch::kFloat32);  // [U, dim]
  if (rows.numel() == 0) return;
  torch::Tensor& weight = s.table.weight;
  torch::Tensor w = weight.index_select(0, rows);  // [U, dim]
  const double lr = options_.lr;
  torch::Tensor new_w;
  switch (options_.kind) {
    case SparseOptimizerOptions::Kind::kSgd:
      new_w = w - lr * g;
      break;
    case SparseOptimizerOptions::Kind::kAdagrad: {
      torch::Tensor m = s.momentum1.index_select(0, rows) + g * g;  // [U, dim]
      s.momentum1.index_copy_(0, rows, m);
      new_w = w - lr * g / (m.sqrt() + options_.eps);
      break;
    }
    case SparseOptimizerOptions::Kind::kAdam: {
      const double b1 = options_.beta1, b2 = options_.beta2;
      const double t = static_cast<double>(s.step);
      torch::Tensor m = s.momentum1.index_select(0, rows) * b1 + g * (1.0 - b1);
      torch::Tensor v = s.momentum2.index_select(0, rows) * b2 + g * g * (1.0 - b2);
      s.momentum1.index_copy_(0, rows, m);
      s.momentum2.index_copy_(0, rows, v);
      torch::Tensor m_hat = m / (1.0 - std::pow(b1, t));
      torch::Tensor v_hat = v / (1.0 - std::pow(b2, t));
      new_w = w - lr * (m_hat / (v_hat.sqrt() + options_.eps) + options_.weight_decay * w);
      break;
    }
  }
  weight.index_copy_(0, rows, new_w);
}

std::map<std::string, torch::Tensor> SparseOptimizer::state_dict() const {
  std::map<std::string, torch::Tensor> out;
  for (const TableState& s : tables_) {
    const std::string& n = s.table.name;
    if (s.momentum1.defined()) out[n + ".momentum1"] = s.momentum1;
    if (s.momentum2.defined()) out[n + ".momentum2"] = s.momentum2;
    if (options_.kind == SparseOptimizerOptions::Kind::kAdam) {
      out[n + ".step"] = torch::tensor(s.step, torch::kInt64);
    }
  }
  return out;
}

void SparseOptimizer::load_state_dict(const std::map<std::string, torch::Tensor>& state) {
  std::map<std::string, torch::Tensor> expected = state_dict();
  for (const auto& [key, value] : state) {
    if (expected.count(key) == 0) {
      throw CheckpointError(fmt::format(
          "sparse optimizer state '{}' does not belong to any trainable embedding table of this "
          "optimizer kind; the checkpoint was written with a different model or sparse_optimizer",
          key));
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
    if (it->second.sizes() != target.sizes()) {
      throw CheckpointError(fmt::format("sparse optimizer state '{}' has shape [{}] in the checkpoint, "
                                        "expected [{}]",
                                        key, fmt::join(it->second.sizes(), ", "),
                                        fmt::join(target.sizes(), ", ")));
    }
  }
  torch::NoGradGuard no_grad;
  for (TableState& s : tables_) {
    const std::string& n = s.table.name;
    if (s.momentum1.defined()) s.momentum1.copy_(state.at(n + ".momentum1"));
    if (s.momentum2.defined()) s.momentum2.copy_(state.at(n + ".momentum2"));
    if (options_.kind == SparseOptimizerOptions::Kind::kAdam) {
      s.step = state.at(n + ".step").item<int64_t>();
    }
  }
}

}  // namespace tzrec::embedding
