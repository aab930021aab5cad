#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "base/error.h"
#include "base/logging.h"
#include "base/stop_signal.h"
#include "base/version.h"
#include "config/pipeline_config.h"
#include "data/rank_read_positions.h"
#include "feature/batch_loader.h"
#include "checkpoint/checkpoint.h"
#include "train/checkpoint_policy.h"
#include "train/delta_embedding_dump.h"
#include "train/event_time_checkpoints.h"
#include "checkpoint/distributed_checkpoint.h"
#include "train/dynamicemb_init_ckpt.h"
#include "train/evaluator.h"
#include "train/fine_tune.h"
#include "observe/progress.h"
#include "observe/step_timing.h"
#include "observe/step_traffic.h"
#include "observe/tensorboard_writer.h"
#include "observe/training_profiler.h"
#include "observe/training_summaries.h"
#include "train/training_session.h"

namespace fs = std::filesystem;

namespace tzrec::train {
namespace {

constexpr const char* kTrainEvalResultFilename = "train_eval_result_v2.txt";
constexpr const char* kEpochsCompletedKey = "__epochs_completed__";
constexpr const char* kTrainPositionKey = "train_position";    // single process
constexpr const char* kTrainPositionsKey = "train_positions";  // multi-rank: one per rank
constexpr const char* kEventTimeWatermarkKey = "__data_ts_watermark__";  // TorchEasyRec's key

// Where training resumes: the step to train next, the epoch it belongs to and the data position.
struct ResumePoint {
  int64_t next_step = 0;
  int64_t epochs_completed = 0;
  std::optional<data::ReadPosition> position;
  std::optional<double> event_time_watermark;  // event_time_checkpoints.h
};

class TrainLoop {
 public:
  TrainLoop(const protos::EasyRecConfig& config, TrainingSession& session, std::string config_digest)
      : config_(config),
        session_(session),
        train_config_(config.train_config()),
        progress_(train_config_.log_step_count_steps()) {
    pg_ = session_.process_group();
    chief_ = pg_ == nullptr || pg_->rank() == 0;
    if (chief_ && train_config_.use_tensorboard()) {
      train_writer_ = std::make_unique<observe::TensorBoardWriter>(config_.model_dir());
      eval_writer_ = std::make_unique<observe::TensorBoardWriter>((fs::path(config_.model_dir()) / "eval_val").string());
    }
    config_digest_ = std::move(config_digest);
    summaries_ = std::make_unique<observe::TrainingSummaries>(train_config_, train_writer_.get());
    if (train_config_.has_delta_embedding_dump_config()) {
      delta_dump_ = std::make_unique<DeltaEmbeddingDumper>(config_, session_.model().embeddings(),
                                                           pg_ != nullptr ? pg_->rank() : 0,
                                                           pg_ != nullptr ? pg_->world_size() : 1);
    }
    if (train_writer_ && summaries_->wants_gradients()) {
      session_.set_gradient_observer([this](int64_t step) {
        if (step % log_every_ == 0) summaries_->write_gradients(session_.model().dense_parameters(), step);
      });
    }
  }

