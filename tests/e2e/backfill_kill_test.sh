#!/usr/bin/env bash
# Black-box crash test of //tools:backfill: 5 runs (a different scenario and
# seed each) x 10 SIGKILLs at random moments (during the store's opening,
# the bulk load, the backfill, the checkpoints after it, the final check),
# resuming on the same data directory each time at a random parallelism.
# After the last kill the run must finish consistent, its upstream and view
# dumps must be equal, and both must equal the dumps of a run of the same
# scenario that was never killed (the upstream workload is capped with
# max_ops and every op is a function of (seed, offset), so the final table
# does not depend on timing).
#
# Env: BACKFILL_KILL_SEED (default: from the clock; printed),
# BACKFILL_KILLS_PER_RUN (default 10), BACKFILL_KILL_MAX_DELAY_MS (default
# 1500: kills land uniformly in [20 ms, this] after the start).
set -uo pipefail
source tests/e2e/lib.sh
use_seed BACKFILL_KILL_SEED
KILLS_PER_RUN="${BACKFILL_KILLS_PER_RUN:-10}"
MAX_DELAY_MS="${BACKFILL_KILL_MAX_DELAY_MS:-1500}"
echo "$KILLS_PER_RUN kills per run"

# Five small scenarios: different key types and orders, NULLs in the pk, a
# composite pk with a distribution key that is a strict subset, a pruned
# view, pk-changing updates, a singleton. Snapshot rate limits keep each
# backfill a few seconds long; the workload (max_ops) ends well before.
write_scenarios() {
  cat > "$TMP/s1.textproto" <<'X'
name: "kill_desc_int"
table {
  columns { name: "id" type: INT64 }
  columns { name: "tag" type: VARCHAR nullable: true }
  columns { name: "v" type: DECIMAL nullable: true }
  primary_key { column: 0 descending: true }
  vnode_count: 64
}
initial_rows: 6000
seed: 101
workload { ops_per_second: 2000 insert_weight: 1 update_weight: 2 delete_weight: 1
           update_primary_key: true null_fraction: 0.1 max_ops: 600 }
backfill { parallelism: 2 chunk_size: 64 rate_limit: 3000 }
runtime { barrier_interval_ms: 50 checkpoint_frequency: 2 max_seconds: 300 }
X
  cat > "$TMP/s2.textproto" <<'X'
name: "kill_composite"
table {
  columns { name: "region" type: VARCHAR nullable: true }
  columns { name: "day" type: DATE }
  columns { name: "seq" type: INT64 nullable: true }
  columns { name: "score" type: FLOAT64 nullable: true }
  columns { name: "payload" type: BYTEA nullable: true }
  primary_key { column: 0 nulls: NULLS_FIRST }
  primary_key { column: 1 descending: true }
  primary_key { column: 2 descending: true nulls: NULLS_LAST }
  distribution_key: 0
  distribution_key: 2
  vnode_count: 32
  column_aware_encoding: true
}
initial_rows: 5000
seed: 202
workload { ops_per_second: 2000 insert_weight: 1 update_weight: 2 delete_weight: 1
           null_fraction: 0.2 max_ops: 500 }
backfill { parallelism: 3 chunk_size: 128 rate_limit: 2500 }
runtime { barrier_interval_ms: 50 checkpoint_frequency: 2 max_seconds: 300 }
X
  cat > "$TMP/s3.textproto" <<'X'
name: "kill_pruned"
table {
  columns { name: "region" type: VARCHAR }
  columns { name: "id" type: INT64 }
  columns { name: "price" type: FLOAT64 }
  columns { name: "note" type: VARCHAR nullable: true }
  columns { name: "quantity" type: INT16 nullable: true }
  primary_key { column: 0 }
  primary_key { column: 1 }
  distribution_key: 1
  vnode_count: 16
}
initial_rows: 6000
seed: 303
workload { ops_per_second: 2000 insert_weight: 1 update_weight: 1 delete_weight: 1
           null_fraction: 0.1 max_ops: 600 }
backfill { parallelism: 2 rate_limit: 3000 output_columns: 2 output_columns: 1
           output_columns: 4 }
runtime { barrier_interval_ms: 100 checkpoint_frequency: 1 max_seconds: 300 }
X
  cat > "$TMP/s4.textproto" <<'X'
name: "kill_churn"
table {
  columns { name: "account" type: INT32 }
  columns { name: "balance" type: DECIMAL }
  columns { name: "owner" type: VARCHAR nullable: true }
  primary_key { column: 0 }
  vnode_count: 8
}
initial_rows: 4000
seed: 404
workload { ops_per_second: 3000 insert_weight: 1 update_weight: 3 delete_weight: 1
           update_primary_key: true null_fraction: 0.3 key_space: 5000 max_ops: 900 }
backfill { parallelism: 4 chunk_size: 32 rate_limit: 2000 }
runtime { barrier_interval_ms: 50 checkpoint_frequency: 1 max_seconds: 300 }
X
  cat > "$TMP/s5.textproto" <<'X'
name: "kill_singleton"
table {
  columns { name: "key" type: VARCHAR }
  columns { name: "value" type: VARCHAR nullable: true }
  columns { name: "updated_at" type: TIMESTAMP }
  primary_key { column: 0 }
  singleton: true
  vnode_count: 1
}
initial_rows: 5000
seed: 505
workload { ops_per_second: 1500 insert_weight: 1 update_weight: 2 delete_weight: 1
           null_fraction: 0.1 max_ops: 450 }
backfill { parallelism: 1 rate_limit: 2500 }
runtime { barrier_interval_ms: 100 checkpoint_frequency: 1 max_seconds: 300 }
X
}
write_scenarios

