#!/usr/bin/env bash
# Black-box tests of the job state of //tools:backfill (issue 14, defects 1,
# 2 and 6; tools/README.md "Job state"):
#  (a) pause at epoch 3, then resume and set a rate limit at epoch 20: both
#      apply, the run finishes consistent (before: it stayed paused until its
#      safety timeout, exit 2);
#  (b) a low initial rate lifted online, then one transient WAL-sync fault
#      recovered in-process: the lifted rate survives and the run finishes;
#  (c) the same with kill -9 and a restart of the command;
#  (d) an action that already applied never fires again after a restart, and
#      an explicit --rate_limit wins over the saved rate;
#  (e) another scenario on this job's --data_dir: FailedPrecondition, exit 2,
#      naming the first difference and suggesting another --data_dir, never
#      DATA_LOSS; the job itself still resumes there;
#  (f) pause and resume at one epoch: InvalidArgument naming both actions.
# The slow rates are chosen so that a run that lost the lifted rate (or
# re-applied an old action) cannot finish within its max_seconds.
set -uo pipefail
source tests/e2e/lib.sh
RUN_TIMEOUT=150

# write_scenario FILE NAME INITIAL_RATE ACTIONS...: 20k rows under churn,
# 100 ms barriers, a checkpoint at each, a 45 s safety timeout.
write_scenario() {
  local file=$1 name=$2 rate=$3
  shift 3
  cat > "$file" <<X
name: "$name"
table {
  columns { name: "id" type: INT64 }
  columns { name: "tag" type: VARCHAR nullable: true }
  columns { name: "v" type: DECIMAL nullable: true }
  primary_key { column: 0 }
  vnode_count: 64
}
initial_rows: 20000
seed: 11
workload { ops_per_second: 1000 insert_weight: 1 update_weight: 2 delete_weight: 1
           update_primary_key: true null_fraction: 0.1 }
backfill { parallelism: 2 chunk_size: 64 rate_limit: $rate }
runtime { barrier_interval_ms: 100 checkpoint_frequency: 1 max_seconds: 45 }
X
  for action in "$@"; do echo "actions { $action }" >> "$file"; done
}

# run_to LOG ARGS...: runs the command (bounded), sets $code.
run_to() {
  local log=$1
  shift
  timeout $RUN_TIMEOUT "$BIN" "$@" > "$log" 2>&1
  code=$?
}

# wait_for_epoch LOG PID N: until the run's progress line shows epoch >= N
# (the plain display prints one about every second) or the run ended.
wait_for_epoch() {
  local epoch
  for _ in $(seq 1 600); do
    epoch=$(tr '\r' '\n' < "$1" 2>/dev/null | grep -o 'epoch [0-9]*' | tail -1 | cut -d' ' -f2)
    if [[ ${epoch:-0} -ge $3 ]] || ! kill -0 "$2" 2>/dev/null; then return; fi
    sleep 0.05
  done
}

# --- (a) pause at 3; resume + set_rate_limit at 20 ---------------------------
write_scenario "$TMP/a.textproto" same_epoch 500 \
    "at_epoch: 3 pause: true" "at_epoch: 20 resume: true" "at_epoch: 20 set_rate_limit: 10000"
run_to "$TMP/a.log" --scenario="$TMP/a.textproto" --data_dir="$TMP/a.data" --dump_dir="$TMP/a.dump"
[[ $code -eq 0 ]] || { tail -5 "$TMP/a.log"; fail "(a) same-epoch resume + rate limit: exit $code"; }
expect_consistent "(a)" "$TMP/a.log" "$TMP/a.dump"
echo "ok: (a) pause at 3, resume + set_rate_limit at 20: consistent, no recovery"

# --- (b) lifted online, then a WAL-sync fault recovered in-process -----------
# 100 rows/s would take 200 s; lifted to 4000 at epoch 2 it takes ~5 s. The
# fault hits the 6th log sync: the job's definition, the bulk load, then the
# 4th checkpoint of the job, after the one that persisted the lift.
LIFT=("at_epoch: 2 set_rate_limit: 4000")
write_scenario "$TMP/lift.textproto" lifted 100 "${LIFT[@]}"
run_to "$TMP/b.log" --scenario="$TMP/lift.textproto" --data_dir="$TMP/b.data" \
    --dump_dir="$TMP/b.dump" --inject_storage_faults=op=sync,file=.log,after=5,count=1
[[ $code -eq 0 ]] || { tail -5 "$TMP/b.log"; fail "(b) lifted rate + sync fault: exit $code"; }
expect_consistent "(b)" "$TMP/b.log" "$TMP/b.dump" injected
[[ $(recoveries_of "$TMP/b.log") == 1 ]] || fail "(b) expected 1 recovery: $(tail -1 "$TMP/b.log")"
grep -q "recovering from the last checkpoint" "$TMP/b.log" || fail "(b) the recovery was not logged"
echo "ok: (b) lifted rate survives an in-process recovery: consistent, 1 recovery"

