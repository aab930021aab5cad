#include "datagen/column_spec.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"

namespace tzrec::datagen {

Domain Domain::ids(int64_t size, bool any_token) {
  Domain d;
  d.kind = Kind::kIds;
  d.size = std::max<int64_t>(size, 1);
  d.any_token = any_token;
  return d;
}

Domain Domain::vocabulary(std::vector<std::string> entries) {
  Domain d;
  d.kind = Kind::kVocab;
  d.vocab = std::move(entries);
  return d;
}

Domain Domain::floats(double lo, double hi) {
  Domain d;
  d.kind = Kind::kFloat;
  d.lo = lo;
  d.hi = hi;
  return d;
}

Domain Domain::positive_floats(double mu, double sigma) {
  Domain d = floats(mu, sigma);
  d.log_normal = true;
  return d;
}

Domain Domain::words(int64_t size) {
  Domain d;
  d.kind = Kind::kWords;
  d.size = std::max<int64_t>(size, 1);
  return d;
}

Domain Domain::flag() {
  Domain d;
  d.kind = Kind::kFlag;
  d.size = 2;
  return d;
}

namespace {

std::string describe_domain(const Domain& d) {
  switch (d.kind) {
    case Domain::Kind::kIds:
      return d.any_token ? "hashed ids" : fmt::format("ids in [0, {})", d.size);
    case Domain::Kind::kVocab:
      return fmt::format("vocabulary strings ({} entries)", d.vocab.size());
    case Domain::Kind::kFloat:
      return "numbers";
    case Domain::Kind::kWords:
      return "words";
    case Domain::Kind::kFlag:
      return "0/1 flags";
  }
  return "values";
}

bool is_text_layout(Layout l) {
  return l == Layout::kJoined || l == Layout::kWeighted || l == Layout::kLookupMap ||
         l == Layout::kNestedMap;
}

// Domain that satisfies both readers, or false.
bool merge_domain(const Domain& a, const Domain& b, Domain* out) {
  using K = Domain::Kind;
  if (a.kind == K::kIds && a.any_token) {
    *out = b;
    if (b.kind == K::kIds && b.any_token) out->size = std::min(a.size, b.size);
    return true;
  }
  if (b.kind == K::kIds && b.any_token) {
    *out = a;
    return true;
  }
  if (a.kind == K::kIds && b.kind == K::kIds) {
    *out = a;
    out->size = std::min(a.size, b.size);
    return true;
  }
  // Integer ids are numbers too.
  if (a.kind == K::kIds && b.kind == K::kFloat) {
    *out = a;
    return true;
  }
  if (a.kind == K::kFloat && b.kind == K::kIds) {
    *out = b;
    return true;
  }
  if (a.kind == b.kind && (a.kind == K::kFloat || a.kind == K::kVocab || a.kind == K::kWords ||
                           a.kind == K::kFlag)) {
    *out = a;
    return true;
  }
  return false;
}

}  // namespace

std::string describe(const ColumnSpec& spec) {
  std::string what;
  switch (spec.layout) {
    case Layout::kScalar:
      what = describe_domain(spec.domain);
      break;
    case Layout::kList:
      what = "lists of " + describe_domain(spec.domain);
      break;
    case Layout::kJoined:
      what = "joined " + describe_domain(spec.domain);
      break;
    case Layout::kWeighted:
      what = "weighted " + describe_domain(spec.domain) + " (value:weight)";
      break;
    case Layout::kLookupMap:
      what = "a lookup map (key:value)";
      break;
    case Layout::kNestedMap:
      what = "a nested map (pk^sk:value)";
      break;
  }
  if (spec.sequence) what = "sequences of " + what;
  return what;
}

parquet::WriterField column_field(const ColumnSpec& spec) {
  parquet::WriterField field;
  field.name = spec.name;
  field.nullable = false;
  field.element_nullable = false;
  field.string = true;
  if (spec.sequence || is_text_layout(spec.layout)) {
    field.type = parquet::PhysicalType::kByteArray;
    return field;
  }
  switch (spec.domain.kind) {
    case Domain::Kind::kIds:
    case Domain::Kind::kFlag:
      field.type = parquet::PhysicalType::kInt64;
      break;
    case Domain::Kind::kFloat:
      field.type = parquet::PhysicalType::kFloat;
      break;
    case Domain::Kind::kVocab:
    case Domain::Kind::kWords:
      field.type = parquet::PhysicalType::kByteArray;
      break;
  }
  if (spec.layout == Layout::kList) field.list_depth = 1;
  return field;
}

void merge_column(ColumnSpec* have, const ColumnSpec& add) {
  auto conflict = [&]() {
    return ConfigError(fmt::format(
        "{}: reads column '{}' as {}, but {} reads it as {}; give one of them another input name",
        add.sources.empty() ? std::string("config") : add.sources.front(), add.name, describe(add),
        have->sources.empty() ? std::string("another field") : have->sources.front(),
        describe(*have)));
  };
  // A label that is also a feature input (TorchEasyRec's PEPNet example: the domain label column
  // `occupation` is an id feature too): written as an input whose ids both readers accept — the
  // label then is not drawn from the hidden model.
  const bool label_and_input =
      (have->role == Role::kLabel && add.role == Role::kInput) || (have->role == Role::kInput && add.role == Role::kLabel);
  if (have->role != add.role && !label_and_input) throw conflict();
  if (label_and_input && !(have->domain.kind == Domain::Kind::kIds && add.domain.kind == Domain::Kind::kIds &&
                           !have->sequence && !add.sequence)) {
    throw conflict();
  }
  if (have->sequence != add.sequence) throw conflict();
  ColumnSpec merged = *have;
  if (label_and_input) merged.role = Role::kInput;
  if (!merge_domain(have->domain, add.domain, &merged.domain)) throw conflict();
  const bool have_plain = have->layout == Layout::kScalar || have->layout == Layout::kList;
  const bool add_plain = add.layout == Layout::kScalar || add.layout == Layout::kList;
  if (have_plain && add_plain) {
    // A single value satisfies single- and multi-value readers; fixed-length vectors must agree.
    const bool have_fixed = have->layout == Layout::kList && have->min_values == have->max_values &&
                            have->min_values > 1;
    const bool add_fixed = add.layout == Layout::kList && add.min_values == add.max_values &&
                           add.min_values > 1;
    if (have_fixed || add_fixed) {
      if (!(have_fixed && add_fixed && have->min_values == add.min_values)) {
        if (!(have_fixed && add.layout == Layout::kList && !add_fixed) &&
            !(add_fixed && have->layout == Layout::kList && !have_fixed)) {
          throw conflict();
        }
      }
      if (add_fixed) {
        merged.layout = Layout::kList;
        merged.min_values = merged.max_values = add.min_values;
      }
    } else if (have->layout == Layout::kScalar || add.layout == Layout::kScalar) {
      merged.layout = Layout::kScalar;
      merged.min_values = merged.max_values = 1;
    }
    if (merged.length_group.empty()) merged.length_group = add.length_group;
  } else if (have->layout == add.layout) {
    if (have->layout == Layout::kLookupMap || have->layout == Layout::kNestedMap) {
      if (!merge_domain(have->value_domain, add.value_domain, &merged.value_domain)) {
        throw conflict();
      }
    }
    merged.min_values = std::max(have->min_values, add.min_values);
    merged.max_values = std::max(merged.min_values, std::min(have->max_values, add.max_values));
  } else if (have->sequence && have_plain != add_plain) {
    // Sequence elements: a single value satisfies a reader of joined values.
    if (have->layout != Layout::kScalar && add.layout != Layout::kScalar) throw conflict();
    merged.layout = Layout::kScalar;
    merged.min_values = merged.max_values = 1;
  } else {
    throw conflict();
  }
  if (have->sequence && add.sequence_length > 0 &&
      (have->sequence_length == 0 || add.sequence_length < have->sequence_length)) {
    merged.sequence_length = add.sequence_length;  // the shortest one set
  }
  merged.sources.insert(merged.sources.end(), add.sources.begin(), add.sources.end());
  for (const auto& f : add.features) {
    if (std::find(merged.features.begin(), merged.features.end(), f) == merged.features.end()) {
      merged.features.push_back(f);
    }
  }
  *have = std::move(merged);
}

}  // namespace tzrec::datagen
