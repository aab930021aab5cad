#include "datagen/generative_layout.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "base/error.h"
#include "datagen/feature_view.h"

namespace tzrec::datagen {

namespace pb = google::protobuf;

namespace {

const std::set<std::string> kGenerativeModels = {"dlrm_hstu", "ultra_hstu", "hstu_match"};
const std::vector<std::string> kAuxSuffixes = {"_action", "_watchtime", "_timestamp"};

struct FusionTask {
  std::string name;
  std::string label;
  uint64_t bitmask = 0;  // 0: no task_bitmask
  bool l2 = false;
};

// Calls visit on `m` and every message set inside it.
void visit_set_messages(const pb::Message& m, const std::function<void(const pb::Message&)>& visit) {
  visit(m);
  std::vector<const pb::FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const auto* fd : fields) {
    if (fd->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (fd->is_repeated()) {
      for (int i = 0; i < m.GetReflection()->FieldSize(m, fd); ++i) {
        visit_set_messages(m.GetReflection()->GetRepeatedMessage(m, fd, i), visit);
      }
    } else {
      visit_set_messages(m.GetReflection()->GetMessage(m, fd), visit);
    }
  }
}

const pb::Message* generative_model_message(const protos::ModelConfig& model, std::string* name) {
  const auto* oneof = model.GetDescriptor()->FindOneofByName("model");
  const auto* fd = oneof == nullptr ? nullptr : model.GetReflection()->GetOneofFieldDescriptor(model, oneof);
  if (fd == nullptr) return nullptr;
  *name = fd->name();
  return &model.GetReflection()->GetMessage(model, fd);
}

bool task_has_l2_loss(const pb::Message& task) {
  const auto* fd = task.GetDescriptor()->FindFieldByName("losses");
  if (fd == nullptr || !fd->is_repeated() || fd->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) return false;
  for (int i = 0; i < task.GetReflection()->FieldSize(task, fd); ++i) {
    if (has_field(task.GetReflection()->GetRepeatedMessage(task, fd, i), "l2_loss")) return true;
  }
  return false;
}

std::vector<std::string> task_name_words(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('_', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

class LayoutBuilder {
 public:
  LayoutBuilder(const protos::EasyRecConfig& config, std::vector<ColumnSpec>* columns)
      : config_(config), columns_(*columns) {}

  GenerativeLayout build() {
    std::string model_name;
    const pb::Message* model = generative_model_message(config_.model_config(), &model_name);
    for (const auto& g : config_.model_config().feature_groups()) {
      auto& groups = g.group_type() == protos::JAGGED_SEQUENCE ? jagged_ : groups_;
      groups[g.group_name()] = {g.feature_names().begin(), g.feature_names().end()};
    }
    if (jagged_.empty() && kGenerativeModels.count(model_name) == 0) return {};
    read_model(model);
    GenerativeLayout layout;
    owner_.assign(columns_.size(), std::string());
    std::string candidate_group = "candidate";
    if (model != nullptr && has_field(*model, "item_tower")) {
      const auto* fd = model->GetDescriptor()->FindFieldByName("item_tower");
      const std::string input = string_field(model->GetReflection()->GetMessage(*model, fd), "input");
      if (!input.empty()) candidate_group = input;
    }
    if (jagged_.count(candidate_group)) plan_candidates(candidate_group, &layout.candidates);
    for (const auto& [name, features] : jagged_) {
      if (name == candidate_group || name == "candidate_timestamp" || is_aux_group(name)) continue;
      HistoryChannel channel;
      if (plan_channel(name, &channel)) layout.channels.push_back(std::move(channel));
    }
    if (layout.channels.empty()) return {};
    // Keep the channels in the order of the config's feature groups.
    std::map<std::string, int> order;
    for (int i = 0; i < config_.model_config().feature_groups_size(); ++i) {
      order.emplace(config_.model_config().feature_groups(i).group_name(), i);
    }
    std::sort(layout.channels.begin(), layout.channels.end(),
              [&](const HistoryChannel& a, const HistoryChannel& b) { return order[a.group] < order[b.group]; });
    layout.actions = actions_;
    for (auto& channel : layout.channels) channel.action_filter = channel_filter(channel.group);
    plan_labels(&layout.candidates);
    // A proto2 bool with default true: unset reads true.
    const auto* ascending_field =
        model == nullptr ? nullptr : model->GetDescriptor()->FindFieldByName("sequence_timestamp_is_ascending");
    const bool ascending = ascending_field == nullptr || model->GetReflection()->GetBool(*model, ascending_field);
    layout.histories_reversed = !ascending;
    layout.candidates.reversed = !ascending && model_name != "hstu_match";
    plan_user_columns(&layout);
    layout.written.assign(columns_.size(), false);
    for (size_t c = 0; c < columns_.size(); ++c) layout.written[c] = !owner_[c].empty();
    for (int c : layout.user_columns) layout.written[static_cast<size_t>(c)] = true;
    for (int c : layout.request_time_columns) layout.written[static_cast<size_t>(c)] = true;
    return layout;
  }

 private:
  bool is_aux_group(const std::string& name) const {
    for (const auto& suffix : kAuxSuffixes) {
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
          jagged_.count(name.substr(0, name.size() - suffix.size()))) {
        return true;
      }
    }
    return false;
  }

  void read_model(const pb::Message* model) {
    actions_ = {1};
    if (model == nullptr) return;
    std::set<uint64_t> actions;
    visit_set_messages(*model, [&](const pb::Message& m) {
      const auto* d = m.GetDescriptor();
      if (d->FindFieldByName("task_bitmask") != nullptr && d->FindFieldByName("label_name") != nullptr) {
        FusionTask t;
        t.name = string_field(m, "task_name");
        t.label = string_field(m, "label_name");
        if (has_field(m, "task_bitmask")) t.bitmask = uint_field(m, "task_bitmask");
        t.l2 = task_has_l2_loss(m);
        if (t.bitmask != 0) actions.insert(t.bitmask);
        tasks_.push_back(std::move(t));
      }
      const auto* weights = d->FindFieldByName("action_weights");
      if (weights != nullptr && weights->is_repeated() && weights->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT32) {
        for (int i = 0; i < m.GetReflection()->FieldSize(m, weights); ++i) {
          const uint32_t w = m.GetReflection()->GetRepeatedUInt32(m, weights, i);
          if (w != 0) actions.insert(w);
        }
      }
      for (const char* key : {"session_name", "grouping_key"}) {
        const std::string v = string_field(m, key);
        if (!v.empty()) session_features_.push_back(v);
      }
    });
    actions_.assign(actions.begin(), actions.end());
    if (actions_.empty()) actions_.push_back(1);
  }

  // Input columns read by the group's feature `feature`, in plan order.
  std::vector<int> columns_of(const std::string& feature) const {
    std::vector<int> out;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (columns_[c].role != Role::kInput) continue;
      for (const auto& tag : columns_[c].features) {
        if (feature == tag) {
          out.push_back(static_cast<int>(c));
          break;
        }
      }
    }
    return out;
  }

  // The first sequence column of a group's features; -1 when none.
  int first_sequence_column(const std::string& group) const {
    auto it = jagged_.find(group);
    if (it == jagged_.end()) return -1;
    for (const auto& f : it->second) {
      for (int c : columns_of(f)) {
        if (columns_[static_cast<size_t>(c)].sequence) return c;
      }
    }
    return -1;
  }

  // Claims column `c` for `group`; a column another group's sequences hold is an error.
  void claim(int c, const std::string& group) {
    if (c < 0) return;
    std::string& owner = owner_[static_cast<size_t>(c)];
    if (!owner.empty() && owner != group) {
      throw ConfigError(fmt::format("model_config.feature_groups: column '{}' belongs to the sequences of both "
                                    "feature group '{}' and '{}'; a history channel and the candidates must "
                                    "read different sequence_features",
                                    columns_[static_cast<size_t>(c)].name, owner, group));
    }
    owner = group;
  }

  // The sequence columns of `group`'s features and every other column of their sequences, except
  // `taken`, in plan order; all are claimed for `owner`.
  std::vector<int> attributes(const std::vector<std::string>& groups, const std::string& owner,
                              const std::set<int>& taken) {
    std::set<std::string> sequences;
    std::set<int> named;
    for (const auto& g : groups) {
      auto it = jagged_.find(g);
      if (it == jagged_.end()) continue;
      for (const auto& f : it->second) {
        for (int c : columns_of(f)) {
          if (!columns_[static_cast<size_t>(c)].sequence) continue;
          named.insert(c);
          sequences.insert(columns_[static_cast<size_t>(c)].sequence_group);
        }
      }
    }
    std::vector<int> out;
    for (size_t c = 0; c < columns_.size(); ++c) {
      const ColumnSpec& spec = columns_[c];
      const int ci = static_cast<int>(c);
      if (spec.role != Role::kInput || !spec.sequence) continue;
      if (!named.count(ci) && !sequences.count(spec.sequence_group)) continue;
      claim(ci, owner);
      if (!taken.count(ci)) out.push_back(ci);
    }
    return out;
  }

  void plan_candidates(const std::string& group, CandidateLayout* out) {
    const int item = first_sequence_column(group);
    if (item < 0) return;
    out->group = group;
    out->item_column = item;
    out->query_time_column = first_sequence_column("candidate_timestamp");
    std::set<int> taken = {item};
    if (out->query_time_column >= 0) taken.insert(out->query_time_column);
    out->attribute_columns = attributes({group, "candidate_timestamp"}, group, taken);
    out->sequence_length = min_length(taken, out->attribute_columns);
    out->positives = columns_[static_cast<size_t>(item)].item_id;
  }

  bool plan_channel(const std::string& group, HistoryChannel* out) {
    const int item = first_sequence_column(group);
    if (item < 0) return false;
    out->group = group;
    out->item_column = item;
    out->action_column = first_sequence_column(group + "_action");
    out->watch_time_column = first_sequence_column(group + "_watchtime");
    out->timestamp_column = first_sequence_column(group + "_timestamp");
    std::set<int> taken;
    for (int c : {item, out->action_column, out->watch_time_column, out->timestamp_column}) {
      if (c >= 0) taken.insert(c);
    }
    out->attribute_columns =
        attributes({group, group + "_action", group + "_watchtime", group + "_timestamp"}, group, taken);
    out->sequence_length = min_length(taken, out->attribute_columns);
    return true;
  }

  int min_length(const std::set<int>& a, const std::vector<int>& b) const {
    int n = 0;
    auto take = [&](int c) {
      const int len = columns_[static_cast<size_t>(c)].sequence_length;
      if (len > 0) n = n == 0 ? len : std::min(n, len);
    };
    for (int c : a) take(c);
    for (int c : b) take(c);
    return n;
  }

  uint64_t channel_filter(const std::string& group) const {
    const auto p = group.find('_');
    if (p == std::string::npos) return 0;
    const std::string word = group.substr(p + 1);
    std::set<uint64_t> masks;
    for (const auto& t : tasks_) {
      if (t.bitmask == 0) continue;
      const auto words = task_name_words(t.name);
      if (t.name == word || std::find(words.begin(), words.end(), word) != words.end()) masks.insert(t.bitmask);
    }
    return masks.size() == 1 ? *masks.begin() : 0;
  }

  void plan_labels(CandidateLayout* cand) {
    if (cand->item_column < 0) return;
    const std::string sequence = columns_[static_cast<size_t>(cand->item_column)].sequence_group;
    for (size_t c = 0; c < columns_.size(); ++c) {
      ColumnSpec& spec = columns_[c];
      if (spec.role != Role::kLabel) continue;
      bool by_task = false;
      bool by_bitmask = false;
      bool by_l2 = false;
      for (const auto& t : tasks_) {
        if (t.label != spec.name) continue;
        by_task = true;
        by_bitmask = by_bitmask || t.bitmask != 0;
        by_l2 = by_l2 || (t.bitmask == 0 && t.l2);
      }
      const bool prefixed = spec.name.rfind(sequence + "_", 0) == 0 && spec.name.size() > sequence.size() + 1;
      if (!by_task && !prefixed) continue;
      const bool watch = !by_bitmask && (by_l2 || spec.name.find("watch") != std::string::npos);
      spec.layout = Layout::kList;
      spec.domain = Domain::ids(int64_t{1} << 40);
      (watch ? cand->watch_time_label_columns : cand->action_label_columns).push_back(static_cast<int>(c));
      owner_[c] = cand->group;
    }
  }

  void plan_user_columns(GenerativeLayout* layout) {
    auto plain_input = [&](size_t c) {
      const ColumnSpec& s = columns_[c];
      // A sampler's scalar item columns stay with the sampler's items (row_generator.h).
      return s.role == Role::kInput && !s.sequence && !s.item_id && !s.item_attr && owner_[c].empty();
    };
    std::set<int> request;
    if (auto it = groups_.find("query_time"); it != groups_.end()) {
      for (const auto& f : it->second) {
        for (int c : columns_of(f)) {
          if (plain_input(static_cast<size_t>(c))) request.insert(c);
        }
      }
    }
    layout->request_time_columns.assign(request.begin(), request.end());
    int user = -1;
    for (size_t c = 0; c < columns_.size() && user < 0; ++c) {
      if (columns_[c].user_id && plain_input(c)) user = static_cast<int>(c);
    }
    for (size_t k = 0; k < session_features_.size() && user < 0; ++k) {
      for (int c : columns_of(session_features_[k])) {
        if (plain_input(static_cast<size_t>(c)) && !request.count(c)) {
          user = c;
          break;
        }
      }
    }
    for (size_t c = 0; c < columns_.size() && user < 0; ++c) {
      const ColumnSpec& s = columns_[c];
      const bool named =
          s.name == "user_id" || std::find(s.features.begin(), s.features.end(), "user_id") != s.features.end();
      if (named && plain_input(c) && !request.count(static_cast<int>(c))) user = static_cast<int>(c);
    }
    layout->user_column = user;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (plain_input(c) && !request.count(static_cast<int>(c))) layout->user_columns.push_back(static_cast<int>(c));
    }
  }

  const protos::EasyRecConfig& config_;
  std::vector<ColumnSpec>& columns_;
  std::map<std::string, std::vector<std::string>> jagged_;
  std::map<std::string, std::vector<std::string>> groups_;  // the other feature groups
  std::vector<FusionTask> tasks_;
  std::vector<uint64_t> actions_;
  std::vector<std::string> session_features_;
  std::vector<std::string> owner_;  // per column: the group whose sequences hold it
};

}  // namespace

GenerativeLayout plan_generative_layout(const protos::EasyRecConfig& config, std::vector<ColumnSpec>* columns) {
  return LayoutBuilder(config, columns).build();
}

}  // namespace tzrec::datagen
