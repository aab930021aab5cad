#include "feature/assets.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <c10/util/Exception.h>

#include "base/error.h"
#include "base/md5.h"
#include "feature/feature_registry.h"

namespace tzrec::feature {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Message;

Message* oneof_message(Message* msg) {
  const auto* oneof = msg->GetDescriptor()->FindOneofByName("feature");
  const auto* field = msg->GetReflection()->GetOneofFieldDescriptor(*msg, oneof);
  return field ? msg->GetReflection()->MutableMessage(msg, field) : nullptr;
}

// Calls fn(message) for each feature message of `config` (grouped sub-features in place), in the
// order build_features() builds them.
template <typename Fn>
void for_each_feature_message(protos::EasyRecConfig* config, Fn fn) {
  for (protos::FeatureConfig& fc : *config->mutable_feature_configs()) {
    if (!fc.has_sequence_feature()) {
      fn(oneof_message(&fc));
      continue;
    }
    for (protos::SeqFeatureConfig& sub : *fc.mutable_sequence_feature()->mutable_features()) fn(oneof_message(&sub));
  }
}

// Sets the string field at dotted `field` of `msg` to `value` (nested messages are created).
void set_string_field(Message* msg, const std::string& field, const std::string& value) {
  const size_t dot = field.find('.');
  const auto* fd = msg->GetDescriptor()->FindFieldByName(field.substr(0, dot));
  TORCH_CHECK(fd != nullptr, "asset field ", field, " not in ", msg->GetDescriptor()->name());
  if (dot != std::string::npos) {
    set_string_field(msg->GetReflection()->MutableMessage(msg, fd), field.substr(dot + 1), value);
    return;
  }
  msg->GetReflection()->SetString(msg, fd, value);
}

const google::protobuf::FieldDescriptor* asset_dir_field(const Message& msg) {
  return msg.GetDescriptor()->FindFieldByName("asset_dir");
}

}  // namespace

std::string asset_file_name(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  if (!in || !(bytes << in.rdbuf())) {
    throw IoError(fmt::format("cannot read {} (a file a feature reads); check the path", path));
  }
  const fs::path p(path);
  return p.stem().string() + "_" + md5_hex(bytes.str()) + p.extension().string();
}

std::string copy_asset(const std::string& path, const std::string& dir) {
  const std::string name = asset_file_name(path);
  const fs::path target = fs::path(dir) / name;
  std::error_code ec;
  if (!fs::exists(target, ec)) fs::copy_file(path, target, ec);
  if (ec) throw IoError(fmt::format("cannot copy {} to {}: {}", path, target.string(), ec.message()));
  return name;
}

void relocate_assets(protos::EasyRecConfig* config, const std::string& dir, const std::string& asset_dir) {
  const FeatureSet set = build_features(*config);
  size_t next = 0;
  for_each_feature_message(config, [&](Message* msg) {
    TORCH_CHECK(msg != nullptr && next < set.features.size(), "relocate_assets: features and config disagree");
    const std::vector<FeatureAsset> assets = set.features[next++]->assets();
    if (assets.empty()) return;
    for (const FeatureAsset& a : assets) set_string_field(msg, a.field, copy_asset(a.path, dir));
    const auto* fd = asset_dir_field(*msg);
    TORCH_CHECK(fd != nullptr, "a feature with assets has no asset_dir: ", msg->GetDescriptor()->name());
    if (asset_dir.empty()) {
      msg->GetReflection()->ClearField(msg, fd);
    } else {
      msg->GetReflection()->SetString(msg, fd, asset_dir);
    }
  });
  TORCH_CHECK(next == set.features.size(), "relocate_assets: more features built than configured");
}

void rebase_asset_dirs(protos::EasyRecConfig* config, const std::string& dir) {
  for_each_feature_message(config, [&](Message* msg) {
    if (msg == nullptr) return;
    const auto* fd = asset_dir_field(*msg);
    if (fd != nullptr && msg->GetReflection()->HasField(*msg, fd)) msg->GetReflection()->SetString(msg, fd, dir);
  });
}

}  // namespace tzrec::feature