  void run(ResumePoint resume) {
    const bool by_steps = train_config_.has_num_steps();
    const int64_t num_steps = by_steps ? static_cast<int64_t>(train_config_.num_steps()) : -1;
    const int64_t num_epochs = by_steps ? -1 : static_cast<int64_t>(train_config_.num_epochs());
    const int64_t save_epochs = train_config_.save_checkpoints_epochs();
    const int64_t save_steps = save_epochs > 0 ? 0 : train_config_.save_checkpoints_steps();

    int64_t step = resume.next_step;
    int64_t epoch = resume.epochs_completed;
    event_time_.restore(resume.event_time_watermark);
    std::optional<data::ReadPosition> position = std::move(resume.position);
    if (by_steps && step >= num_steps) {
      log::info("checkpoint step {} already reaches num_steps {}; nothing to train", step - 1, num_steps);
      return;
    }
    progress_.restart_window();
    if (delta_dump_) delta_dump_->start();
    observe::TrainingProfiler profiler(train_config_.is_profiling(),
                              (fs::path(config_.model_dir()) / observe::kTrainEvalTraceDir).string());
    bool done = false;
    while (num_epochs < 0 || epoch < num_epochs) {
      feature::LoaderShard shard;
      if (pg_ != nullptr) shard = {pg_->rank(), pg_->world_size()};
      shard.epoch = epoch;
      feature::BatchLoader loader(config_, config_.train_input_path(), feature::Mode::kTrain,
                                  position ? &*position : nullptr, shard);
      const bool resumed_mid_epoch = position.has_value();
      position.reset();
      int64_t batches_this_epoch = 0;
      auto wait_start = std::chrono::steady_clock::now();
      while (true) {
        auto loaded = loader.next();  // a stream's loader returns nothing once a stop is requested
        const DataStatus status = all_ranks_status(loaded.has_value());
        if (status.stop) {
          stopping_ = true;  // this batch is not trained: its rows stay after the saved position
          break;
        }
        if (!status.have_data) break;
        const double waited = seconds_since(wait_start);
        run_timing_.add_wait(waited);
        window_timing_.add_wait(waited);
        ++batches_this_epoch;
        train_step(loaded->batch, step, epoch, num_steps);
        if (delta_dump_) delta_dump_->after_step(step);
        current_position_ = loaded->position;
        const bool last = by_steps && step == num_steps - 1;
        if (last) end_of_training(step);  // before the last step's checkpoint
        const bool event_time_due =
            event_time_.enabled() && event_time_.observe(all_ranks_event_time(loaded->data_timestamp));
        if ((save_steps > 0 && step > 0 && step % save_steps == 0) || last || event_time_due) {
          save_and_evaluate(step, epoch, &*current_position_);
        }
        profiler.step();
        last_trained_step_ = step;
        ++step;
        if (last) {
          done = true;
          break;
        }
        wait_start = std::chrono::steady_clock::now();  // checkpoints and evaluations excluded
      }
      if (done || stopping_) break;
      if (batches_this_epoch == 0 && !resumed_mid_epoch) {
        throw DataError(fmt::format("train input '{}' produced no batches{}; check the path and files",
                                    config_.train_input_path(),
                                    pg_ != nullptr && pg_->world_size() > 1
                                        ? fmt::format(" on at least one of the {} ranks", pg_->world_size())
                                        : ""));
      }
      ++epoch;
      session_.advance_epoch_schedules();
      current_position_.reset();  // the next epoch starts from the beginning of the data
      log::info("epoch {} finished at step {}", epoch, step - 1);
      if (num_epochs >= 0 && epoch >= num_epochs) end_of_training(last_trained_step_);  // before its checkpoint
      if (save_epochs > 0 && epoch % save_epochs == 0 && last_trained_step_ >= 0) {
        save_and_evaluate(last_trained_step_, epoch, nullptr);
      }
    }
    profiler.stop();
    if (run_timing_.steps() > 0) {
      log::info("training time: {}; {:.0f} samples/s", run_timing_.summary(),
                run_timing_.total_seconds() > 0 ? trained_samples_ / run_timing_.total_seconds() : 0.0);
      log_step_traffic();
    }
    if (stopping_) {
      // A scheduler's stop: save where training is (no evaluation, it may take long) and return.
      if (delta_dump_ && last_trained_step_ >= 0) delta_dump_->final_dump(last_trained_step_);
      if (last_trained_step_ >= 0 && last_saved_step_ != last_trained_step_) {
        save_checkpoint(last_trained_step_, epoch, current_position_ ? &*current_position_ : nullptr);
      }
      log::info("stopped by {} after step {}: the latest checkpoint holds it; --continue_train "
                "resumes from there",
                stop_signal_name()[0] != '\0' ? stop_signal_name() : "a signal on another rank",
                last_trained_step_);
      return;
    }
    end_of_training(last_trained_step_);
    if (last_trained_step_ >= 0 && (last_saved_step_ != last_trained_step_ || changed_since_save_)) {
      save_and_evaluate(last_trained_step_, epoch, current_position_ ? &*current_position_ : nullptr);
    }
  }

 private:
  bool distributed() const { return pg_ != nullptr && pg_->world_size() > 1; }

