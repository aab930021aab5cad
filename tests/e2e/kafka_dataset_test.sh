#!/usr/bin/env bash
# KafkaDataset end to end against librdkafka's mock cluster (tzrec_kafka_mock, next to the tzrec
# binary): 2560 rows of the DeepFM example's data as Arrow IPC stream messages of 40 rows (so
# messages straddle batches) over 2 partitions, read by 2 loader workers (one partition each,
# so the row order is deterministic), batches of 64: 40 steps consume every row. The producer
# first stores half of the rows and holds the rest back, so training reaches the end of the
# stream and waits there:
#   - SIGKILL while waiting (after step 19; the latest checkpoint is step 15's), then
#     --continue_train: steps 16..19 again, waiting, SIGTERM: a checkpoint of the last step trained
#     (19 unless the machine is very slow) and exit 0;
#   - the rest is produced; --continue_train trains steps 20..39;
#   - an uninterrupted run over the whole stream: the same weights, optimizer state and final
#     position (every partition at its end), so every row was trained exactly once, in order;
#   - a dead broker is an error naming it within TZREC_KAFKA_BROKER_TIMEOUT_S, not a hang.
set -euo pipefail
TZREC=$1
ROOT=$2
MOCK=$(dirname "$TZREC")/tzrec_kafka_mock
WORK=$(mktemp -d)
MOCK_PID=
cleanup() {
  [[ -n "$MOCK_PID" ]] && kill "$MOCK_PID" 2> /dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
CMP=$ROOT/tests/tools/compare_safetensors.py
[[ -x "$MOCK" ]] || fail "no $MOCK (built with the tests)"

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 2560 --num_eval_rows 64 --seed 4 --format parquet 2> /dev/null
"$MOCK" --topic clicks --partitions 2 --produce "$WORK/data/train.parquet" --rows_per_message 40 \
  --hold_after_rows 1280 > "$WORK/mock.out" 2> "$WORK/mock.err" &
MOCK_PID=$!
wait_line() {  # wait_line <file> <regex>: until a line of the file matches (30 s)
  for _ in $(seq 300); do grep -q "$2" "$1" 2> /dev/null && return 0; sleep 0.1; done
  cat "$1"; return 1
}
wait_line "$WORK/mock.out" "^holding after 1280 rows" || fail "mock cluster did not produce the first half"
BOOTSTRAP=$(sed -n 's/^bootstrap //p' "$WORK/mock.out")
URI="kafka://$BOOTSTRAP/clicks?group.id=e2e&auto.offset.reset=earliest"

CONFIG=$WORK/kafka.config
sed -e 's/num_epochs: 1/num_steps: 40/' -e 's/dataset_type: ParquetDataset/dataset_type: KafkaDataset/' \
  "$ROOT/examples/deepfm_criteo_synth.config" > "$CONFIG"
EDIT='"train_input_path":"'$URI'","eval_input_path":"","data_config.batch_size":64,"data_config.num_workers":2'
SAVE='"train_config.save_checkpoints_steps":5'  # a train call may set SAVE to other checkpoint settings
train() {  # train <model_dir> [flags]
  local dir=$1; shift
  TORCH_MANUAL_SEED=1 OMP_NUM_THREADS=1 "$TZREC" train_eval --pipeline_config_path "$CONFIG" \
    --model_dir "$dir" --edit_config_json "{$EDIT,$SAVE}" "$@" 2>> "$dir.log"
}
train_in_background() {  # the same, in the background; PID is tzrec's own process id
  local dir=$1; shift
  TORCH_MANUAL_SEED=1 OMP_NUM_THREADS=1 "$TZREC" train_eval --pipeline_config_path "$CONFIG" \
    --model_dir "$dir" --edit_config_json "{$EDIT,$SAVE}" "$@" 2>> "$dir.log" &
  PID=$!
}
# Half the stream: 20 steps, then the loader waits for messages.
train_in_background "$WORK/resumed"
wait_line "$WORK/resumed.log" "saved checkpoint .*model.ckpt-15" || fail "no checkpoint 15"
sleep 2
kill -KILL $PID; wait $PID 2> /dev/null || true
train_in_background "$WORK/resumed" --continue_train
wait_line "$WORK/resumed.log" "training continues at step 16" || fail "did not resume at 16"
sleep 3
kill -TERM $PID
wait $PID || { tail -20 "$WORK/resumed.log"; fail "train_eval did not exit 0 after SIGTERM"; }
# Normally after step 19 (waiting for step 20's rows); on a slow machine it may stop earlier.
stopped=$(sed -n 's/.*stopped by SIGTERM after step \([0-9]*\).*/\1/p' "$WORK/resumed.log")
[[ -n "$stopped" ]] || { tail -5 "$WORK/resumed.log"; fail "no stop line after SIGTERM"; }
[[ -d "$WORK/resumed/model.ckpt-$stopped" ]] || fail "no checkpoint at the stop step $stopped"
echo "killed while waiting at the end of the stream, continued, stopped by SIGTERM with a checkpoint of step $stopped"

kill -USR1 $MOCK_PID
wait_line "$WORK/mock.out" "^produced 64 messages 2560 rows" || fail "mock cluster did not produce the rest"
train "$WORK/resumed" --continue_train || { cat "$WORK/resumed.log"; fail "continued run"; }
# The uninterrupted run also sets shuffle and batch_cost_size, which a stream ignores as
# TorchEasyRec's KafkaReader does (a warning each): its weights must still equal the resumed run's.
SAVE='"train_config.save_checkpoints_steps":5,"data_config.shuffle":true,"data_config.shuffle_buffer_size":4,"data_config.batch_cost_size":100,"data_config.sample_cost_field":"label"' \
  train "$WORK/full" || { cat "$WORK/full.log"; fail "uninterrupted run"; }
for field in shuffle batch_cost_size; do
  grep -q "data_config.$field: accepted and ignored: KafkaDataset" "$WORK/full.log" || fail "no warning for $field"
done
position() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["train_position"])' "$1/model.ckpt-39/dataloader_state.json"; }
/usr/bin/python3 - "$(position "$WORK/full")" <<'PY' || fail "final position of the uninterrupted run"
import ast, sys
pos = ast.literal_eval(sys.argv[1])
assert pos["format"] == "kafka" and pos["topic"] == "clicks", pos
# 64 messages alternate over partitions 0 and 1: 32 each (offsets 0..31), all read to the end.
assert pos["partitions"] == [{"partition": 0, "offset": 32, "rows": 0},
                             {"partition": 1, "offset": 32, "rows": 0}], pos["partitions"]
