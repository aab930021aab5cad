#!/usr/bin/env bash
# KafkaDataset on 2 ranks started by `tzrec launch` against librdkafka's mock cluster
# (tzrec_kafka_mock, next to the tzrec binary): 5120 rows of the DeepFM example's data as Arrow IPC
# stream messages of 40 rows (messages straddle batches) over 4 partitions, 2 loader workers per
# rank: global reader rank * 2 + worker reads one partition (rank 0: 0 and 1, rank 1: 2 and 3), so
# the row order of every rank is deterministic. Batches of 64 per rank: 40 steps consume every row.
# The producer first stores half of the rows and holds the rest back, so both ranks reach the end
# of the stream after step 19 and wait there:
#   - SIGKILL of the launcher and both ranks while waiting (the latest checkpoint is step 15's),
#     then --continue_train: steps 16..19 again, waiting, SIGTERM to the launcher: it forwards the
#     signal, both ranks stop after step 19, save its checkpoint and exit 0 (the launcher reports
#     the forwarded signal: status 143);
#   - the checkpoints of steps 15 and 19 record where every one of the 4 partitions stands, each
#     in the position of the rank that reads it;
#   - the rest is produced; --continue_train trains steps 20..39;
#   - an uninterrupted 2-rank run over the whole stream: the same weights, optimizer state (whole
#     and per-rank shards) and final positions (every partition at its end, every worker 1280
#     rows), so every row was trained exactly once, in order, across the restarts;
#   - event-time checkpoints with save_checkpoints_timestamp_quorum 1: saved when the event time
#     both ranks reached (the earlier of the two) crosses a 10 s boundary;
#   - a dead broker is an error naming it within TZREC_KAFKA_BROKER_TIMEOUT_S, and the launcher
#     (with the other rank) exits non-zero instead of hanging.
# Usage: kafka_distributed_test.sh <tzrec binary> <repo root>
set -euo pipefail
TZREC=$1
ROOT=$2
MOCK=$(dirname "$TZREC")/tzrec_kafka_mock
WORK=$(mktemp -d)
MOCK_PID=
LAUNCH_PID=
cleanup() {
  # Ranks get SIGKILL from the kernel when their launcher dies (PR_SET_PDEATHSIG).
  [[ -n "$LAUNCH_PID" ]] && kill -KILL "$LAUNCH_PID" 2> /dev/null || true
  [[ -n "$MOCK_PID" ]] && kill "$MOCK_PID" 2> /dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
CMP=$ROOT/tests/tools/compare_safetensors.py
[[ -x "$MOCK" ]] || fail "no $MOCK (built with the tests)"
# Every rank logs at INFO (by default ranks other than 0 log warnings only).
export OMP_NUM_THREADS=1 TORCH_MANUAL_SEED=1 LOG_LEVEL=INFO

alive() {  # alive <pid>: the process exists and is not a zombie
  local state
  state=$(ps -o stat= -p "$1" 2> /dev/null) || return 1
  [[ "$state" != Z* ]]
}
wait_line() {  # wait_line <file> <regex> [pid]: until a line matches (600 s), failing early if pid ends
  local file=$1 regex=$2 pid=${3:-}
  for _ in $(seq 3000); do
    grep -q "$regex" "$file" 2> /dev/null && return 0
    if [[ -n "$pid" ]] && ! alive "$pid"; then
      grep -q "$regex" "$file" 2> /dev/null && return 0
      tail -30 "$file"; echo "(process $pid ended)"; return 1
    fi
    sleep 0.2
  done
  tail -30 "$file"; return 1
}

"$TZREC" gen_data --output_dir "$WORK/data" --num_rows 5120 --num_eval_rows 64 --seed 5 --format parquet 2> /dev/null
"$MOCK" --topic clicks --partitions 4 --produce "$WORK/data/train.parquet" --rows_per_message 40 \
  --hold_after_rows 2560 > "$WORK/mock.out" 2> "$WORK/mock.err" &
MOCK_PID=$!
wait_line "$WORK/mock.out" "^holding after 2560 rows" $MOCK_PID || fail "mock cluster did not produce the first half"
BOOTSTRAP=$(sed -n 's/^bootstrap //p' "$WORK/mock.out")
URI="kafka://$BOOTSTRAP/clicks?group.id=e2e&auto.offset.reset=earliest"

CONFIG=$WORK/kafka.config
sed -e 's/num_epochs: 1/num_steps: 40/' -e 's/dataset_type: ParquetDataset/dataset_type: KafkaDataset/' \
  "$ROOT/examples/deepfm_criteo_synth.config" > "$CONFIG"
EDIT='"train_input_path":"'$URI'","eval_input_path":"","data_config.batch_size":64,"data_config.num_workers":2'
EDIT+=',"train_config.log_step_count_steps":1'
SAVE='"train_config.save_checkpoints_steps":5'  # a launch call may set SAVE to other checkpoint settings
# launch <model_dir> <log> [train_eval flags]: 2 ranks in the background; LAUNCH_PID is the
# launcher's process id. A forwarded SIGTERM may take a checkpoint's time: generous grace.
GRACE=600
launch() {
  local dir=$1 log=$2; shift 2
  "$TZREC" launch --nproc-per-node 2 --standalone --term-grace-seconds "$GRACE" -- train_eval \
    --pipeline_config_path "$CONFIG" --model_dir "$dir" --edit_config_json "{$EDIT,$SAVE}" "$@" > "$log" 2>&1 &
  LAUNCH_PID=$!
}
finish() {  # finish <log>: waits for the launcher started last; it must exit 0
  local rc=0
  wait "$LAUNCH_PID" || rc=$?
  LAUNCH_PID=
  (( rc == 0 )) || { tail -40 "$1"; fail "launch train_eval exited $rc ($1)"; }
}

# 1. Half the stream: 20 steps, then both ranks wait for messages. SIGKILL everything.
launch "$WORK/resumed" "$WORK/resumed1.log"
wait_line "$WORK/resumed1.log" "saved checkpoint .*model.ckpt-15" $LAUNCH_PID || fail "no checkpoint 15"
wait_line "$WORK/resumed1.log" "Train epoch-0 step-19 " $LAUNCH_PID || fail "did not train step 19"
ranks=$(pgrep -P "$LAUNCH_PID" | tr '\n' ' ')
[[ $(wc -w <<< "$ranks") == 2 ]] || fail "expected 2 rank processes under the launcher, got '$ranks'"
# The launcher and each rank's process group (each rank leads its own).
kill -KILL -- "$LAUNCH_PID" $(for r in $ranks; do echo "-$r"; done) 2> /dev/null || true
wait "$LAUNCH_PID" 2> /dev/null || true
LAUNCH_PID=
for r in $ranks; do
  for _ in $(seq 300); do alive "$r" || break; sleep 0.1; done
  alive "$r" && fail "rank process $r survived SIGKILL"
done
[[ ! -e "$WORK/resumed/model.ckpt-20" ]] || fail "a checkpoint after the end of the available stream"

# 2. Continue from step 15's checkpoint: 16..19, waiting again; SIGTERM to the launcher.
launch "$WORK/resumed" "$WORK/resumed2.log" --continue_train
wait_line "$WORK/resumed2.log" "training continues at step 16" $LAUNCH_PID || fail "did not resume at 16"
wait_line "$WORK/resumed2.log" "Train epoch-0 step-19 " $LAUNCH_PID || fail "did not train step 19 again"
kill -TERM "$LAUNCH_PID"
rc=0; wait "$LAUNCH_PID" || rc=$?
LAUNCH_PID=
(( rc == 143 )) || { tail -30 "$WORK/resumed2.log"; fail "launcher exited $rc after a forwarded SIGTERM, not 143"; }
grep -q "received SIGTERM: forwarding it to the 2 running workers" "$WORK/resumed2.log" \
  || fail "the launcher did not forward SIGTERM"
! grep -q "(after the launcher received SIGTERM)" "$WORK/resumed2.log" \
  || { grep "after the launcher received" "$WORK/resumed2.log"; fail "a rank did not exit 0 after SIGTERM"; }
[[ $(grep -c "stopped by .* after step 19" "$WORK/resumed2.log") == 2 ]] \
  || { tail -20 "$WORK/resumed2.log"; fail "both ranks should stop after step 19"; }
for f in dataloader_state.json model-000000-of-000002.safetensors model-000001-of-000002.safetensors \
         optimizer-000000-of-000002.safetensors optimizer-000001-of-000002.safetensors; do
  [[ -s "$WORK/resumed/model.ckpt-19/$f" ]] || fail "no $f in the checkpoint of the stop step 19"
done
echo "2 ranks: killed while waiting at the end of the stream, continued, stopped by SIGTERM with a checkpoint of step 19"

# positions <checkpoint dir> <expected offset> <expected rows> <whole>: the checkpoint's per-rank
# positions; each rank's own partitions (2r, 2r + 1) stand at (offset, rows); a whole run's
# (not resumed) rank lists just its own partitions. Prints the positions merged over the ranks.
positions() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
d, offset, rows, whole = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "whole"
state = json.load(open(f"{d}/dataloader_state.json"))
ranks = state["train_positions"]
assert len(ranks) == 2, ranks
merged = {}
for r, pos in enumerate(ranks):
    assert pos["format"] == "kafka" and pos["topic"] == "clicks" and pos["world_size"] == 2, pos
    assert pos["num_workers"] == 2, pos
    parts = {p["partition"]: (p["offset"], p["rows"]) for p in pos["partitions"]}
    own = {2 * r: (offset, rows), 2 * r + 1: (offset, rows)}
    assert {p: parts.get(p) for p in own} == own, (r, parts)
    if whole:
        assert parts == own, (r, parts)
    for p, at in parts.items():
        merged[p] = max(merged.get(p, at), at)
    # Workers alternate: each delivered the same rows.
    assert pos["worker_rows"] == [offset * 40 + rows] * 2, (r, pos["worker_rows"])
    assert pos["next_worker"] == 0, (r, pos)
assert sorted(merged) == [0, 1, 2, 3], merged
print(json.dumps({"merged": sorted(merged.items()), "ranks": [(p["worker_rows"], p["next_worker"]) for p in ranks]}))
PY
}
# After 16 steps each worker delivered 8 batches of 64 rows = 512 rows: message 12, 32 rows in;
# after 20 steps 640 rows: message 16 next.
positions "$WORK/resumed/model.ckpt-15" 12 32 whole > /dev/null || fail "positions of checkpoint 15"
positions "$WORK/resumed/model.ckpt-19" 16 0 resumed > /dev/null || fail "positions of checkpoint 19"

