#include "config/feature_util.h"

#include <cstdlib>
#include <cstring>

namespace tzrec::config {

namespace {
const std::string kEmpty;
}  // namespace

const std::string& feature_name(const protos::FeatureConfig& f) {
  using F = protos::FeatureConfig;
  switch (f.feature_case()) {
    case F::kIdFeature: return f.id_feature().feature_name();
    case F::kRawFeature: return f.raw_feature().feature_name();
    case F::kComboFeature: return f.combo_feature().feature_name();
    case F::kLookupFeature: return f.lookup_feature().feature_name();
    case F::kMatchFeature: return f.match_feature().feature_name();
    case F::kSequenceFeature: return f.sequence_feature().sequence_name();
    case F::kExprFeature: return f.expr_feature().feature_name();
    case F::kOverlapFeature: return f.overlap_feature().feature_name();
    case F::kTokenizeFeature: return f.tokenize_feature().feature_name();
    case F::kCustomFeature: return f.custom_feature().feature_name();
    case F::kKvDotProduct: return f.kv_dot_product().feature_name();
    case F::kBoolMaskFeature: return f.bool_mask_feature().feature_name();
    case F::kCombineFeature: return f.combine_feature().feature_name();
    case F::kSequenceIdFeature: return f.sequence_id_feature().feature_name();
    case F::kSequenceRawFeature: return f.sequence_raw_feature().feature_name();
    case F::kSequenceComboFeature: return f.sequence_combo_feature().feature_name();
    case F::kSequenceLookupFeature: return f.sequence_lookup_feature().feature_name();
    case F::kSequenceMatchFeature: return f.sequence_match_feature().feature_name();
    case F::kSequenceExprFeature: return f.sequence_expr_feature().feature_name();
    case F::kSequenceOverlapFeature: return f.sequence_overlap_feature().feature_name();
    case F::kSequenceTokenizeFeature: return f.sequence_tokenize_feature().feature_name();
    case F::kSequenceCustomFeature: return f.sequence_custom_feature().feature_name();
    case F::kSequenceKvDotProduct: return f.sequence_kv_dot_product().feature_name();
    case F::kSequenceBoolMaskFeature: return f.sequence_bool_mask_feature().feature_name();
    case F::kSequenceCombineFeature: return f.sequence_combine_feature().feature_name();
    case F::FEATURE_NOT_SET: break;
  }
  return kEmpty;
}

std::string feature_type_name(const protos::FeatureConfig& f) {
  const auto* oneof = protos::FeatureConfig::descriptor()->FindOneofByName("feature");
  const auto* field = f.GetReflection()->GetOneofFieldDescriptor(f, oneof);
  return field ? field->name() : std::string();
}

const google::protobuf::Message* feature_message(const protos::FeatureConfig& f) {
  const auto* oneof = protos::FeatureConfig::descriptor()->FindOneofByName("feature");
  const auto* field = f.GetReflection()->GetOneofFieldDescriptor(f, oneof);
  return field ? &f.GetReflection()->GetMessage(f, field) : nullptr;
}

bool is_sparse_feature(const protos::FeatureConfig& f) {
  if (f.has_id_feature()) return true;
  if (f.has_raw_feature()) return f.raw_feature().boundaries_size() > 0;
  return false;
}

uint32_t feature_embedding_dim(const protos::FeatureConfig& f) {
  if (f.has_id_feature()) return f.id_feature().embedding_dim();
  if (f.has_raw_feature() && f.raw_feature().boundaries_size() > 0) {
    return f.raw_feature().embedding_dim();
  }
  return 0;
}

bool rtp_naming() {
  const char* v = std::getenv("USE_RTP");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

std::string grouped_sequence_prefix(const std::string& sequence_name) {
  return sequence_name + (rtp_naming() ? "_" : "__");
}

std::string grouped_sequence_name(const std::string& sequence_name, const std::string& name) {
  return sequence_name.empty() ? name : grouped_sequence_prefix(sequence_name) + name;
}

}  // namespace tzrec::config