assert sum(pos["worker_rows"]) == 2560, pos["worker_rows"]
PY
for f in model optimizer; do
  /usr/bin/python3 "$CMP" "$WORK/full/model.ckpt-39/$f.safetensors" "$WORK/resumed/model.ckpt-39/$f.safetensors" \
    || fail "$f state after SIGKILL + SIGTERM + continue differs from the uninterrupted run"
done
[[ "$(position "$WORK/full")" == "$(position "$WORK/resumed")" ]] || fail "final positions differ"
echo "interrupted twice and continued: same weights, optimizer state and position as uninterrupted"

# Event-time checkpoints: message i has the timestamp 1700000000 + i seconds; every 10 s of
# consumed event time (a Unix-epoch-aligned boundary) saves a checkpoint. Expected steps from the
# rule, with the rows of each step worked out from the message layout.
SAVE='"train_config.save_checkpoints_steps":1000,"train_config.save_checkpoints_timestamp_interval":10' \
  train "$WORK/timed" || { tail -5 "$WORK/timed.log"; fail "event-time run"; }
/usr/bin/python3 "$ROOT/tests/tools/kafka_event_time_checkpoints.py" "$WORK/timed" 1 || fail "event-time checkpoints"

# The broker goes away: an error naming it within the timeout, not a hang.
kill "$MOCK_PID"; wait "$MOCK_PID" 2> /dev/null || true; MOCK_PID=
if TZREC_KAFKA_BROKER_TIMEOUT_S=3 timeout 60 env TORCH_MANUAL_SEED=1 OMP_NUM_THREADS=1 "$TZREC" train_eval \
    --pipeline_config_path "$CONFIG" --model_dir "$WORK/dead" --edit_config_json "{$EDIT,$SAVE}" 2> "$WORK/dead.log"; then
  fail "train_eval ran without a broker"
fi
grep -q "^error: .*kafka://$BOOTSTRAP/clicks.*check that the brokers '$BOOTSTRAP' are up" "$WORK/dead.log" \
  || { tail -3 "$WORK/dead.log"; fail "dead broker: not the expected error"; }
echo "dead broker: $(grep '^error:' "$WORK/dead.log" | cut -c1-160)"
echo OK
