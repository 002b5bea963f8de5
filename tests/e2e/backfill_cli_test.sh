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
table { columns { name: "a" type: INT64 } primary_key { column: 3 } }
X
out=$("$BIN" --scenario="$TMP/bad.textproto" --data_dir="$TMP/existing" 2>&1); code=$?
[[ $code -eq 2 ]] || fail "bad scenario: exit $code"
grep -q "primary_key" <<<"$out" || fail "bad scenario message does not name the field: $out"
[[ "$(ls "$TMP/existing")" == "marker" ]] || fail "the data directory was written"
echo 'table { ' > "$TMP/unparsable.textproto"
out=$("$BIN" --scenario="$TMP/unparsable.textproto" 2>&1); code=$?
[[ $code -eq 2 ]] || fail "unparsable scenario: exit $code"

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
