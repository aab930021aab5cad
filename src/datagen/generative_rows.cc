#include "datagen/generative_rows.h"

#include <algorithm>
#include <cmath>

#include "config/feature_util.h"

namespace tzrec::datagen {

namespace {

constexpr uint64_t kSaltGenerativeRow = 0x9e4e7a71e0000001ULL;
constexpr uint64_t kSaltGenerativeUserColumn = 0x9e4e7a71e0000002ULL;
constexpr uint64_t kSaltGenerativeAttribute = 0x9e4e7a71e0000003ULL;
constexpr uint64_t kSaltGenerativePropensity = 0x9e4e7a71e0000004ULL;
constexpr int kPositiveTries = 32;

// The items of the layout's item columns: their smallest id range, at most kMaxGenerativeItems.
int64_t count_generative_items(const ColumnPlan& plan) {
  int64_t n = kMaxGenerativeItems;
  auto take = [&](int c) {
    if (c < 0) return;
    const Domain& d = plan.columns[static_cast<size_t>(c)].domain;
    if (d.kind == Domain::Kind::kIds) n = std::min(n, d.size);
  };
  for (const auto& ch : plan.generative.channels) take(ch.item_column);
  take(plan.generative.candidates.item_column);
  return std::max<int64_t>(n, 1);
}

// The name of an attribute after its grouped sequence's prefix.
std::string attribute_stem(const ColumnSpec& column) {
  const std::string prefix = config::grouped_sequence_prefix(column.sequence_group);
  return column.name.rfind(prefix, 0) == 0 ? column.name.substr(prefix.size()) : column.name;
}

// Log-uniform integer in [1, cap].
int log_uniform_length(Rng& rng, int cap) {
  const int n = static_cast<int>(std::floor(std::exp(rng.unit() * std::log(cap + 1.0))));
  return std::clamp(n, 1, std::max(cap, 1));
}

// One number in a non-sequence column of `spec`; FLOAT columns get the smallest float >= value.
void set_request_time(const ColumnSpec& spec, int64_t value, Cell* cell) {
  cell->clear();
  switch (spec.domain.kind) {
    case Domain::Kind::kIds:
    case Domain::Kind::kFlag:
      cell->ints.push_back(value);
      break;
    case Domain::Kind::kFloat: {
      float f = static_cast<float>(value);
      if (static_cast<double>(f) < static_cast<double>(value)) f = std::nextafter(f, HUGE_VALF);
      cell->floats.push_back(f);
      break;
    }
    default:
      cell->strings.push_back(std::to_string(value));
      break;
  }
}

}  // namespace

GenerativeRows::GenerativeRows(const ColumnPlan& plan, const std::vector<ValueGenerator>& generators, uint64_t seed,
                               const GenerativeOptions& options)
    : plan_(&plan),
      layout_(&plan.generative),
      generators_(&generators),
      seed_(seed),
      model_(count_generative_items(plan), plan.generative.actions, seed) {
  const auto& columns = plan.columns;
  const GenerativeLayout& g = *layout_;
  if (g.user_column >= 0) {
    const Domain& d = columns[static_cast<size_t>(g.user_column)].domain;
    if (d.kind == Domain::Kind::kIds) num_users_ = std::max<int64_t>(1, std::min(num_users_, d.size));
  }
  // A sequence whose config sets no sequence_length (the engine keeps every item) gets the option's
  // cap alone.
  auto cap = [](int sequence_length, int option) {
    const int limit = std::max(option, 1);
    return sequence_length > 0 ? std::min(sequence_length, limit) : limit;
  };
  for (const auto& ch : g.channels) history_caps_.push_back(cap(ch.sequence_length, options.max_history_length));
  candidate_cap_ = cap(g.candidates.sequence_length, options.max_candidates);

  // Item attributes are keyed by their name after the sequence prefix; a candidate column of that
  // name supplies the generator, so that every sequence and the sampler's table agree.
  attribute_key_.assign(columns.size(), -1);
  attribute_hash_.assign(columns.size(), 0);
  item_column_.assign(columns.size(), false);
  std::vector<int> attributes = g.candidates.attribute_columns;
  for (const auto& ch : g.channels) {
    attributes.insert(attributes.end(), ch.attribute_columns.begin(), ch.attribute_columns.end());
  }
  std::vector<int> item_columns;
  if (g.candidates.item_column >= 0) item_columns.push_back(g.candidates.item_column);
  for (const auto& ch : g.channels) item_columns.push_back(ch.item_column);
  for (int c : item_columns) item_column_[static_cast<size_t>(c)] = true;
  attributes.insert(attributes.end(), item_columns.begin(), item_columns.end());
  for (int c : attributes) {
    const std::string name = attribute_stem(columns[static_cast<size_t>(c)]);
    attribute_hash_[static_cast<size_t>(c)] = fnv1a64(name);
    attribute_key_[static_cast<size_t>(c)] = c;
    for (int k : g.candidates.attribute_columns) {
      if (attribute_stem(columns[static_cast<size_t>(k)]) == name) attribute_key_[static_cast<size_t>(c)] = k;
    }
    if (item_column_[static_cast<size_t>(c)] && g.candidates.item_column >= 0) {
      attribute_key_[static_cast<size_t>(c)] = g.candidates.item_column;
    }
  }

  propensity_weights_.assign(columns.size(), Contribution{});
  double norm2 = 0.0;
  for (int c : g.user_columns) {
    for (int d = 0; d < kHiddenDim; ++d) {
      const uint64_t h = fnv1a64(columns[static_cast<size_t>(c)].name);
      const double w = normal_from(mix(seed, kSaltGenerativePropensity, h, static_cast<uint64_t>(d)));
      propensity_weights_[static_cast<size_t>(c)][d] = w;
      norm2 += w * w;
    }
  }
  propensity_norm_ = norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
}

std::string GenerativeRows::element_text(int64_t item, int column) const {
  const int key = attribute_key_[static_cast<size_t>(column)];
  const ColumnSpec& spec = plan_->columns[static_cast<size_t>(key)];
  if (item_column_[static_cast<size_t>(column)] && spec.domain.kind == Domain::Kind::kIds) {
    return std::to_string(item);
  }
  Rng rng(mix(seed_, kSaltGenerativeAttribute, static_cast<uint64_t>(item),
              attribute_hash_[static_cast<size_t>(column)]));
  Cell cell;
  Contribution ignored{};
  (*generators_)[static_cast<size_t>(key)].generate(rng, 1, &cell, &ignored);
  return ValueGenerator::cell_text(cell, spec.sequence_delim);
}

void GenerativeRows::item_attribute(int64_t item, int column, Cell* cell) const {
  cell->clear();
  cell->strings.push_back(element_text(item, column));
}

double GenerativeRows::user_cells(int64_t user, std::vector<Cell>* cells,
                                  std::vector<Contribution>* contributions) const {
  const auto& columns = plan_->columns;
  double score = 0.0;
  for (int c : layout_->user_columns) {
    const ColumnSpec& spec = columns[static_cast<size_t>(c)];
    Cell& cell = (*cells)[static_cast<size_t>(c)];
    Contribution& acc = (*contributions)[static_cast<size_t>(c)];
    Rng rng(mix(seed_, kSaltGenerativeUserColumn, static_cast<uint64_t>(user), fnv1a64(spec.name)));
    int count = 1;
    if (spec.layout != Layout::kScalar) {
      Rng n(mix(seed_, kSaltGenerativeUserColumn, static_cast<uint64_t>(user),
                fnv1a64(spec.length_group.empty() ? spec.name : spec.length_group)));
      count = static_cast<int>(n.uniform_int(spec.min_values, std::max(spec.min_values, spec.max_values)));
    }
    (*generators_)[static_cast<size_t>(c)].generate(rng, count, &cell, &acc);
    if (c == layout_->user_column && spec.domain.kind == Domain::Kind::kIds && spec.layout == Layout::kScalar) {
      cell.clear();
      cell.ints.push_back(user);
    }
    for (int d = 0; d < kHiddenDim; ++d) score += propensity_weights_[static_cast<size_t>(c)][d] * acc[d];
  }
  return score * propensity_norm_;
}

void GenerativeRows::fill(uint64_t row_seed, std::vector<Cell>* cells, std::vector<Contribution>* contributions,
                          std::vector<int64_t>* items, int64_t* user) const {
  const auto& columns = plan_->columns;
  const GenerativeLayout& g = *layout_;
  Rng rng(mix(row_seed, kSaltGenerativeRow));
  const int64_t u = rng.uniform_int(0, num_users_ - 1);
  const UserProfile profile = model_.user(u, user_cells(u, cells, contributions));
  if (user != nullptr) {
    *user = g.user_column >= 0 && columns[static_cast<size_t>(g.user_column)].user_id ? u : -1;
  }

  // The events, newest first, until every channel has its length.
  const size_t num_channels = g.channels.size();
  std::vector<size_t> targets(num_channels);
  for (size_t k = 0; k < num_channels; ++k) targets[k] = static_cast<size_t>(log_uniform_length(rng, history_caps_[k]));
  std::vector<std::vector<size_t>> picked(num_channels);
  std::vector<Interaction> events;
  const int64_t end = InteractionModel::end_time(rng);
  int64_t time = end;
  bool done = false;
  while (!done && events.size() < static_cast<size_t>(kMaxEvents)) {
    Interaction e;
    const int64_t item = model_.draw_item(profile, kHistoryInterest, rng);
    model_.respond(profile, item, model_.taste_affinity(profile, item), rng, &e);
    if (!events.empty()) time -= InteractionModel::gap_after(e.watch_time, rng);
    e.time = time;
    events.push_back(e);
    done = true;
    for (size_t k = 0; k < num_channels; ++k) {
      const uint64_t filter = g.channels[k].action_filter;
      if (picked[k].size() < targets[k] && (filter == 0 || (e.action & filter) != 0)) {
        picked[k].push_back(events.size() - 1);
      }
      done = done && picked[k].size() >= targets[k];
    }
  }
  for (size_t k = 0; k < num_channels; ++k) {
    if (!picked[k].empty()) continue;
    events[0].action |= g.channels[k].action_filter;
    picked[k].push_back(0);
  }

  // The channels' columns.
  auto sequence_cell = [&](int column, const std::vector<const Interaction*>& elements, auto value_of) {
    if (column < 0) return;
    const ColumnSpec& spec = columns[static_cast<size_t>(column)];
    std::string text;
    for (size_t e = 0; e < elements.size(); ++e) {
      if (e > 0) text += spec.sequence_delim;
      text += value_of(*elements[e]);
    }
    Cell& cell = (*cells)[static_cast<size_t>(column)];
    cell.clear();
    cell.strings.push_back(std::move(text));
  };
  auto write_items = [&](int ch_item, const std::vector<int>& attrs, const std::vector<const Interaction*>& el) {
    sequence_cell(ch_item, el, [&](const Interaction& e) { return element_text(e.item, ch_item); });
    for (int c : attrs) sequence_cell(c, el, [&](const Interaction& e) { return element_text(e.item, c); });
  };
  std::vector<bool> observed(events.size(), false);
  for (size_t k = 0; k < num_channels; ++k) {
    const HistoryChannel& ch = g.channels[k];
    std::vector<const Interaction*> elements;  // oldest first
    for (auto it = picked[k].rbegin(); it != picked[k].rend(); ++it) {
      elements.push_back(&events[*it]);
      observed[*it] = true;
    }
    if (g.histories_reversed) std::reverse(elements.begin(), elements.end());
    write_items(ch.item_column, ch.attribute_columns, elements);
    sequence_cell(ch.timestamp_column, elements, [](const Interaction& e) { return std::to_string(e.time); });
    sequence_cell(ch.action_column, elements, [](const Interaction& e) { return std::to_string(e.action); });
    sequence_cell(ch.watch_time_column, elements, [](const Interaction& e) { return std::to_string(e.watch_time); });
  }
  std::vector<Interaction> history;  // the observed events, oldest first
  for (size_t i = events.size(); i-- > 0;) {
    if (observed[i]) history.push_back(events[i]);
  }

  // The candidates.
  const CandidateLayout& cand = g.candidates;
  const double first_gap = std::exp(std::log(5.0) + (std::log(86400.0) - std::log(5.0)) * rng.unit());
  int64_t request_time = end + std::llround(first_gap);
  if (items != nullptr) items->clear();
  if (cand.item_column >= 0) {
    const int n = static_cast<int>(rng.uniform_int(1, candidate_cap_));
    std::vector<Interaction> shown(static_cast<size_t>(n));
    int64_t t = request_time;
    for (auto& c : shown) {
      if (cand.positives) {
        for (int tries = 0; tries < kPositiveTries; ++tries) {
          const int64_t item = model_.draw_item(profile, kPositiveInterest, rng);
          model_.respond(profile, item, model_.recent_affinity(history, item), rng, &c);
          if (c.action != 0) break;
        }
        if (c.action == 0) c.action = model_.actions().front();
      } else {
        const int64_t item = model_.draw_item(profile, kCandidateInterest, rng);
        model_.respond(profile, item, model_.recent_affinity(history, item), rng, &c);
      }
      c.time = t;
      t += InteractionModel::gap_after(c.watch_time, rng);
    }
    if (cand.reversed) std::reverse(shown.begin(), shown.end());
    std::vector<const Interaction*> elements;
    for (const auto& c : shown) {
      elements.push_back(&c);
      if (items != nullptr) items->push_back(c.item);
    }
    write_items(cand.item_column, cand.attribute_columns, elements);
    sequence_cell(cand.query_time_column, elements, [](const Interaction& e) { return std::to_string(e.time); });
    auto label_cell = [&](int column, auto value_of) {
      Cell& cell = (*cells)[static_cast<size_t>(column)];
      cell.clear();
      for (const auto& c : shown) cell.ints.push_back(value_of(c));
    };
    for (int c : cand.action_label_columns) {
      label_cell(c, [](const Interaction& e) { return static_cast<int64_t>(e.action); });
    }
    for (int c : cand.watch_time_label_columns) {
      label_cell(c, [](const Interaction& e) { return e.watch_time; });
    }
  }
  for (int c : g.request_time_columns) {
    set_request_time(columns[static_cast<size_t>(c)], request_time, &(*cells)[static_cast<size_t>(c)]);
  }
}

}  // namespace tzrec::datagen