# 3. The rest of the stream; continue to step 39.
kill -USR1 $MOCK_PID
wait_line "$WORK/mock.out" "^produced 128 messages 5120 rows" $MOCK_PID || fail "mock cluster did not produce the rest"
launch "$WORK/resumed" "$WORK/resumed3.log" --continue_train
finish "$WORK/resumed3.log"
grep -q "training continues at step 20" "$WORK/resumed3.log" || fail "did not resume at 20"

# 4. Uninterrupted, over the whole stream.
launch "$WORK/full" "$WORK/full.log"
finish "$WORK/full.log"
# 128 messages alternate over partitions 0..3: 32 each (offsets 0..31), all read to the end.
full=$(positions "$WORK/full/model.ckpt-39" 32 0 whole) || fail "final positions of the uninterrupted run"
resumed=$(positions "$WORK/resumed/model.ckpt-39" 32 0 resumed) || fail "final positions of the resumed run"
[[ "$full" == "$resumed" ]] || fail "final positions differ: $full vs $resumed"
for f in model.safetensors optimizer.safetensors model-000000-of-000002.safetensors model-000001-of-000002.safetensors \
         optimizer-000000-of-000002.safetensors optimizer-000001-of-000002.safetensors; do
  /usr/bin/python3 "$CMP" "$WORK/full/model.ckpt-39/$f" "$WORK/resumed/model.ckpt-39/$f" \
    || fail "$f after SIGKILL + SIGTERM + continue differs from the uninterrupted 2-rank run"
