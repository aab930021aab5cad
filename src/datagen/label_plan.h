// What each label column holds, from the losses that read it (docs/tzrec-compatibility.md §7.1):
// binary 0/1 for binary_cross_entropy, binary_focal_loss (and models without losses), class ids
// 0..num_class-1 for softmax_cross_entropy with num_class > 1 and for jrc_loss (2 classes),
// floats for l2_loss. Multi-task models (any model message with `task_towers`) take each
// tower's label_name (default: the label field at the tower's position), losses and num_class;
// other models read the first label field with model_config.losses and num_class.
#pragma once

#include <string>
#include <vector>

#include "datagen/column_spec.h"
#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::datagen {

struct LabelUse {
  std::string label;  // label column
  LabelKind kind = LabelKind::kBinary;
  int num_class = 2;  // kClass
  std::string source; // field path of the losses, for messages
};

std::vector<LabelUse> label_uses(const protos::EasyRecConfig& config);

// Sample-weight columns: data_config.sample_weight_fields and the towers' sample_weight_name.
std::vector<std::string> sample_weight_columns(const protos::EasyRecConfig& config);

}  // namespace tzrec::datagen