  // TorchEasyRec's on_train_end hook (models/model.h): once, after the last trained step and before
  // its checkpoint (sid_rqkmeans fits its codebook there). Not called when a signal stops training.
  // A model changed by it after its step was already saved is saved again (the same step). Then
  // the delta embedding dump of the rows touched after its last dump (last_step: the last trained
  // step, -1 for none).
  void end_of_training(int64_t last_step) {
    if (training_ended_) return;
    training_ended_ = true;
    if (session_.model().on_train_end()) changed_since_save_ = true;
    if (delta_dump_ && last_step >= 0) delta_dump_->final_dump(last_step);
  }

  // This rank's embedding tables (its shards when distributed) for parameter histograms.
  observe::NamedTensors local_embedding_tables() {
    observe::NamedTensors out;
    if (session_.distributed()) {
      std::set<std::string> seen;
      for (auto& b : session_.checkpoint_blocks().model) {
        if (!b.value.is_floating_point()) continue;  // zero-collision hash state
        if (seen.insert(b.name).second) out.emplace_back(b.name, b.value);
      }
      return out;
    }
    std::set<std::string> dense;
    for (const auto& [n, t] : session_.model().dense_parameters()) dense.insert(n);
    for (const auto& item : session_.model().named_parameters(/*recurse=*/true)) {
      if (!dense.count(item.key())) out.emplace_back(item.key(), item.value());
    }
    return out;
  }

  // What this rank's collectives sent and how long they took per training step (checkpoints and
  // evaluations excluded).
  void log_step_traffic() const {
    if (!distributed() || run_timing_.steps() == 0) return;
    log::info("collectives per training step on rank {} (bytes sent, time): {}", pg_->rank(),
              step_traffic_.per_step_summary(run_timing_.steps()));
  }

  // Ranks stop an epoch together at the first batch some rank does not have (TorchEasyRec's
  // check_all_workers_data_status): the others' extra batches are dropped, no rank waits forever
  // in a collective. And all ranks stop training after the same step when some rank got SIGTERM /
  // SIGINT (base/stop_signal.h). One collective per step for both.
  // The event time a quorum of the ranks reached (event_time_checkpoints.h); -1: this rank's
  // batch had no timestamp.
  std::optional<double> all_ranks_event_time(double mine) {
    if (pg_ == nullptr || pg_->world_size() == 1) return quorum_event_time({mine}, event_time_.quorum());
    std::vector<double> times;
    for (const auto& t : pg_->all_gather(torch::tensor({mine}, torch::kFloat64), "train event time")) {
      times.push_back(t.item<double>());
    }
    return quorum_event_time(std::move(times), event_time_.quorum());
  }

  struct DataStatus {
    bool have_data = false;  // every rank has a batch
    bool stop = false;       // some rank was asked to stop
  };
  DataStatus all_ranks_status(bool have) {
    DataStatus status{have, stop_requested()};
    if (pg_ == nullptr || pg_->world_size() == 1) return status;
    torch::Tensor flags = torch::tensor({status.have_data ? 1 : 0, status.stop ? 0 : 1}, torch::kInt32);
    pg_->all_reduce(flags, dist::ReduceOp::kMin, "train data status");
    return DataStatus{flags[0].item<int>() == 1, flags[1].item<int>() == 0};
  }

  static double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }

