# Sourced by the e2e scripts that run whole configs on gen_data data (not a test itself: the
# tests are tests/e2e/*_test.sh). Needs TZREC and a fail() function.
#
# train_20_steps NAME W [EDITS]: 20 steps of train_eval at batch 64 on W/pipeline.config (gen_data's
# output) into W/model; EDITS are more --edit_config_json members (',"path":value,...').
train_20_steps() {
  local name=$1 W=$2 edits=${3:-}
  sed 's/num_epochs: [0-9]*/num_steps: 20/' "$W/pipeline.config" > "$W/run.config"
  "$TZREC" train_eval --pipeline_config_path "$W/run.config" --model_dir "$W/model" \
    --edit_config_json "{\"data_config.batch_size\":64,\"train_config.num_steps\":20$edits}" 2> "$W.train.log" \
    || { tail -5 "$W.train.log"; fail "$name: train_eval"; }
  [[ -s "$W/model/train_eval_result_v2.txt" ]] || fail "$name: no train_eval_result_v2.txt"
}

# run_generated_config NAME W [EDITS]: W is the output dir of `tzrec gen_data` for config NAME. A
# config check_config accepts trains 20 steps (train_20_steps, with EDITS), exports and predicts
# with every exported package (match models: user, item — hstu_match's item package on gen_data's
# items.parquet; TDM: model, embedding); a refused one must be refused for `not supported yet:`
# only, by check_config and by train_eval before reading data. Prints one line and sets RUN_RESULT
# to accepted or refused.
run_generated_config() {
  local name=$1 W=$2 edits=${3:-}
  if "$TZREC" check_config --pipeline_config_path "$W/pipeline.config" > "$W.check" 2>&1; then
    RUN_RESULT=accepted
    train_20_steps "$name" "$W" "$edits"
    "$TZREC" export --pipeline_config_path "$W/model/pipeline.config" --export_dir "$W/export" 2> "$W.export.log" \
      || { tail -5 "$W.export.log"; fail "$name: export"; }
    local packages="."
    [[ -d "$W/export/user" ]] && packages="user item"
    [[ -d "$W/export/embedding" ]] && packages="model embedding"
    local p
    for p in $packages; do
      [[ -s "$W/export/$p/model.safetensors" ]] || fail "$name: no exported model in export/$p"
      # hstu_match's item package reads one item per row (gen_data's items.parquet).
      local input="$W/eval.parquet"
      [[ $p == item && -s "$W/items.parquet" ]] && input="$W/items.parquet"
      "$TZREC" predict --scripted_model_path "$W/export/$p" --predict_input_path "$input" \
        --predict_output_path "$W/pred_$p" 2> "$W.predict.log" || { tail -5 "$W.predict.log"; fail "$name: predict"; }
      [[ -s "$W/pred_$p/part-0.parquet" ]] || fail "$name: no predictions of export/$p"
    done
    echo "$name: trained, exported and predicted"
  else
    RUN_RESULT=refused
    grep -q "not supported yet:" "$W.check" || { cat "$W.check"; fail "$name: refused for another reason"; }
    if "$TZREC" train_eval --pipeline_config_path "$W/pipeline.config" --model_dir "$W/model" > "$W.train.log" 2>&1; then
      fail "$name: check_config refuses the config but train_eval ran"
    fi
    grep -q "not supported yet:" "$W.train.log" || { tail -5 "$W.train.log"; fail "$name: train_eval failed for another reason"; }
    if grep -qiE "DataError|column .* (missing|not found)|parquet" "$W.train.log"; then
      tail -5 "$W.train.log"; fail "$name: train_eval failed on the data"
    fi
    echo "$name: refused ($(grep -m1 -o 'not supported yet: [^ ]*' "$W.check"))"
  fi
}