# --- (c) lifted online, then kill -9 and a restart ---------------------------
"$BIN" --scenario="$TMP/lift.textproto" --data_dir="$TMP/c.data" > "$TMP/c1.log" 2>&1 &
pid=$!
wait_for_epoch "$TMP/c1.log" $pid 6   # the lift (epoch 2) is committed
kill -9 $pid 2>/dev/null && echo "(c) killed at: $(tr '\r' '\n' < "$TMP/c1.log" | grep epoch | tail -1)"
wait $pid 2>/dev/null
run_to "$TMP/c2.log" --scenario="$TMP/lift.textproto" --data_dir="$TMP/c.data" --dump_dir="$TMP/c.dump"
[[ $code -eq 0 ]] || { tail -5 "$TMP/c2.log"; fail "(c) restart after kill -9: exit $code"; }
expect_consistent "(c)" "$TMP/c2.log" "$TMP/c.dump"
expect_resumed "(c)" "$TMP/c2.log"
echo "ok: (c) lifted rate survives kill -9 and a restart: consistent, resumed"

# --- (d) an applied action never fires again; an explicit flag wins ---------
# Fast at first, throttled to 50 rows/s at epoch 2 (20k rows would take
# 400 s), killed; restarted with --rate_limit=8000: the saved throttle is
# replaced and, as epoch 2 is past, never re-applied.
write_scenario "$TMP/d.textproto" throttled 8000 "at_epoch: 2 set_rate_limit: 50"
"$BIN" --scenario="$TMP/d.textproto" --data_dir="$TMP/d.data" > "$TMP/d1.log" 2>&1 &
pid=$!
wait_for_epoch "$TMP/d1.log" $pid 6   # the throttle (epoch 2) is committed
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
run_to "$TMP/d2.log" --scenario="$TMP/d.textproto" --data_dir="$TMP/d.data" \
    --rate_limit=8000 --parallelism=3 --dump_dir="$TMP/d.dump"
[[ $code -eq 0 ]] || { tail -5 "$TMP/d2.log"; fail "(d) restart with --rate_limit: exit $code"; }
expect_consistent "(d)" "$TMP/d2.log" "$TMP/d.dump"
expect_resumed "(d)" "$TMP/d2.log"
tail -1 "$TMP/d2.log" | grep -q '"parallelism":3,' || fail "(d) --parallelism=3 not applied: $(tail -1 "$TMP/d2.log")"
echo "ok: (d) the epoch-2 throttle did not fire again; --rate_limit and --parallelism won"

# --- (e) another scenario on this job's data directory ------------------------
cat > "$TMP/other.textproto" <<'X'
name: "other"
table {
  columns { name: "id" type: INT64 }
  columns { name: "payload" type: BYTEA nullable: true }
  primary_key { column: 0 }
  vnode_count: 64
}
initial_rows: 1000
X
run_to "$TMP/e.log" --scenario="$TMP/other.textproto" --data_dir="$TMP/a.data"
[[ $code -eq 2 ]] || { tail -5 "$TMP/e.log"; fail "(e) another job's directory: exit $code, expected 2"; }
grep -q "^backfill: error: FAILED_PRECONDITION: .*another job" "$TMP/e.log" ||
    { tail -5 "$TMP/e.log"; fail "(e) not FAILED_PRECONDITION naming another job"; }
grep -q "upstream table column 1: \`tag VARCHAR\` (id 2) in the data directory, \`payload BYTEA\` (id 2) in this job" "$TMP/e.log" ||
    { tail -5 "$TMP/e.log"; fail "(e) the first difference is not named"; }
grep -q -- "--data_dir" "$TMP/e.log" || fail "(e) no suggestion of another --data_dir"
! grep -q "DATA_LOSS" "$TMP/e.log" || fail "(e) reported as DATA_LOSS"
tail -1 "$TMP/e.log" | grep -q '"error":"FAILED_PRECONDITION' || fail "(e) JSON error: $(tail -1 "$TMP/e.log")"
# The job itself still resumes on its directory.
run_to "$TMP/e2.log" --scenario="$TMP/a.textproto" --data_dir="$TMP/a.data" --dump_dir="$TMP/e.dump"
[[ $code -eq 0 ]] || { tail -5 "$TMP/e2.log"; fail "(e) the job's own rerun: exit $code"; }
expect_consistent "(e) rerun" "$TMP/e2.log" "$TMP/e.dump"
echo "ok: (e) another scenario on the directory: FAILED_PRECONDITION naming the difference, exit 2"

# --- (f) contradictory actions at one epoch ----------------------------------
write_scenario "$TMP/f.textproto" contradiction 0 "at_epoch: 7 pause: true" \
    "at_epoch: 7 set_rate_limit: 10" "at_epoch: 7 resume: true"
run_to "$TMP/f.log" --scenario="$TMP/f.textproto" --data_dir="$TMP/f.data"
[[ $code -eq 2 ]] || fail "(f) pause + resume at one epoch: exit $code, expected 2"
grep -q "INVALID_ARGUMENT: actions\[0\] (pause at epoch 7) and actions\[2\] (resume at epoch 7) contradict" "$TMP/f.log" ||
    { tail -3 "$TMP/f.log"; fail "(f) the message does not name both actions"; }
[[ ! -e "$TMP/f.data" ]] || fail "(f) the data directory was created"
echo "ok: job state"