  void train_step(const sparse::Batch& batch, int64_t step, int64_t epoch, int64_t num_steps) {
    const auto start = std::chrono::steady_clock::now();
    const auto embedding_before = session_.embedding_timing();
    if (distributed()) step_traffic_.begin(*pg_);
    auto& model = session_.model();
    auto predictions = model.predict(batch);
    auto losses = model.loss(predictions, batch);
    if (model.has_train_metrics()) model.update_train_metrics(predictions, batch);
    torch::Tensor total = model.total_loss(losses);  // the sum, or the Pareto-weighted task losses
    session_.backward_and_step(total, step);

    observe::ProgressSnapshot snapshot;
    snapshot.step = step;
    snapshot.epoch = epoch;
    snapshot.total_steps = num_steps;
    snapshot.learning_rates = {{"lr_g0", session_.sparse_lr()}};
    const auto dense_lrs = session_.dense_group_lrs();  // dense, then each used part optimizer
    for (size_t i = 0; i < dense_lrs.size(); ++i) {
      snapshot.learning_rates["lr_g" + std::to_string(i + 1)] = dense_lrs[i];
    }
    for (const auto& [name, value] : losses) snapshot.losses[name] = value.item<double>();
    snapshot.losses["total_loss"] = total.item<double>();
    const double seconds = seconds_since(start);
    const auto embedding_after = session_.embedding_timing();
    if (distributed()) step_traffic_.end(*pg_);
    trained_samples_ += batch.batch_size * (pg_ != nullptr ? pg_->world_size() : 1);
    run_timing_.add_step(seconds, embedding_before, embedding_after);
    window_timing_.add_step(seconds, embedding_before, embedding_after);
    snapshot.data_wait_fraction = window_timing_.wait_fraction();
    if (step % log_every_ == 0) window_timing_.reset();  // the progress window restarts too
    if (chief_) progress_.on_step(snapshot, batch.batch_size * (pg_ != nullptr ? pg_->world_size() : 1));
    if (chief_ && !model.loss_weights().empty() && step % log_every_ == 0) {
      log::info("Pareto loss weights at step {}: {}", step, format_metrics(model.loss_weights()));
    }
    if (chief_ && model.has_train_metrics() && step % log_every_ == 0) {
      // model_config.train_metrics (decayed, this rank's batches): a log line and metric/<name>.
      const auto train_metrics = model.compute_train_metrics();
      log::info("train metrics at step {}: {}", step, format_metrics(train_metrics));
      if (train_writer_) {
        for (const auto& [name, value] : train_metrics) train_writer_->add_scalar("metric/" + name, value, step);
      }
    }
    if (train_writer_ && step % log_every_ == 0) {
      write_train_summaries(snapshot);
      if (summaries_->wants_parameters()) {
        summaries_->write_parameters(session_.model().dense_parameters(), step);
        summaries_->write_table_parameters(local_embedding_tables(), pg_ != nullptr ? pg_->rank() : 0, step);
        session_.model().embeddings().release_embedding_state();  // synced for the blocks, not needed after
      }
    }
    session_.advance_step_schedules();
  }

  // TorchEasyRec's scalars: loss/<name>, loss/total and lr/g<i> every log_step_count_steps.
  void write_train_summaries(const observe::ProgressSnapshot& snapshot) {
    // An empty list means TorchEasyRec's default ["loss", "learning_rate"].
    auto wanted = [&](const char* name) { return summaries_->wants(name); };
    if (wanted("loss")) {
      for (const auto& [name, value] : snapshot.losses) {
        train_writer_->add_scalar(name == "total_loss" ? "loss/total" : "loss/" + name, value,
                                  snapshot.step);
      }
      // use_pareto_loss_weight: the weight each task loss got in this step.
      for (const auto& [name, weight] : session_.model().loss_weights()) {
        train_writer_->add_scalar("loss_weight/" + name, weight, snapshot.step);
      }
    }
    if (wanted("learning_rate")) {
      for (const auto& [name, value] : snapshot.learning_rates) {
        train_writer_->add_scalar("lr/" + name.substr(3), value, snapshot.step);  // lr_g0 → lr/g0
      }
    }
  }

  void save_and_evaluate(int64_t step, int64_t epochs_completed, const data::ReadPosition* position) {
    save_checkpoint(step, epochs_completed, position);
    if (config_.eval_input_path().empty()) {
      if (chief_) prune_checkpoints(config_.model_dir(), retention_, step);
      return;
    }
    evaluate_saved(step, epochs_completed);
  }

