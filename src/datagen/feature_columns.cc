#include "datagen/feature_columns.h"

#include <map>

namespace tzrec::datagen {

const FeatureColumns* feature_columns_for(const std::string& type) {
  static const std::map<std::string, const FeatureColumns*> producers = {
      {"id_feature", &id_feature_columns()},
      {"raw_feature", &raw_feature_columns()},
      {"combo_feature", &combo_feature_columns()},
      {"lookup_feature", &lookup_feature_columns()},
      {"match_feature", &match_feature_columns()},
      {"expr_feature", &expr_feature_columns()},
      {"overlap_feature", &overlap_feature_columns()},
      {"tokenize_feature", &tokenize_feature_columns()},
      {"kv_dot_product", &kv_dot_product_columns()},
      {"bool_mask_feature", &bool_mask_feature_columns()},
      {"combine_feature", &combine_feature_columns()},
      {"custom_feature", &custom_feature_columns()},
  };
  auto it = producers.find(type);
  return it == producers.end() ? nullptr : it->second;
}

}  // namespace tzrec::datagen
