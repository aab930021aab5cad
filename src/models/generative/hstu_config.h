// The HSTU config (protos::HSTU and its GR messages, docs/tzrec-compatibility.md §4.1) as the plain
// options of nn/gr/, with the defaults TorchEasyRec applies.
#pragma once

#include "nn/gr/hstu_transducer.h"
#include "tzrec/protos/module.pb.h"

namespace tzrec::models {

// config_path: where `hstu` sits ("model_config.dlrm_hstu.hstu"), for errors. ConfigError for
// required settings that are missing (a oneof left unset, STU widths of 0).
nn::gr::HSTUOptions to_hstu_options(const protos::HSTU& hstu, const std::string& config_path);

}  // namespace tzrec::models