  // The checkpoint of `step` (with this rank's read position, or every rank's).
  void save_checkpoint(int64_t step, int64_t epochs_completed, const data::ReadPosition* position) {
    checkpointing::CheckpointData data;
    data.step = step;
    for (auto& [name, tensor] : session_.model_tensors()) data.model.emplace(name, tensor);
    data.optimizer = session_.optimizer_state();
    data.config_digest = config_digest_;
    data.dataloader_state = nlohmann::json::object();
    data.dataloader_state[kEpochsCompletedKey] = epochs_completed;
    event_time_.saved();
    if (event_time_.current()) data.dataloader_state[kEventTimeWatermarkKey] = *event_time_.current();
    if (session_.distributed()) {
      data.dataloader_state[kTrainPositionsKey] = gather_positions(position);
    } else {
      data.dataloader_state[kTrainPositionKey] =
          position != nullptr ? position->to_json() : nlohmann::json(nullptr);
    }
    if (chief_) progress_.interrupt();
    // Dynamic tables: their rows in use only (embedding/dynamic_checkpoint_layout.h).
    const DynamicRowsInUse rows = dynamic_rows_in_use(session_.model(), session_.model().embeddings(),
                                                      session_.distributed() ? pg_ : nullptr);
    add_dynamic_layout_tensors(rows, data.model);
    if (session_.distributed()) {
      checkpointing::save_distributed_checkpoint(config_.model_dir(), data, session_.checkpoint_blocks(&rows),
                                  session_.sharded_embeddings()->plan().to_json(), *pg_);
    } else {
      cut_dynamic_tables_to_rows_in_use(session_.model().embeddings(), rows, data.model, data.optimizer);
      checkpointing::save_checkpoint(config_.model_dir(), data);
    }
    data = checkpointing::CheckpointData();  // the copies it holds go first
    session_.model().embeddings().release_embedding_state();
    last_saved_step_ = step;
    changed_since_save_ = false;
    log::info("saved checkpoint {}", checkpointing::checkpoint_dir(config_.model_dir(), step));
  }

  // The evaluation of the checkpoint just saved (chief: result line, TensorBoard, pruning).
  void evaluate_saved(int64_t step, int64_t epochs_completed) {
    std::map<std::string, double> metrics;
    {
      // eval_config.use_dense_ema: evaluate with the EMA weights, then swap the live ones back.
      auto ema = session_.swap_in_ema(use_dense_ema_for_eval(config_));
      metrics = evaluate(session_.model(), config_, config_.eval_input_path(), pg_);
    }
    if (!chief_) return;
    log::info("Eval Result Epoch-{} model-{}: {}", epochs_completed, step, format_metrics(metrics));
    write_result_line((fs::path(config_.model_dir()) / kTrainEvalResultFilename).string(), step,
                      metrics, WriteMode::kAppend);
    if (eval_writer_) {
      for (const auto& [name, value] : metrics) eval_writer_->add_scalar("metric/" + name, value, step);
      eval_writer_->flush();
    }
    if (train_writer_) train_writer_->flush();
    // Pruned after the eval so that the new checkpoint's metric takes part in picking the best.
    prune_checkpoints(config_.model_dir(), retention_, step);
    progress_.restart_window();
  }

  // Every rank's read position, in rank order (null when the ranks saved at an epoch end).
  nlohmann::json gather_positions(const data::ReadPosition* position) {
    const auto all = pg_->all_gather_strings(position != nullptr ? position->to_json().dump() : "",
                                             "train read positions");
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& text : all) {
      if (text.empty()) return nullptr;  // ranks end epochs together: all or none
      out.push_back(nlohmann::json::parse(text));
    }
    return out;
  }

  const protos::EasyRecConfig& config_;
  TrainingSession& session_;
  const protos::TrainConfig& train_config_;
  const CheckpointRetention retention_ = checkpoint_retention(config_);
  std::string config_digest_;
  int64_t last_trained_step_ = -1;
  int64_t last_saved_step_ = -1;
  bool stopping_ = false;  // stopped by a signal (all_ranks_status)
  bool training_ended_ = false;      // end_of_training ran
  bool changed_since_save_ = false;  // the end-of-training hook changed the model after the last save
  EventTimeTrigger event_time_{config_.train_config()};
  std::optional<data::ReadPosition> current_position_;  // after the last trained batch
  observe::ProgressReporter progress_;
  observe::StepTiming run_timing_;     // the whole run, logged at its end
  double trained_samples_ = 0;  // over all ranks
  observe::StepTraffic step_traffic_;  // collectives of the training steps
  observe::StepTiming window_timing_;  // since the last progress log line
  int64_t log_every_ = std::max<int64_t>(1, train_config_.log_step_count_steps());
  dist::ProcessGroup* pg_ = nullptr;  // null or world size 1: single process
  bool chief_ = true;                 // rank 0: progress, TensorBoard, result files, pruning
  std::unique_ptr<observe::TensorBoardWriter> train_writer_;  // model_dir
  std::unique_ptr<observe::TensorBoardWriter> eval_writer_;   // model_dir/eval_val
  std::unique_ptr<observe::TrainingSummaries> summaries_;     // tensorboard_summaries beyond loss / lr
  std::unique_ptr<DeltaEmbeddingDumper> delta_dump_;          // delta_embedding_dump_config
};