# max_ops of scenario $1.
max_ops() { grep -o 'max_ops: [0-9]*' "$1" | grep -o '[0-9]*'; }
# Random parallelism in [1, $1].
pick_parallelism() { echo $(( 1 + RANDOM % $1 )); }
# Random delay in seconds ("0.123"), uniform in [20 ms, $1 ms].
pick_delay() {
  local ms=$(( 20 + $(random_below $(( $1 - 19 ))) ))
  printf '%d.%03d' $(( ms / 1000 )) $(( ms % 1000 ))
}

total_kills=0
start_seconds=$SECONDS
for run in 1 2 3 4 5; do
  scenario="$TMP/s$run.textproto"
  name=$(grep -o '^name: "[a-z_]*"' "$scenario" | cut -d'"' -f2)
  max_parallelism=4
  [[ $run -eq 5 ]] && max_parallelism=1  # a singleton has one vnode

  # The reference: never killed.
  ref="$TMP/ref$run"
  rm -rf "$ref"; mkdir -p "$ref"
  run_ok "$ref.log" --scenario="$scenario" --data_dir="$ref/data" --dump_dir="$ref/dump" --json
  tail -1 "$ref.log" | grep -q "\"upstream_ops\":$(max_ops "$scenario")," ||
      { tail -1 "$ref.log"; fail "$name: reference run did not apply all max_ops changes"; }

  data="$TMP/data$run"
  rm -rf "$data"
  kills=0
  finished=0
  cycle=0
  # Shrinks when runs end before their kill (a finished job's reruns are
  # short), so that kills keep landing inside runs.
  max_delay_ms=$MAX_DELAY_MS
  while [[ $kills -lt $KILLS_PER_RUN ]]; do
    cycle=$((cycle + 1))
    [[ $cycle -le $((KILLS_PER_RUN * 3)) ]] ||
        fail "$name: only $kills kills in $((cycle - 1)) cycles (runs end before the kill)"
    parallelism=$(pick_parallelism $max_parallelism)
    delay=$(pick_delay $max_delay_ms)
    log="$TMP/run${run}_$cycle.log"
    "$BIN" --scenario="$scenario" --data_dir="$data" --parallelism=$parallelism --json \
        > "$log" 2>&1 &
    pid=$!
    sleep "$delay"
    if kill -9 $pid 2>/dev/null; then
      wait $pid 2>/dev/null
      kills=$((kills + 1))
      echo "$name: cycle $cycle: SIGKILL after ${delay}s at parallelism $parallelism"
    else
      # It ended by itself before the kill: then it must have succeeded.
      wait $pid
      code=$?
      [[ $code -eq 0 ]] || { cat "$log"; fail "$name: cycle $cycle ended with exit $code"; }
      finished=$((finished + 1))
      max_delay_ms=$(( max_delay_ms * 4 / 5 ))
      [[ $max_delay_ms -ge 100 ]] || max_delay_ms=100
      echo "$name: cycle $cycle: finished (exit 0) within ${delay}s"
    fi
  done
  total_kills=$((total_kills + kills))

  # Resume once more, to the end.
  final="$TMP/final$run"
  rm -rf "$final"
  run_ok "$final.log" --scenario="$scenario" --data_dir="$data" --dump_dir="$final/dump" --json
  expect_consistent "$name" "$final.log" "$final/dump"
  expect_resumed "$name" "$final.log"
  # Its own changes only (the runs before made the rest): at most max_ops.
  # That the job made exactly max_ops in all, the upstream dump's equality
  # with the never-killed run's says.
  final_ops=$(tail -1 "$final.log" | grep -o '"upstream_ops":[0-9]*' | cut -d: -f2)
  [[ -n $final_ops && $final_ops -le $(max_ops "$scenario") ]] ||
      fail "$name: final run applied more than max_ops changes: $(tail -1 "$final.log")"
  cmp "$final/dump/upstream.tsv" "$ref/dump/upstream.tsv" ||
      fail "$name: upstream dump differs from the never-killed run's"
  cmp "$final/dump/view.tsv" "$ref/dump/view.tsv" ||
      fail "$name: view dump differs from the never-killed run's"
  echo "ok: $name: $kills kills ($finished runs ended by themselves), consistent," \
       "dumps equal to each other and to the never-killed run" \
       "($(( $(wc -l < "$final/dump/view.tsv") - 1 )) rows)"
done
echo "ok: $total_kills kills over 5 runs in $((SECONDS - start_seconds))s (seed $SEED)"
