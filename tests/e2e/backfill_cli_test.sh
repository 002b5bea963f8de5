#!/usr/bin/env bash
# Black-box tests of //tools:backfill: documented exit codes and messages for
# bad flags and bad scenarios (and nothing written to an existing data
# directory before validation), then SIGKILL at several moments during a
# backfill, resuming each time with the same data directory (sometimes at
# another parallelism): the final run must be consistent and its dumps equal.
set -uo pipefail
source tests/e2e/lib.sh

# --- bad flags: exit 2, a clear message, the JSON line last ---------------
out=$("$BIN" --no_such_flag=1 2>&1); code=$?
[[ $code -eq 2 ]] || fail "unknown flag: exit $code"
grep -q "unknown flag --no_such_flag" <<<"$out" || fail "unknown flag message: $out"
[[ "$(tail -1 <<<"$out")" == \{* ]] || fail "last line is not JSON: $out"
out=$("$BIN" --parallelism=abc 2>&1); code=$?
[[ $code -eq 2 ]] || fail "bad number: exit $code"
grep -q "parallelism=abc" <<<"$out" || fail "bad number message: $out"

# --- bad scenario: exit 2 naming the field; the data dir is left alone ------
mkdir -p "$TMP/existing"; echo keep > "$TMP/existing/marker"
cat > "$TMP/bad.textproto" <<'X'
name: "bad_pk"
table { columns { name: "a" type: INT64 } primary_key { column: 3 } }
X
out=$("$BIN" --scenario="$TMP/bad.textproto" --data_dir="$TMP/existing" 2>&1); code=$?
[[ $code -eq 2 ]] || fail "bad scenario: exit $code"
grep -q "primary_key" <<<"$out" || fail "bad scenario message does not name the field: $out"
# The result names the scenario (its file parsed), not the file.
grep -q '"scenario":"bad_pk"' <<<"$(tail -1 <<<"$out")" || fail "bad scenario: not named: $out"
[[ "$(ls "$TMP/existing")" == "marker" ]] || fail "the data directory was written"
echo 'table { ' > "$TMP/unparsable.textproto"
out=$("$BIN" --scenario="$TMP/unparsable.textproto" 2>&1); code=$?
[[ $code -eq 2 ]] || fail "unparsable scenario: exit $code"

# --- the scenario's time limit runs out: exit 2 saying so, with how far the
# job got (not zeros), and the directory resumes with a longer limit ------
cat > "$TMP/slow.textproto" <<'X'
name: "slow"
table { columns { name: "k" type: INT64 } primary_key { column: 0 } }
initial_rows: 3000
seed: 3
backfill { rate_limit: 1 }
runtime { barrier_interval_ms: 50 max_seconds: 2 }
X
"$BIN" --scenario="$TMP/slow.textproto" --data_dir="$TMP/slow" --parallelism=3 \
    > "$TMP/slow.out" 2> "$TMP/slow.err"; code=$?
[[ $code -eq 2 ]] || fail "time limit: exit $code"
grep -q "DEADLINE_EXCEEDED: the job did not finish within its max_duration of 2s" \
    "$TMP/slow.err" || fail "time limit message: $(cat "$TMP/slow.err")"
grep -q "runtime.max_seconds" "$TMP/slow.err" || fail "no hint: $(cat "$TMP/slow.err")"
grep -q "resume with" "$TMP/slow.err" || fail "no resume hint: $(cat "$TMP/slow.err")"
json=$(tail -1 "$TMP/slow.out")
epochs=$(grep -o '"epochs":[0-9]*' <<<"$json" | cut -d: -f2)
[[ ${epochs:-0} -ge 10 ]] || fail "the error result does not say how far the job got: $json"
grep -q '"snapshot_rows":[1-9]' <<<"$json" || fail "no snapshot rows in: $json"
grep -q '"parallelism":3' <<<"$json" || fail "not --parallelism: $json"
grep -q '"seconds":[12]\.' <<<"$json" || fail "no seconds in: $json"
# Again without --parallelism: the job's saved parallelism is in force (3),
# not the scenario's (2).
"$BIN" --scenario="$TMP/slow.textproto" --data_dir="$TMP/slow" \
    > "$TMP/slow2.out" 2> "$TMP/slow2.err"; code=$?
[[ $code -eq 2 ]] || fail "time limit, resumed: exit $code"
json=$(tail -1 "$TMP/slow2.out")
grep -q '"parallelism":3' <<<"$json" || fail "not the parallelism in force: $json"
sed 's/max_seconds: 2/max_seconds: 60/' "$TMP/slow.textproto" > "$TMP/slow60.textproto"
run_ok "$TMP/slow_resumed.log" --scenario="$TMP/slow60.textproto" \
    --data_dir="$TMP/slow" --rate_limit=0 --dump_dir="$TMP/slow_dump"
expect_consistent slow_resumed "$TMP/slow_resumed.log" "$TMP/slow_dump"
expect_resumed slow_resumed "$TMP/slow_resumed.log"

# --- a backfill that finished in a run then stopped by Ctrl-C: the result
# has its backfill_seconds, and the rate is over them ------------------------
cat > "$TMP/finished.textproto" <<'X'
name: "finished"
table { columns { name: "k" type: INT64 } primary_key { column: 0 } }
initial_rows: 2000
seed: 4
runtime { barrier_interval_ms: 20 checkpoint_frequency: 1 max_seconds: 120 extra_checkpoints_after_finish: 1000 }
X
"$BIN" --scenario="$TMP/finished.textproto" --data_dir="$TMP/finished" \
    > "$TMP/finished.out" 2> "$TMP/finished.err" &
pid=$!
for _ in $(seq 300); do
  grep -q "100.0% of snapshot" "$TMP/finished.out" && break
  sleep 0.1
done
grep -q "100.0% of snapshot" "$TMP/finished.out" || fail "finished: the backfill did not finish: $(cat "$TMP/finished.out")"
kill -INT "$pid"; wait "$pid"; code=$?
[[ $code -eq 130 ]] || fail "finished, then Ctrl-C: exit $code: $(cat "$TMP/finished.err")"
json=$(tail -1 "$TMP/finished.out")
backfill_seconds=$(grep -o '"backfill_seconds":[0-9.e-]*' <<<"$json" | cut -d: -f2)
[[ -n $backfill_seconds ]] || fail "the finished backfill's seconds are missing: $json"
awk -v b="$backfill_seconds" 'BEGIN { exit !(b > 0 && b < 1.5) }' ||
    fail "backfill_seconds $backfill_seconds is not the backfill's time: $json"
grep -q '"snapshot_rows":2000,' <<<"$json" || fail "finished: $json"

# --- SIGKILL during the backfill, resume, possibly at another parallelism ---
# A rate-limited backfill of 40k rows under pk-changing churn (~5 s a run).
SCENARIO="$TMP/crash.textproto"
cat > "$SCENARIO" <<'X'
name: "crash"
table {
  columns { name: "id" type: INT64 }
  columns { name: "tag" type: VARCHAR nullable: true }
  columns { name: "v" type: DECIMAL nullable: true }
  primary_key { column: 0 descending: true }
  vnode_count: 64
}
initial_rows: 40000
seed: 5
workload { ops_per_second: 3000 insert_weight: 1 update_weight: 2 delete_weight: 1
           update_primary_key: true null_fraction: 0.1 }
backfill { parallelism: 2 chunk_size: 64 rate_limit: 8000 }
runtime { barrier_interval_ms: 50 checkpoint_frequency: 2 }
X
DATA="$TMP/crash"
rm -rf "$DATA"
kills=0
for round in 1 2 3 4 5; do
  parallelism=$(( (round % 3) + 1 ))
  "$BIN" --scenario="$SCENARIO" --data_dir="$DATA" --parallelism=$parallelism \
      > "$TMP/run$round.log" 2>&1 &
  pid=$!
  # Kill after a varying number of progress lines (or when it ends).
  target=$(( round ))
  for _ in $(seq 1 400); do
    lines=$(grep -c "epoch" "$TMP/run$round.log" 2>/dev/null || true)
    if [[ ${lines:-0} -ge $target ]] || ! kill -0 $pid 2>/dev/null; then break; fi
    sleep 0.05
  done
  if kill -9 $pid 2>/dev/null; then kills=$((kills + 1)); fi
  wait $pid 2>/dev/null
done
run_ok "$TMP/final.log" --scenario="$SCENARIO" --data_dir="$DATA" --parallelism=2 \
    --dump_dir="$TMP/dump"
expect_consistent final "$TMP/final.log" "$TMP/dump"
expect_resumed final "$TMP/final.log"
echo "ok: $kills kills, resumed, consistent, dumps equal"