done
echo "2 ranks interrupted twice and continued: same weights, optimizer state and positions as uninterrupted"

# 5. Event-time checkpoints: message i has the timestamp 1700000000 + i seconds. Quorum 1: the
#    time of a step is the earlier of the ranks' batch times; every 10 s of it (Unix-epoch
#    aligned) saves a checkpoint. Expected steps from the rule and the message layout.
SAVE='"train_config.save_checkpoints_steps":1000,"train_config.save_checkpoints_timestamp_interval":10'
SAVE+=',"train_config.save_checkpoints_timestamp_quorum":1'
launch "$WORK/timed" "$WORK/timed.log"
finish "$WORK/timed.log"
/usr/bin/python3 "$ROOT/tests/tools/kafka_event_time_checkpoints.py" "$WORK/timed" 2 || fail "event-time checkpoints"

# 6. The broker goes away: the ranks fail naming it within the timeout, the launcher too.
kill "$MOCK_PID"; wait "$MOCK_PID" 2> /dev/null || true; MOCK_PID=
export TZREC_KAFKA_BROKER_TIMEOUT_S=3
GRACE=20  # a rank left behind by the first failure is not waited for long
launch "$WORK/dead" "$WORK/dead.log"
for _ in $(seq 1200); do alive "$LAUNCH_PID" || break; sleep 0.1; done
alive "$LAUNCH_PID" && fail "2-rank train_eval still running 120 s after its broker went away"
rc=0; wait "$LAUNCH_PID" || rc=$?
LAUNCH_PID=
(( rc != 0 )) || fail "2-rank train_eval ran without a broker"
grep -q "^error: .*kafka://$BOOTSTRAP/clicks.*check that the brokers '$BOOTSTRAP' are up" "$WORK/dead.log" \
  || { tail -5 "$WORK/dead.log"; fail "dead broker: not the expected error"; }
echo "dead broker on 2 ranks: launcher exited $rc; $(grep -m1 '^error:' "$WORK/dead.log" | cut -c1-140)"
echo OK
