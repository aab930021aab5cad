#include "feature/match_feature.h"

#include <algorithm>

#include "feature/dense_embedding_settings.h"
#include "feature/fg_json_entry.h"
#include "feature/dynamicemb_settings.h"
#include "feature/zch_settings.h"

namespace tzrec::feature {
namespace {

constexpr const char* kMatchWildcard = "ALL";

}  // namespace

struct MatchFeature::Scratch {
  std::vector<CellValue> pkeys, skeys;
  std::vector<KvEntry> inner;
  std::string buf_a, text;
};

MatchFeature::MatchFeature(const protos::MatchFeature& c, const std::string& path, const std::string& type,
                           const BuildContext& ctx, bool sequence)
    : MultiInputFeature(c.feature_name(), path, type, ctx), config_(c) {
  // dynamicemb, use_mask: refused when the config is loaded (config/field_registry.cc).
  const int64_t value_dim = c.has_value_dim() ? c.value_dim() : 1;
  sequence_delim_ = item_delimiter(c, ctx, sequence, path, &info_);
  const std::string default_value = sequence && c.default_value().empty() ? "0" : c.default_value();
  // TorchEasyRec's MatchFeature.num_embeddings: len(effective vocab_list) + 1.
  Bucketizer bucketizer(Bucketizer::fields_of(c), default_value, path, info_.name, /*vocab_list_extra_rows=*/1);
  info_.is_sparse = bucketizer.kind() != Bucketizer::Kind::kNone;
  const bool numeric = !bucketizer.is_text();
  const bool each_hit = !numeric || c.need_discrete();
  if (value_dim > 1) {
    throw ConfigError(
        fmt::format("{}.value_dim: {}; a match_feature has one value per hit (1, or 0 for several "
                    "ids per item of a sparse sequence), as TorchEasyRec",
                    path, value_dim));
  }
  if (info_.is_sparse) {
    fill_table_info(c, path, &info_);
    info_.num_embeddings = bucketizer.num_embeddings();
    fill_zch_info_of(c, path, &info_);  // raw ids (FG_NONE reads them as they are)
    fill_dynamicemb_info_of(c, path, &info_);
    info_.value_dim = !sequence ? 0 : each_hit ? value_dim : 1;
  } else {
    info_.embedding_dim = c.embedding_dim();
    info_.value_dim = 1;
  }
  fill_dense_embedding(c, value_dim, SequenceDenseEmbedding::kRefused, path, &info_);
  if ((c.show_pkey() || c.show_skey()) && numeric) {
    throw NotSupportedError(
        fmt::format("{}.{} with numeric values (boundaries or a dense output; the key prefix "
                    "makes a text value)",
                    path, c.show_pkey() ? "show_pkey" : "show_skey"));
  }
  show_pkey_ = c.show_pkey();
  show_skey_ = c.show_skey();
  check_fg_value_type(c.has_fg_value_type(), c.fg_value_type(), bucketizer, path);

  values_.feature = info_.name;
  values_.field_path = path;
  values_.default_value = default_value;
  values_.width = 1;
  if (reads_encoded_column(fg_mode_)) {
    if (fg_mode_ == FgMode::kBucketize && bucketizer.kind() == Bucketizer::Kind::kHash) {
      // FG_NORMAL hashes "<feature_name>_<value>"; whether the FG output before bucketization
      // carries that prefix is not documented by TorchEasyRec (zch hashes the same way).
      throw NotSupportedError(path + (c.has_zch() ? ".zch" : c.has_dynamicemb() ? ".dynamicemb" : ".hash_bucket_size") +
                              " under data_config.fg_mode FG_BUCKETIZE");
    }
    if (c.has_normalizer()) warn_normalizer_not_applied(path);  // the data is FG output
    own_encoded_.init(c, bucketizer, 1, path, type, ctx, sequence, sequence_delim_, &info_);
    return;
  }

  if (c.separator().empty()) throw ConfigError(path + ".separator: must not be empty");
  inputs_.push_back(make_fg_input(c.nested_map(), path + ".nested_map", ctx, sequence, c.sequence_fields(),
                                  std::string(kNestedOuterSep), /*kv_map=*/true));
  if (c.pkey() != kMatchWildcard) {
    pkey_input_ = static_cast<int>(inputs_.size());
    inputs_.push_back(make_fg_input(c.pkey(), path + ".pkey", ctx, sequence, c.sequence_fields(), c.separator()));
  }
  if (c.skey() != kMatchWildcard) {
    skey_input_ = static_cast<int>(inputs_.size());
    inputs_.push_back(make_fg_input(c.skey(), path + ".skey", ctx, sequence, c.sequence_fields(), c.separator()));
  }
  multihit_ = pkey_input_ < 0 || skey_input_ < 0;
  if (sequence) check_sequence_inputs(inputs_, c.sequence_fields(), path);
  if (c.has_normalizer()) {
    if (!numeric) {
      throw NotSupportedError(fmt::format("{}.normalizer with a {} bucketizer (the values are discrete)", path,
                                          bucketizer.table_size_field()));
    }
    values_.normalizer = Normalizer::parse(c.normalizer(), path + ".normalizer");
  }
  // match_feature has no combiner field (TorchEasyRec comments it out): several numeric hits
  // (wildcards, multi-value keys) are summed.
  values_.combiner = each_hit ? Combiner::kNone : Combiner::kSum;
  // The feature-name prefix is part of the hashed text only (hash_bucket_size and zch, which is
  // pyfg's hash with hash_bucket_size 2^63 - 1): num_buckets reads the value itself
  // (TorchEasyRec's test: value "1" -> id 1 of 10), and vocabularies are looked up without it.
  if (bucketizer.kind() == Bucketizer::Kind::kHash) hash_prefix_ = c.feature_name() + "_";
  values_.bucketizer = bucketizer;
  if (numeric) {
    check_numeric_default(values_);
  } else {
    check_text_default(default_value, bucketizer, path);
  }
}

void MatchFeature::collect(const MultiInputCells& cells, int64_t r, int64_t k, const std::vector<NestedEntry>& outer,
                           HashKind hash_kind, LookupValues* values, Scratch* s) const {
  // The key values of input `idx` (one wildcard for "ALL"); none: nothing hits.
  auto keys_of = [&](int idx, std::vector<CellValue>* keys) {
    keys->clear();
    if (idx < 0) {
      CellValue all;
      all.text = kMatchWildcard;
      keys->push_back(all);
      return;
    }
    cells.for_each_value(static_cast<size_t>(idx), r, k, [&](const CellValue& v) {
      if (v.kind != CellValue::Kind::kText || !v.text.empty()) keys->push_back(v);
    });
  };
  keys_of(pkey_input_, &s->pkeys);
  keys_of(skey_input_, &s->skeys);
  if (s->pkeys.empty() || s->skeys.empty() || outer.empty()) return;
  auto wildcard = [&](int idx, const CellValue& v) {
    return idx < 0 || (multihit_ && v.kind == CellValue::Kind::kText && v.text == kMatchWildcard);
  };
  const bool text = values_.bucketizer.is_text();
  auto hit = [&](const NestedEntry& o, const KvEntry& e) {
    if (!text) {
      values->add_number(e.value, cells.cells(0), r);
      return;
    }
    s->text.assign(hash_prefix_);
    if (show_pkey_) {
      s->text.append(as_text(o.pkey, &s->buf_a));
      s->text.push_back('_');
    }
    if (show_skey_) {
      s->text.append(as_text(e.key, &s->buf_a));
      s->text.push_back('_');
    }
    s->text.append(as_text(e.value, &s->buf_a));
    values->add_text(s->text, hash_kind, cells.cells(0), r);
  };
  // `wanted` is sk as a MapKey: formed once per key, not once per outer entry.
  auto match_inner = [&](const NestedEntry& o, const CellValue& sk, const MapKey& wanted) {
    read_inner_map(o.inner, cells, 0, r, info_.name, &s->inner);
    if (wildcard(skey_input_, sk)) {
      for (const KvEntry& e : s->inner) hit(o, e);
      return;
    }
    const KvEntry* last = nullptr;
    for (const KvEntry& e : s->inner) {
      if (wanted.matches(e.key)) last = &e;
    }
    if (last != nullptr) hit(o, *last);
  };
  for (const CellValue& pk : s->pkeys) {
    const bool every_pkey = wildcard(pkey_input_, pk);
    const MapKey wanted_pk(pk);
    for (const CellValue& sk : s->skeys) {
      const MapKey wanted_sk(sk);
      if (every_pkey) {
        for (const NestedEntry& o : outer) match_inner(o, sk, wanted_sk);
        continue;
      }
      const NestedEntry* last = nullptr;
      for (const NestedEntry& o : outer) {
        if (wanted_pk.matches(o.pkey)) last = &o;
      }
      if (last != nullptr) match_inner(*last, sk, wanted_sk);
    }
  }
}

void MatchFeature::parse_fg(const data::RecordBatch& batch, const ParseOutput& out) const {
  const auto max_items = info_.sequence_length > 0 ? info_.sequence_length : 0;
  MultiInputCells cells(batch, inputs_, "feature " + info_.name, sequence_delim_, max_items);
  std::vector<NestedEntry> outer;
  Scratch scratch;
  emit_lookup_rows(
      info_, values_, &cells, inputs_[0].sequence, out,
      [&](int64_t r, int64_t k) { read_nested_map(cells, 0, r, k, info_.name, &outer); },
      [&](int64_t r, int64_t k, LookupValues* values) {
        collect(cells, r, k, outer, out.hash_kind, values, &scratch);
      });
}

// TorchEasyRec's MatchFeature._fg_json (docs/tzrec-compatibility.md §5.3): pyfg's names for the
// inputs (user = nested_map, category = pkey, item = skey), matchType "multihit" when a key is
// "ALL"; a text bucketizer makes the values "string" and discrete, and discrete values write
// value_dim.
std::vector<nlohmann::ordered_json> MatchFeature::fg_json_entries() const {
  const protos::MatchFeature& c = config_;
  const std::string default_value = fg_default_value(c.default_value(), info_.is_sequence);
  nlohmann::ordered_json e;
  e["feature_type"] = "match_feature";
  e["feature_name"] = c.feature_name();
  e["user"] = c.nested_map();
  e["category"] = c.pkey();
  e["item"] = c.skey();
  e["matchType"] = c.pkey() == kMatchWildcard || c.skey() == kMatchWildcard ? "multihit" : "hit";
  e["default_value"] = default_value;
  e["value_type"] = "float";
  e["needDiscrete"] = c.need_discrete();
  e["show_category"] = c.show_pkey();
  e["show_item"] = c.show_skey();
  if (c.separator() != kFgDefaultSeparator) e["separator"] = c.separator();
  if (c.has_normalizer()) e["normalizer"] = c.normalizer();
  if (add_fg_map_bucketizer(c, default_value, field_path_, &e)) {
    e["value_type"] = "string";
    e["needDiscrete"] = true;
  }
  // TorchEasyRec's MatchFeature.value_dim: the configured value, else 1.
  if (e["needDiscrete"] == true) e["value_dim"] = c.has_value_dim() ? c.value_dim() : 1u;
  if (c.has_fg_value_type()) e["value_type"] = c.fg_value_type();
  if (c.has_stub_type()) e["stub_type"] = c.stub_type();
  add_fg_sequence_fields(c.sequence_fields(), info_, &e);
  return {e};
}

}  // namespace tzrec::feature
