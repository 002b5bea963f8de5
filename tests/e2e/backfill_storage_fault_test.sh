#!/usr/bin/env bash
# Black-box storage-fault test of //tools:backfill (--inject_storage_faults,
# test only; tools/README.md). Transient faults of each kind -- a failed
# write-ahead-log write, a failed sync, a full disk that clears, failed
# table-file reads -- are logged naming the operation, recovered from (the
# store reopened, the job resumed from the last checkpoint: "recoveries" >=
# 1 in the JSON), and the run still ends consistent with equal dumps. A
# fault that persists ends the run with exit 2 within a bounded time, the
# message naming the operation: never exit 0, never a hang or a signal.
set -uo pipefail
source tests/e2e/lib.sh
# Bound on one run; a hang shows as exit 124.
RUN_TIMEOUT=180

# A rate-limited backfill (~3 s, ~30 checkpoints) under pk-changing churn.
SCENARIO="$TMP/fault.textproto"
cat > "$SCENARIO" <<'X'
name: "fault"
table {
  columns { name: "id" type: INT64 }
  columns { name: "tag" type: VARCHAR nullable: true }
  columns { name: "v" type: DECIMAL nullable: true }
  primary_key { column: 0 descending: true }
  vnode_count: 32
}
initial_rows: 8000
seed: 9
workload { ops_per_second: 2000 insert_weight: 1 update_weight: 2 delete_weight: 1
           update_primary_key: true null_fraction: 0.1 }
backfill { parallelism: 2 chunk_size: 64 rate_limit: 3000 }
runtime { barrier_interval_ms: 50 checkpoint_frequency: 2 max_seconds: 300 }
X

# run "NAME|fresh or base|SPEC|MESSAGE": runs the command with the faults of
# SPEC on a new data directory, or on a copy of $BASE; sets $name, $spec,
# $message (what the logged error must say), $data, $code, $out, $err, and
# SECONDS (from the start of the run).
run() {
  local dir
  IFS='|' read -r name dir spec message <<<"$1"
  data="$TMP/$name.data"; out="$TMP/$name.out"; err="$TMP/$name.err"
  rm -rf "$data"
  [[ $dir == base ]] && cp -r "$BASE" "$data"
  SECONDS=0
  timeout $RUN_TIMEOUT "$BIN" --scenario="$SCENARIO" --data_dir="$data" \
      --dump_dir="$TMP/$name.dump" --json --inject_storage_faults="$spec" > "$out" 2> "$err"
  code=$?
}
show() { echo "--- stderr"; tail -20 "$err"; echo "--- stdout"; tail -3 "$out"; }

# A finished job whose data is in table files (the rerun's open flushes the
# log into them), for the read faults.
BASE="$TMP/base"
run_ok "$TMP/base1.log" --scenario="$SCENARIO" --data_dir="$BASE" --json
run_ok "$TMP/base2.log" --scenario="$SCENARIO" --data_dir="$BASE" --json
ls "$BASE"/*.sst > /dev/null 2>&1 || fail "setting up: no table files in $BASE"

# --- transient faults: logged naming the operation, recovered, consistent ---
# name | fresh or base | spec | what the logged error says
transient=(
  "wal_write|fresh|op=write,file=.log,after=4,count=1|write of .*\.log failed"
  "wal_write_twice|fresh|op=write,file=.log,after=6,count=2|write of .*\.log failed"
  "wal_sync|fresh|op=sync,file=.log,after=4,count=1|sync of .*\.log failed"
  "random_syncs|fresh|op=sync,probability=0.1,seed=5,count=2|sync of .* failed"
  "full_disk|fresh|op=full_disk,after=5,count=3|No space left on device"
  "sst_read|base|op=read,file=.sst,after=20,count=1|read of .*\.sst failed"
  "sst_reads|base|op=read,file=.sst,after=50,count=2|read of .*\.sst failed"
)
for entry in "${transient[@]}"; do
  run "$entry"
  [[ $code -eq 0 ]] || { show; fail "$name ($spec): exit $code, expected 0 after recovering"; }
  expect_consistent "$name" "$out" "$TMP/$name.dump" injected
  last=$(tail -1 "$out")
  recoveries=$(recoveries_of "$out")
  [[ ${recoveries:-0} -ge 1 ]] || { show; fail "$name: no recovery reported: $last"; }
  # A recovery is not a resume: a fresh directory's run created its job.
  if [[ $entry == *"|fresh|"* ]]; then
    grep -q '"resumed":false' <<<"$last" || { show; fail "$name: a fresh run called resumed: $last"; }
  fi
  grep -q "recovering from the last checkpoint" "$err" || { show; fail "$name: recovery not logged"; }
  grep "recovering from the last checkpoint" "$err" | head -1 | grep -Eq "$message" ||
      { show; fail "$name: the logged error does not say /$message/"; }
  grep -q "injected storage fault" "$err" || { show; fail "$name: the fault is not named"; }
  echo "ok: $name ($spec): $recoveries recoveries, consistent, dumps equal (${SECONDS}s)"
  grep "recovering" "$err" | head -1 | cut -c1-240
done

# --- persistent faults: exit 2 in bounded time naming the operation -------
persistent=(
  "dead_wal_write|fresh|op=write,file=.log,after=4,persistent|write of .*\.log failed"
  "dead_sync|fresh|op=sync,after=4,persistent|sync of .* failed"
  "disk_full|fresh|op=full_disk,after=5,persistent|No space left on device"
  "dead_sst_read|base|op=read,file=.sst,after=20,persistent|read of .*\.sst failed"
)
for entry in "${persistent[@]}"; do
  run "$entry"
  [[ $code -ne 124 ]] || { show; fail "$name ($spec): hung (no exit within ${RUN_TIMEOUT}s)"; }
  [[ $code -eq 2 ]] || { show; fail "$name ($spec): exit $code, expected 2"; }
  grep -q "^backfill: error: " "$err" || { show; fail "$name: no error line"; }
  grep "^backfill: error: " "$err" | grep -Eq "$message" ||
      { show; fail "$name: the error does not say /$message/"; }
  grep -q "giving up after 3 recoveries" "$err" || { show; fail "$name: did not retry 3 times"; }
  tail -1 "$out" | grep -q '"consistent":false' || fail "$name: JSON claims consistent"
  tail -1 "$out" | grep -q '"error":"' || fail "$name: JSON has no error"
  [[ $SECONDS -lt 60 ]] || fail "$name: took ${SECONDS}s to give up"
  echo "ok: $name ($spec): exit 2 after ${SECONDS}s"
  grep "^backfill: error: " "$err" | cut -c1-240
  # Nothing committed was lost: the same directory resumes consistent.
  run_ok "$TMP/$name.resume" --scenario="$SCENARIO" --data_dir="$data" --json
  expect_resumed "$name" "$TMP/$name.resume"
  [[ $(recoveries_of "$TMP/$name.resume") == 0 ]] ||
      fail "$name: the resumed run (no faults) recovered: $(tail -1 "$TMP/$name.resume")"
done

# --- bad specs are bad flags: exit 2 before anything runs -----------------
out=$("$BIN" --inject_storage_faults=op=erase --data_dir="$TMP/untouched" 2>&1); code=$?
[[ $code -eq 2 ]] || fail "bad spec: exit $code"
grep -q -- "--inject_storage_faults: .*op=erase" <<<"$out" || fail "bad spec message: $out"
[[ ! -e "$TMP/untouched" ]] || fail "bad spec: the data directory was created"
echo "ok: storage faults"
