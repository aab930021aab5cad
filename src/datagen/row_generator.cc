#include "datagen/row_generator.h"

#include <algorithm>
#include <map>

namespace tzrec::datagen {

namespace {

constexpr uint64_t kSaltRow = 0x5eed0000da7a0001ULL;
constexpr uint64_t kSaltCalibration = 0x5eed0000da7a0002ULL;
constexpr uint64_t kSaltItem = 0x5eed0000da7a0003ULL;
constexpr uint64_t kSaltEntity = 0x5eed0000da7a0004ULL;
constexpr uint64_t kSaltGroup = 0x5eed0000da7a0005ULL;
constexpr uint64_t kSaltColumn = 0x5eed0000da7a0006ULL;
constexpr uint64_t kSaltLabelNoise = 0x5eed0000da7a0007ULL;
constexpr int64_t kMaxEntities = 1000;
constexpr int64_t kCalibrationRows = 2000;

}  // namespace

RowGenerator::RowGenerator(const ColumnPlan& plan, uint64_t seed, const GenerativeOptions& generative)
    : plan_(&plan), seed_(seed), hidden_(plan, seed) {
  generators_.reserve(plan.columns.size());
  for (const auto& spec : plan.columns) {
    generators_.emplace_back(spec, seed);
    if (spec.item_id) {
      num_items_ = std::min(kMaxEntities, spec.domain.size);
      if (spec.sequence) {
        item_sequence_group_ = spec.sequence_group;
        item_sequence_length_ = sequence_items(spec);
      }
    }
    if (spec.user_id) num_users_ = std::min(kMaxEntities, spec.domain.size);
  }
  bool hidden_labels = true;
  if (plan.generative.enabled()) {
    generative_ = std::make_unique<GenerativeRows>(plan, generators_, seed, generative);
    hidden_labels = false;
    for (size_t c = 0; c < plan.columns.size(); ++c) {
      const ColumnSpec& spec = plan.columns[c];
      const bool written = plan.generative.writes(static_cast<int>(c));
      if (spec.role == Role::kLabel && !written) hidden_labels = true;
      // The sampler's entities are the generative rows' users and items when those write the id
      // columns.
      if (spec.item_id && written) {
        generative_items_ = true;
        num_items_ = generative_->num_items();
        item_sequence_group_.clear();
      }
      if (spec.user_id && written) {
        generative_user_ = true;
        num_users_ = generative_->num_users();
      }
    }
  }
  if (!hidden_labels) return;  // every label follows the interaction model
  std::vector<std::vector<Contribution>> samples(kCalibrationRows);
  std::vector<Cell> cells;
  for (int64_t i = 0; i < kCalibrationRows; ++i) {
    draw(mix(seed, kSaltCalibration, static_cast<uint64_t>(i)), &cells, &samples[i], nullptr, nullptr);
  }
  hidden_.calibrate(samples);
}

void RowGenerator::draw(uint64_t row_seed, std::vector<Cell>* cells,
                        std::vector<Contribution>* contributions, std::vector<int64_t>* items,
                        int64_t* user) const {
  const auto& columns = plan_->columns;
  cells->resize(columns.size());
  contributions->assign(columns.size(), Contribution{});
  std::map<std::string, int> group_counts;
  auto count_of = [&](const std::string& group, int lo, int hi) {
    auto it = group_counts.find(group);
    if (it != group_counts.end()) return it->second;
    Rng g(mix(row_seed, kSaltGroup, fnv1a64(group)));
    const int n = static_cast<int>(g.uniform_int(lo, std::max(lo, hi)));
    group_counts.emplace(group, n);
    return n;
  };
  std::vector<int64_t> generative_items;
  int64_t generative_user = -1;
  if (generative_ != nullptr) generative_->fill(row_seed, cells, contributions, &generative_items, &generative_user);
  Rng entity_rng(mix(row_seed, kSaltEntity));
  std::vector<int64_t> item_indexes;
  if (num_items_ > 0 && !generative_items_) {
    const int n = item_sequence_group_.empty() ? 1 : count_of(item_sequence_group_, 1, item_sequence_length_);
    for (int e = 0; e < n; ++e) item_indexes.push_back(zipf_rank(num_items_, entity_rng.unit()));
  }
  const int64_t user_index = num_users_ > 0 && !generative_user_ ? zipf_rank(num_users_, entity_rng.unit()) : -1;
  if (items != nullptr) *items = generative_items_ ? generative_items : item_indexes;
  if (user != nullptr) *user = generative_user_ ? generative_user : user_index;
  for (size_t c = 0; c < columns.size(); ++c) {
    const ColumnSpec& spec = columns[c];
    if (spec.role != Role::kInput || plan_->generative.writes(static_cast<int>(c))) continue;
    Cell& cell = (*cells)[c];
    Contribution& acc = (*contributions)[c];
    if (spec.user_id) {
      entity_cell(user_index, static_cast<int>(c), &cell, &acc);
      continue;
    }
    if ((spec.item_id || spec.item_attr) && !item_indexes.empty()) {
      if (spec.sequence) {
        sequence_cell(item_indexes, static_cast<int>(c), &cell, &acc);
      } else {
        entity_cell(item_indexes.front(), static_cast<int>(c), &cell, &acc);
      }
      continue;
    }
    int count;
    if (spec.sequence) {
      count = count_of(spec.sequence_group, 1, sequence_items(spec));
    } else if (!spec.length_group.empty()) {
      count = count_of(spec.length_group, spec.min_values, spec.max_values);
    } else {
      Rng n(mix(row_seed, kSaltGroup, fnv1a64(spec.name)));
      count = static_cast<int>(n.uniform_int(spec.min_values, std::max(spec.min_values, spec.max_values)));
    }
    Rng rng(mix(row_seed, kSaltColumn, fnv1a64(spec.name)));
    generators_[c].generate(rng, count, &cell, &acc);
  }
  for (size_t c = 0; c < columns.size(); ++c) {
    const ColumnSpec& spec = columns[c];
    if (spec.role == Role::kInput || plan_->generative.writes(static_cast<int>(c))) continue;
    Cell& cell = (*cells)[c];
    cell.clear();
    Rng rng(mix(row_seed, kSaltLabelNoise, fnv1a64(spec.name)));
    switch (spec.role) {
      case Role::kLabel: {
        const double v = hidden_.label(static_cast<int>(c), *contributions, rng);
        if (spec.label_kind == LabelKind::kFloat) {
          cell.floats.push_back(static_cast<float>(v));
        } else {
          cell.ints.push_back(static_cast<int64_t>(v));
        }
        break;
      }
      case Role::kSampleWeight:
        cell.floats.push_back(static_cast<float>(0.5 + 1.5 * rng.unit()));
        break;
      case Role::kCost:
        cell.ints.push_back(rng.uniform_int(1, 10));
        break;
      case Role::kInput:
        break;
    }
  }
}

void RowGenerator::row(int64_t index, std::vector<Cell>* cells, std::vector<int64_t>* items, int64_t* user) const {
  std::vector<Contribution> contributions;
  draw(mix(seed_, kSaltRow, static_cast<uint64_t>(index)), cells, &contributions, items, user);
}

void RowGenerator::entity_cell(int64_t id, int column, Cell* cell, Contribution* acc) const {
  const ColumnSpec& spec = plan_->columns[column];
  Rng rng(mix(seed_, kSaltItem, static_cast<uint64_t>(id), fnv1a64(spec.name)));
  if (spec.item_id || spec.user_id) {
    // The id itself; its contribution is a token drawn from the entity's stream.
    Cell ignored;
    generators_[column].generate(rng, 1, &ignored, acc);
    cell->clear();
    cell->ints.push_back(id);
    return;
  }
  const int count = static_cast<int>(rng.uniform_int(spec.min_values, std::max(spec.min_values, spec.max_values)));
  generators_[column].generate(rng, count, cell, acc);
}

void RowGenerator::sequence_cell(const std::vector<int64_t>& items, int column, Cell* cell,
                                 Contribution* acc) const {
  const ColumnSpec& spec = plan_->columns[column];
  std::string text;
  Contribution sum{};
  Cell element;
  for (size_t e = 0; e < items.size(); ++e) {
    if (e > 0) text += spec.sequence_delim;
    entity_cell(items[e], column, &element, &sum);
    text += ValueGenerator::cell_text(element, spec.sequence_delim);  // one value per element
  }
  for (int d = 0; d < kHiddenDim; ++d) (*acc)[d] += sum[d] / static_cast<double>(items.size());
  cell->clear();
  cell->strings.push_back(std::move(text));
}

void RowGenerator::item_attribute(int64_t item, int column, Cell* cell) const {
  if (generative_ != nullptr && plan_->generative.writes(column)) {
    generative_->item_attribute(item, column, cell);
    return;
  }
  Contribution ignored{};
  entity_cell(item, column, cell, &ignored);
}

}  // namespace tzrec::datagen
