#include "checkpoint/distributed_checkpoint.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/logging.h"

namespace fs = std::filesystem;

namespace tzrec::checkpointing {
namespace {

constexpr const char* kPlanFile = "plan.json";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CheckpointError(fmt::format("cannot read {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

void save_distributed_checkpoint(const std::string& model_dir, const CheckpointData& data,
                                 const ShardBlocks& blocks, const nlohmann::json& plan,
                                 dist::ProcessGroup& pg) {
  // All ranks agree on the staging directory: rank 0's pid names it.
  torch::Tensor tag = torch::tensor({static_cast<int64_t>(pg.rank() == 0 ? ::getpid() : 0)}, torch::kInt64);
  pg.all_reduce(tag, dist::ReduceOp::kSum, "checkpoint staging directory");
  const std::string staging = checkpoint_staging_dir(model_dir, data.step, std::to_string(tag.item<int64_t>()));
  std::error_code ec;
  if (pg.rank() == 0) {
    fs::create_directories(model_dir, ec);
    fs::remove_all(staging, ec);
    if (!fs::create_directory(staging, ec) || ec) {
      throw IoError(fmt::format("cannot create {}: {}", staging, ec.message()));
    }
  }
  pg.barrier("checkpoint staging directory created");
  save_rank_blocks(staging, "model", pg.rank(), pg.world_size(), blocks.model);
  save_rank_blocks(staging, "optimizer", pg.rank(), pg.world_size(), blocks.optimizer);
  if (pg.rank() == 0) {
    nlohmann::ordered_json extra;
    extra["world_size"] = pg.world_size();
    write_checkpoint_files(staging, data, extra);
    std::ofstream out((fs::path(staging) / kPlanFile).string(), std::ios::trunc);
    out << plan.dump(2) << "\n";
    if (!out) throw IoError(fmt::format("cannot write {}", (fs::path(staging) / kPlanFile).string()));
  }
  pg.barrier("checkpoint files written");
  if (pg.rank() == 0) publish_checkpoint_dir(model_dir, staging, data.step);
  pg.barrier("checkpoint published");
}

bool sharding_plan_forced() {
  const char* v = std::getenv("FORCE_LOAD_SHARDING_PLAN");
  return v != nullptr && *v != '\0' && std::string(v) != "0" && std::string(v) != "false";
}

std::optional<dist::ShardingPlan> load_sharding_plan(const std::string& ckpt_dir) {
  std::string path = (fs::path(ckpt_dir) / kPlanFile).string();
  const char* forced = std::getenv("FORCE_LOAD_SHARDING_PLAN");
  if (sharding_plan_forced() && std::string(forced) != "1" && std::string(forced) != "true") {
    path = forced;  // a plan.json, or a checkpoint directory holding one
    if (fs::is_directory(path)) path = (fs::path(path) / kPlanFile).string();
    if (!fs::exists(path)) {
      throw ConfigError(fmt::format("FORCE_LOAD_SHARDING_PLAN={}: {} does not exist", forced, path));
    }
  } else if (!fs::exists(path)) {
    return std::nullopt;
  }
  const nlohmann::json json = nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw CheckpointError(fmt::format("{} is not valid JSON", path));
  return dist::ShardingPlan::from_json(json, path);
}

}  // namespace tzrec::checkpointing