// Where rank `rank` of `world_size` resumes. The checkpoint holds one position ("train_position",
// single process) or one per rank ("train_positions"); on another world size the remaining rows
// are re-split over the new ranks (data/rank_read_positions.h).
ResumePoint resume_point(const checkpointing::CheckpointData& checkpoint, int rank, int world_size) {
  ResumePoint point;
  point.next_step = checkpoint.step + 1;
  const auto& state = checkpoint.dataloader_state;
  if (!state.is_object()) return point;
  if (state.contains(kEpochsCompletedKey)) point.epochs_completed = state[kEpochsCompletedKey].get<int64_t>();
  if (state.contains(kEventTimeWatermarkKey)) {
    if (!state[kEventTimeWatermarkKey].is_number()) {
      throw CheckpointError(fmt::format("{}: dataloader_state.json: '{}' must be a number", checkpoint.dir,
                                        kEventTimeWatermarkKey));
    }
    point.event_time_watermark = state[kEventTimeWatermarkKey].get<double>();
  }
  std::vector<data::ReadPosition> saved;
  if (state.contains(kTrainPositionsKey) && !state[kTrainPositionsKey].is_null()) {
    const auto& list = state[kTrainPositionsKey];
    if (!list.is_array() || list.empty()) {
      throw CheckpointError(fmt::format("{}: dataloader_state.{} must be a non-empty array of read positions",
                                        checkpoint.dir, kTrainPositionsKey));
    }
    for (const auto& p : list) saved.push_back(data::ReadPosition::from_json(p));
  } else if (state.contains(kTrainPositionKey) && !state[kTrainPositionKey].is_null()) {
    saved.push_back(data::ReadPosition::from_json(state[kTrainPositionKey]));
  }
  if (saved.empty()) return point;
  if (static_cast<int>(saved.size()) != world_size) {
    log::info("the checkpoint's data positions come from {} rank(s), this run has {}: the rows not trained "
              "yet are re-split over the ranks (each read once; batch boundaries differ from an "
              "uninterrupted run)",
              saved.size(), world_size);
  }
  point.position = data::position_for_rank(saved, rank, world_size);
  return point;
}

}  // namespace

namespace {

// The job's process group from torchrun's variables (a single process without them). Ranks other
// than 0 log warnings and errors only, unless LOG_LEVEL asks for more.
std::shared_ptr<dist::ProcessGroup> join_job() {
  auto pg = dist::ProcessGroup::create(dist::dist_env_from_environment());
  if (pg->world_size() > 1) {
    if (pg->rank() != 0 && std::getenv("LOG_LEVEL") == nullptr) log::set_level(log::Level::kWarning);
    log::info("distributed job: {} ranks ({} per node), rank {}", pg->world_size(), pg->env().local_world_size,
              pg->rank());
  }
  return pg;
}

}  // namespace

