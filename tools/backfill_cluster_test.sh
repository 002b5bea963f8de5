#!/usr/bin/env bash
# Black-box test of //tools:backfill_cluster: the job over a coordinator and
# 3 worker processes (a local 3-member etcd cluster, a local object store)
#  0. refuses a scenario that rescales online before it starts anything;
#  1. ends consistent with no recovery;
#  2. with worker 0 SIGKILLed after epoch 10 (it runs backfill actor 100),
#     recovers and ends consistent with its actors on the workers left;
#  3. on Ctrl-C exits 130 and leaves no process it started.
# After each run no coordinator, worker or etcd process of the run is left.
set -uo pipefail
BIN="tools/backfill_cluster"
SCENARIO="tools/testdata/cluster.textproto"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"

fail() { echo "FAIL: $*"; exit 1; }

expect_nothing_left() {
  local data_dir=$1 what=$2
  for _ in $(seq 50); do
    pgrep -f -- "--data_dir=$data_dir" > /dev/null || \
      pgrep -f "etcd --name member[0-9]* --data-dir $data_dir/" > /dev/null || return 0
    sleep 0.1
  done
  pgrep -fa -- "--data_dir=$data_dir"
  pgrep -fa "etcd --name member[0-9]* --data-dir $data_dir/"
  fail "$what: a process of $data_dir is still running"
}

# 0. A scenario that rescales online is refused before anything starts.
"$BIN" --workers=2 --scenario=tools/scenarios/heavy_churn.textproto \
    --data_dir="$TMP/refused" > "$TMP/refused.log" 2>&1
code=$?
[[ $code -eq 2 ]] || { cat "$TMP/refused.log"; fail "heavy_churn: exit $code, not 2"; }
grep -q "not rescaled online" "$TMP/refused.log" || { cat "$TMP/refused.log"; fail "heavy_churn: no reason given"; }
grep -q "^ATTEMPT" "$TMP/refused.log" && fail "heavy_churn: a job was started"
expect_nothing_left "$TMP/refused" "after the refusal"
echo "refused: $(tail -1 "$TMP/refused.log")"

# 1. Consistent, no recovery.
"$BIN" --workers=3 --scenario="$SCENARIO" --data_dir="$TMP/plain" --json \
    > "$TMP/plain.log" 2>&1
code=$?
last=$(tail -1 "$TMP/plain.log")
[[ $code -eq 0 ]] || { tail -20 "$TMP/plain.log"; fail "plain run: exit $code"; }
grep -q '"consistent":true' <<<"$last" || fail "plain run not consistent: $last"
grep -q '"workers":3,' <<<"$last" || fail "plain run: not 3 workers: $last"
grep -q '"workers_killed":0,' <<<"$last" || fail "plain run killed a worker: $last"
grep -q '"recoveries":0,' <<<"$last" || fail "plain run recovered without a fault: $last"
expect_nothing_left "$TMP/plain" "after the plain run"
echo "plain: $last"

# 2. Worker 0 killed after epoch 10.
"$BIN" --workers=3 --scenario="$SCENARIO" --data_dir="$TMP/kill" \
    --kill_worker_after_epochs=10 > "$TMP/kill.log" 2>&1
code=$?
last=$(tail -1 "$TMP/kill.log")
[[ $code -eq 0 ]] || { tail -20 "$TMP/kill.log"; fail "kill run: exit $code"; }
grep -q '"consistent":true' <<<"$last" || fail "kill run not consistent: $last"
grep -q '"workers_killed":1,' <<<"$last" || fail "kill run: no worker killed: $last"
grep -q '"recoveries":0,' <<<"$last" && fail "kill run: the kill caused no recovery: $last"
grep -q "killing worker 0" "$TMP/kill.log" || fail "kill run: no kill line"
grep -q "^ATTEMPT 2 workers 2$" "$TMP/kill.log" || \
    { cat "$TMP/kill.log"; fail "kill run: the recovery did not run on the 2 workers left"; }
expect_nothing_left "$TMP/kill" "after the kill run"
echo "kill: $last"

# 3. Ctrl-C while the job runs.
"$BIN" --workers=3 --scenario="$SCENARIO" --data_dir="$TMP/interrupt" \
    > "$TMP/interrupt.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  grep -q "^ATTEMPT 1" "$TMP/interrupt.log" && break
  sleep 0.1
done
grep -q "^ATTEMPT 1" "$TMP/interrupt.log" || { cat "$TMP/interrupt.log"; fail "interrupt run never started its job"; }
kill -INT "$pid"
wait "$pid"
code=$?
[[ $code -eq 130 ]] || { cat "$TMP/interrupt.log"; fail "Ctrl-C: exit $code, not 130"; }
expect_nothing_left "$TMP/interrupt" "after Ctrl-C"
echo "interrupt: exit 130, nothing left"
echo PASS