void train_and_evaluate(const TrainEvalOptions& options) {
  auto config = load_run_config(options.pipeline_config_path, options.overrides);
  setup_runtime();
  auto pg = join_job();
  const bool chief = pg->rank() == 0;
  const std::string& model_dir = config.model_dir();
  fs::create_directories(model_dir);

  const auto existing = checkpointing::list_checkpoints(model_dir);
  if (!existing.empty() && !options.continue_train) {
    throw CheckpointError(fmt::format(
        "model_dir {} already holds checkpoints (latest {}); pass --continue_train to resume, "
        "or choose another --model_dir",
        model_dir, existing.back().first));
  }

  std::optional<dist::ShardingPlan> saved_plan;
  if (options.continue_train && !existing.empty()) saved_plan = checkpointing::load_sharding_plan(existing.back().first);
  TrainingSession session(config, /*with_optimizers=*/true, pg, saved_plan);
  const std::string config_digest = checkpointing::digest_text(config::to_text(config));
  ResumePoint resume;
  if (options.continue_train && !existing.empty()) {
    const auto& [path, step] = existing.back();
    auto checkpoint = checkpointing::load_checkpoint(path, /*assemble_shards=*/!session.distributed());
    if (checkpoint.config_digest != config_digest) {
      log::warning("pipeline config differs from the one checkpoint {} was trained with", path);
    }
    session.restore(checkpoint, !options.ignore_restore_optimizer);
    resume = resume_point(checkpoint, pg->rank(), pg->world_size());
    session.set_schedule_position(resume.next_step, resume.epochs_completed);
    log::info("restored {} (step {}); training continues at step {}", path, step, resume.next_step);
    if (!config.train_config().fine_tune_checkpoint().empty()) {
      log::info("fine_tune_checkpoint {} ignored: continuing from {}",
                config.train_config().fine_tune_checkpoint(), path);
    }
  } else if (!config.train_config().fine_tune_checkpoint().empty()) {
    // TorchEasyRec: weights (and optimizer state) only; step 0, data from the beginning.
    FineTuneOptions fine_tune;
    fine_tune.checkpoint_path = config.train_config().fine_tune_checkpoint();
    fine_tune.param_map_path = config.train_config().fine_tune_ckpt_param_map();
    fine_tune.restore_optimizer = !options.ignore_restore_optimizer;
    fine_tune_restore(session, fine_tune);
  } else if (chief) {
    const auto init_tables = dynamicemb_init_tables(config);
    if (!init_tables.empty()) {
      log::warning("{}.init_table: training does not read init tables (as in TorchEasyRec); this run starts its "
                   "dynamic tables empty. Write their initial rows with `tzrec create_dynamicemb_init_ckpt "
                   "--pipeline_config_path ... --save_dir D` and train with --fine_tune_checkpoint D/model.ckpt-0",
                   init_tables.begin()->first);
    }
  }

  if (chief) {
    config::save_pipeline_config(config, (fs::path(model_dir) / "pipeline.config").string());
    checkpointing::write_text_file((fs::path(model_dir) / "version").string(), std::string(kVersion) + "\n");
  }

  session.model().train();
  TrainLoop loop(config, session, config_digest);
  install_stop_handlers();
  loop.run(std::move(resume));
}

std::map<std::string, double> evaluate_checkpoint(const EvalOptions& options) {
  ConfigOverrides overrides;
  overrides.eval_input_path = options.eval_input_path;
  overrides.model_dir = options.model_dir;
  auto config = load_run_config(options.pipeline_config_path, overrides);
  setup_runtime();
  const std::string where = options.checkpoint_path.empty() ? config.model_dir() : options.checkpoint_path;
  auto latest = checkpointing::latest_checkpoint(where);
  if (!latest) {
    throw CheckpointError(fmt::format(
        "no checkpoint found in {}; train first or pass --checkpoint_path model_dir/model.ckpt-N", where));
  }
  auto pg = join_job();
  TrainingSession session(config, /*with_optimizers=*/false, pg, checkpointing::load_sharding_plan(latest->first));
  auto checkpoint = checkpointing::load_checkpoint(latest->first, /*assemble_shards=*/!session.distributed());
  session.restore(checkpoint, /*restore_optimizer=*/false);
  if (use_dense_ema_for_eval(config)) session.load_ema_weights(checkpoint);
  auto metrics = evaluate(session.model(), config, config.eval_input_path(), pg.get());
  if (pg->rank() != 0) return metrics;
  log::info("Eval Result model-{}: {}", checkpoint.step, format_metrics(metrics));
  fs::create_directories(config.model_dir());
  write_result_line((fs::path(config.model_dir()) / options.eval_result_filename).string(),
                    checkpoint.step, metrics, WriteMode::kReplace);
  if (config.train_config().use_tensorboard()) {
    observe::TensorBoardWriter writer((fs::path(config.model_dir()) / "eval").string());
    for (const auto& [name, value] : metrics) writer.add_scalar("metric/" + name, value, checkpoint.step);
  }
  return metrics;
}

}  // namespace tzrec::train
