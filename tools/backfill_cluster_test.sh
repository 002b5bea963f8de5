#!/usr/bin/env bash
# Black-box test of //tools:backfill_cluster: the job over a coordinator, a
# standby coordinator and worker processes (a local 3-member etcd cluster, a
# local object store), on tools/testdata/cluster.textproto (its upstream
# stops after a fixed number of changes, so every run ends with the same
# table and view):
#  0. refuses a scenario that rescales online before it starts anything;
#     refuses bad flags (an unknown flag, a bad value, a positional
#     argument) and flag combinations it cannot run, each with exit 2, one
#     `backfill_cluster: error:` line on stderr and the error in the JSON
#     last line of stdout, before it starts anything; a run whose every
#     coordinator ends without a result names the coordinator's error;
#     --help exits 0;
#  1. ends consistent with no recovery and no failover, and dumps the table
#     and the view;
#  2. worker 0 SIGKILLed after epoch 10: one recovery over the 2 workers left
#     (mid-backfill: faults_after_backfill 0);
#  3. the leading coordinator SIGKILLed after epoch 20: the standby takes
#     over and finishes the job;
#  4. the raft leader of the etcd cluster SIGKILLed after epoch 20;
#  5. the last worker SIGSTOPped past its lease after epoch 20, then
#     SIGCONTed: it is fenced (and exits saying so), the job goes on
#     without it;
#  6. the last worker SIGSTOPped for less than its lease but more than the
#     barrier timeout: the timeout fails the attempt, the leader fences the
#     worker that held the barrier (or sent no sync reply) while the others
#     went on, and the job recovers without it;
#  7. the last worker's actors hung after epoch 20 (every call into their
#     tables blocks) while its process answers and keeps its lease: the
#     barrier timeout fails the attempt, the leader fences the worker whose
#     actors did not emit the barrier, and the job recovers without it;
#  8. a third worker added after epoch 15 to a job on 2: the attempt ends
#     at its next checkpoint (a reschedule, not a recovery) and the next one
#     places the actors over 3 by the new vnode assignment;
#  9. on Ctrl-C exits 130 and leaves no process it started;
# 10. with an etcd of its own and a kept directory, resumes after Ctrl-C,
#     the first run's workers not counted as this run's fenced ones;
# 11. a second job on that etcd is refused under the first job's
#     --etcd_prefix and runs consistent under its own;
# 12. a worker killed after the backfill finished: the kill line and the
#     JSON (faults_after_backfill) say so.
# Runs 2-8 end consistent with dumps byte-equal to run 1's, and no run's
# committed epoch goes back (the command checks each coordinator's reports).
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
grep -q "ATTEMPT" "$TMP/refused.log" && fail "heavy_churn: a job was started"
expect_nothing_left "$TMP/refused" "after the refusal"
echo "refused: $(tail -1 "$TMP/refused.log")"

# Runs the command with $3... in $TMP/$1 (its --data_dir): it must refuse at
# once, exit 2, print one `backfill_cluster: error: CODE: ...` line holding
# $2 on stderr and end stdout with the JSON line whose error holds $2, and
# leave nothing running.
expect_refused() {
  local name=$1 expected=$2
  shift 2
  "$BIN" --data_dir="$TMP/$name" "$@" > "$TMP/$name.out" 2> "$TMP/$name.err"
  local code=$?
  local last
  last=$(tail -1 "$TMP/$name.out")
  [[ $code -eq 2 ]] || { cat "$TMP/$name.err" "$TMP/$name.out"; fail "$name: exit $code, not 2"; }
  [[ $(wc -l < "$TMP/$name.err") -eq 1 ]] && grep -q "^backfill_cluster: error: [A-Z_]*: " "$TMP/$name.err" || \
      { cat "$TMP/$name.err"; fail "$name: not one backfill_cluster: error: line on stderr"; }
  grep -qF -- "$expected" "$TMP/$name.err" || { cat "$TMP/$name.err"; fail "$name: no $expected on stderr"; }
  [[ $last == '{'*'"error":"'*'}' ]] || { cat "$TMP/$name.out"; fail "$name: no JSON error line last on stdout"; }
  grep -qF -- "$expected" <<<"$last" || fail "$name: no $expected in the JSON error: $last"
  grep -q "ATTEMPT" "$TMP/$name.out" && fail "$name: a job was started"
  expect_nothing_left "$TMP/$name" "after the $name refusal"
  echo "$name: $(cat "$TMP/$name.err")"
}

# --help lists the flags and exits 0 (abseil's exits 1, "inconsistent").
"$BIN" --help > "$TMP/help.log" 2>&1 || { cat "$TMP/help.log"; fail "--help: exit $?, not 0"; }
grep -q -- "--kill_worker_after_epochs" "$TMP/help.log" || { cat "$TMP/help.log"; fail "--help: no flags listed"; }

# Bad flags: exit 2 (1 is "inconsistent"), not abseil's own error and exit.
expect_refused unknown_flag "INVALID_ARGUMENT: unknown flag --kind" --kind=snapshot
expect_refused bad_value "INVALID_ARGUMENT: --workers=abc: expected an integer" --workers=abc --json
expect_refused positional "INVALID_ARGUMENT: unexpected argument" stray
grep -q '"stray"' "$TMP/positional.err" || fail "positional: the argument is not named"
expect_refused bad_prefix "INVALID_ARGUMENT: --etcd_prefix=jobs: expected a key prefix" --etcd_prefix=jobs
# Flag combinations it cannot run, and an object store that is a file.
expect_refused etcd_leader_with_endpoints "--kill_etcd_leader_after_epochs kills a member" \
    --kill_etcd_leader_after_epochs=5 --etcd_endpoints=127.0.0.1:1 --json
expect_refused pause_one_worker "--pause_worker_after_epochs needs --workers >= 2" \
    --pause_worker_after_epochs=5 --workers=1 --json
expect_refused kill_coordinator_nostandby "--kill_coordinator_after_epochs needs the standby" \
    --nostandby --kill_coordinator_after_epochs=5 --json
mkdir -p "$TMP/objects_file" && touch "$TMP/objects_file/file"
expect_refused object_store_file "FAILED_PRECONDITION: object store root is not a directory" \
    --object_store="$TMP/objects_file/file" --json

# Every coordinator ends without a result (it cannot listen on a TEST-NET
# address, which is none of this machine's): the error names its cause.
"$BIN" --workers=1 --listen_host=192.0.2.1 --data_dir="$TMP/no_result" --json \
    > "$TMP/no_result.out" 2> "$TMP/no_result.err"
code=$?
last=$(tail -1 "$TMP/no_result.out")
[[ $code -eq 2 ]] || { cat "$TMP/no_result.err" "$TMP/no_result.out"; fail "no_result: exit $code, not 2"; }
grep -qF "coordinator 0 exited with code 2: UNAVAILABLE: checkpoint coordinator cannot listen on '192.0.2.1:0'" <<<"$last" || \
    { cat "$TMP/no_result.err"; fail "no_result: the JSON error does not name the coordinator's: $last"; }
grep -qF "backfill_cluster: error: every coordinator ended without a result: coordinator 0 exited with code 2: UNAVAILABLE" \
    "$TMP/no_result.err" || { cat "$TMP/no_result.err"; fail "no_result: the error line does not name the coordinator's"; }
expect_nothing_left "$TMP/no_result" "after the no_result run"
echo "no_result: $last"

# Runs the command with the scenario and its flags ($3...) in $TMP/$1, with
# dumps (not --json: the log lines are checked too); checks exit 0, a consistent JSON last line holding every pattern of
# $2 (a '|'-separated list), the dumps equal to the plain run's (but for the
# plain run itself), and nothing left running. Prints the last line.
run_case() {
  local name=$1 expected=$2
  shift 2
  "$BIN" --scenario="$SCENARIO" --data_dir="$TMP/$name" \
      --dump_dir="$TMP/$name-dump" "$@" > "$TMP/$name.log" 2>&1
  local code=$?
  local last
  last=$(tail -1 "$TMP/$name.log")
  [[ $code -eq 0 ]] || { tail -25 "$TMP/$name.log"; fail "$name: exit $code"; }
  grep -q '"consistent":true' <<<"$last" || { tail -25 "$TMP/$name.log"; fail "$name: not consistent: $last"; }
  local pattern
  IFS='|' read -ra patterns <<<"$expected"
  for pattern in "${patterns[@]}"; do
    grep -qF -- "$pattern" <<<"$last" || { tail -25 "$TMP/$name.log"; fail "$name: no $pattern in $last"; }
  done
  if [[ $name != plain ]]; then
    for file in upstream.tsv view.tsv; do
      cmp -s "$TMP/plain-dump/$file" "$TMP/$name-dump/$file" || \
          fail "$name: $file differs from the never-killed run's"
    done
  fi
  expect_nothing_left "$TMP/$name" "after the $name run"
  echo "$name: $last"
}

# After run $1 with a worker hung: the hang caused a recovery, the recovery's
# cause matches $2 (a grep pattern) and a leader's fence line matches $3.
expect_timeout_fence() {
  local name=$1 cause=$2 fence=$3
  grep -q '"recoveries":0,' <<<"$(tail -1 "$TMP/$name.log")" && \
      { cat "$TMP/$name.log"; fail "$name: the hang caused no recovery"; }
  grep -q "$cause" "$TMP/$name.log" || \
      { cat "$TMP/$name.log"; fail "$name: the recovery was not the timeout's"; }
  grep -q "$fence" "$TMP/$name.log" || \
      { cat "$TMP/$name.log"; fail "$name: the leader did not fence the hung worker"; }
}

# 1. Consistent, no recovery, no failover.
run_case plain '"workers":3,|"workers_killed":0,|"coordinator_failovers":0,|"recoveries":0,' \
    --workers=3
[[ $(wc -l < "$TMP/plain-dump/view.tsv") -gt 10000 ]] || fail "plain: the view dump is short"
grep -q "^scenario cluster: arrangement backfill, [0-9]* initial rows$" "$TMP/plain.log" ||
    { head -5 "$TMP/plain.log"; fail "plain: the scenario and its backfill kind are not named"; }
# The actors are placed by the vnode assignment: on every worker.
for w in 0 1 2; do
  grep -q "coordinator 0: ATTEMPT 1 workers 3 assignment [0-9]* actors .*:worker-$w" "$TMP/plain.log" || \
      { cat "$TMP/plain.log"; fail "plain: no actor placed on worker-$w"; }
done
cmp -s "$TMP/plain-dump/upstream.tsv" "$TMP/plain-dump/view.tsv" || fail "plain: the view's dump differs from the table's"

# 2. Worker 0 killed after epoch 10.
run_case kill_worker '"workers_killed":1,|"coordinator_failovers":0,|"recoveries":1,|"faults_after_backfill":0' \
    --workers=3 --kill_worker_after_epochs=10
grep -q "killing worker 0" "$TMP/kill_worker.log" || fail "kill_worker: no kill line"
grep -q "coordinator 0: ATTEMPT 2 workers 2 assignment" "$TMP/kill_worker.log" || \
    { cat "$TMP/kill_worker.log"; fail "kill_worker: the recovery did not run on the 2 workers left"; }
grep "coordinator 0: ATTEMPT 2 " "$TMP/kill_worker.log" | grep -q "worker-0" && \
    { cat "$TMP/kill_worker.log"; fail "kill_worker: an actor was placed on the killed worker"; }

# 3. The leading coordinator killed after epoch 20: the standby finishes;
#    worker 0 killed after epoch 30 since the view's creation, which the
#    standby continues: about 10 barriers after the takeover, not 30 (the
#    standby's own count).
run_case kill_coordinator '"coordinator_failovers":1,|"coordinators_killed":1,|"workers_killed":1,|"recoveries":1,' \
    --workers=3 --kill_coordinator_after_epochs=20 --kill_worker_after_epochs=30
grep -q "coordinator 1 took over" "$TMP/kill_coordinator.log" || \
    { cat "$TMP/kill_coordinator.log"; fail "kill_coordinator: the standby did not take over"; }
leader_at=$(sed -n 's/.*killing the leader.*(committed \([0-9]*\))$/\1/p' "$TMP/kill_coordinator.log")
worker_at=$(sed -n 's/.*killing worker 0.*(committed \([0-9]*\))$/\1/p' "$TMP/kill_coordinator.log")
[[ -n $leader_at && -n $worker_at && $worker_at -ge $leader_at && $((worker_at - leader_at)) -lt 20 ]] || \
    { cat "$TMP/kill_coordinator.log"; fail "kill_coordinator: worker 0 killed at committed epoch ${worker_at:-?}, the leader at ${leader_at:-?}: not epoch 30 since the view's creation"; }

# 4. The etcd leader killed after epoch 20.
run_case kill_etcd_leader '"etcd_leaders_killed":1,|"coordinator_failovers":0,' \
    --workers=3 --kill_etcd_leader_after_epochs=20

# 5. The last worker paused past its lease (3 s) for 8 s: fenced.
run_case pause_worker '"workers_paused":1,|"workers_fenced":1,|"coordinator_failovers":0,' \
    --workers=3 --pause_worker_after_epochs=20 --pause_seconds=8
grep -q "worker 2: FENCED .*fenced" "$TMP/pause_worker.log" || \
    { cat "$TMP/pause_worker.log"; fail "pause_worker: the resumed worker was not refused"; }

# 6. The last worker paused for 6 s, within its lease (60 s): the barrier
#    timeout (2 s) fails the attempt while it hangs; the leader fences it as
#    the worker that held the barrier (or sent no sync reply) while the
#    others did not, and the job recovers without it (resumed, the worker
#    learns it was fenced and exits).
run_case hang_worker '"workers_paused":1,|"workers_fenced":1,|"coordinator_failovers":0,' \
    --workers=3 --pause_worker_after_epochs=20 --pause_seconds=6 --lease_seconds=60 \
    --barrier_timeout_seconds=2
expect_timeout_fence hang_worker "not collected within the barrier timeout 2s\|sent no sync reply within 2s" \
    "coordinator 0: FENCED worker-2 "

# 7. The last worker's actors hang after epoch 20 while its process answers
#    (its gRPC threads, its lease: the default 3 s, kept): only the barrier
#    it holds up shows it. The barrier timeout (2 s) fails the attempt, the
#    leader fences that worker (its actors did not emit the barrier) and the
#    recovery places no actor on it.
run_case hang_actors '"workers_hung":1,|"workers_fenced":1,|"workers_paused":0,|"coordinator_failovers":0,' \
    --workers=3 --hang_worker_actors_after_epochs=20 --barrier_timeout_seconds=2
grep -q "hanging the actors of worker 2" "$TMP/hang_actors.log" || fail "hang_actors: no hang line"
expect_timeout_fence hang_actors "not collected within the barrier timeout 2s" \
    "coordinator 0: FENCED worker-2 .*did not emit barrier"
grep "coordinator 0: ATTEMPT [2-9] " "$TMP/hang_actors.log" | grep -q "worker-2" && \
    { cat "$TMP/hang_actors.log"; fail "hang_actors: an actor was placed on the hung worker again"; }

# 8. A worker added to a job on 2 after epoch 15.
run_case add_worker '"workers":3,|"workers_added":1,|"recoveries":0,|"reschedules":1' \
    --workers=2 --add_worker_after_epochs=15
grep -q "coordinator 0: RESCHEDULE worker 'worker-2' joined" "$TMP/add_worker.log" || \
    { cat "$TMP/add_worker.log"; fail "add_worker: no reschedule for the added worker"; }
grep -q "coordinator 0: ATTEMPT 2 workers 3 assignment [0-9]* actors .*:worker-2" "$TMP/add_worker.log" || \
    { cat "$TMP/add_worker.log"; fail "add_worker: the job was not placed again over 3 workers"; }
grep -q "RECOVERY" "$TMP/add_worker.log" && \
    { cat "$TMP/add_worker.log"; fail "add_worker: a recovery happened"; }

# 9. Ctrl-C while the job runs.
"$BIN" --workers=3 --scenario="$SCENARIO" --data_dir="$TMP/interrupt" \
    > "$TMP/interrupt.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  grep -q "^coordinator 0: ATTEMPT 1" "$TMP/interrupt.log" && break
  sleep 0.1
done
grep -q "^coordinator 0: ATTEMPT 1" "$TMP/interrupt.log" || { cat "$TMP/interrupt.log"; fail "interrupt run never started its job"; }
kill -INT "$pid"
wait "$pid"
code=$?
[[ $code -eq 130 ]] || { cat "$TMP/interrupt.log"; fail "Ctrl-C: exit $code, not 130"; }
tail -1 "$TMP/interrupt.log" | grep -q '^{"consistent":false,.*"error":"CANCELLED: interrupted (Ctrl-C)"}$' ||
    { cat "$TMP/interrupt.log"; fail "Ctrl-C: no JSON last line"; }
grep -q "the run cannot be resumed: its versions were in the local etcd cluster" "$TMP/interrupt.log" ||
    { cat "$TMP/interrupt.log"; fail "Ctrl-C: does not say whether it resumes"; }
expect_nothing_left "$TMP/interrupt" "after Ctrl-C"
echo "interrupt: exit 130, nothing left"

# 10. Ctrl-C with an etcd of the user's own and a kept --data_dir: the
#     command says to rerun it, and the rerun resumes to a consistent view.
#     The resuming leader fences the first run's workers (their leases are
#     gone); they are not this run's and are not counted.
# A member on random ports: another port pair if those are taken.
etcd_pid=""
trap '[[ -n $etcd_pid ]] && kill -9 $etcd_pid 2>/dev/null' EXIT
for _ in 1 2 3 4 5; do
  etcd_port=$((20000 + RANDOM % 20000))
  rm -rf "$TMP/resume-etcd"
  etcd --name resume --data-dir "$TMP/resume-etcd" \
      --listen-client-urls "http://127.0.0.1:$etcd_port" \
      --advertise-client-urls "http://127.0.0.1:$etcd_port" \
      --listen-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
      --initial-advertise-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
      --initial-cluster "resume=http://127.0.0.1:$((etcd_port + 1))" \
      > "$TMP/resume-etcd.log" 2>&1 &
  etcd_pid=$!
  for _ in $(seq 50); do
    etcdctl --endpoints="127.0.0.1:$etcd_port" endpoint health > /dev/null 2>&1 && break 2
    kill -0 "$etcd_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$etcd_pid" 2>/dev/null; wait "$etcd_pid" 2>/dev/null; etcd_pid=""
done
[[ -n $etcd_pid ]] || { cat "$TMP/resume-etcd.log"; fail "resume: etcd did not start"; }
resume_flags=(--workers=2 --scenario="$SCENARIO" --etcd_endpoints="127.0.0.1:$etcd_port"
              --data_dir="$TMP/resume")
"$BIN" "${resume_flags[@]}" > "$TMP/resume1.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  grep -q "^coordinator 0: ATTEMPT 1" "$TMP/resume1.log" && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
code=$?
[[ $code -eq 130 ]] || { cat "$TMP/resume1.log"; fail "resume: Ctrl-C exit $code, not 130"; }
grep -q "rerun the same command (the same --etcd_endpoints, --etcd_prefix and --data_dir) to resume" "$TMP/resume1.log" ||
    { cat "$TMP/resume1.log"; fail "resume: Ctrl-C does not say the job resumes"; }
"$BIN" "${resume_flags[@]}" --dump_dir="$TMP/resume-dump" > "$TMP/resume2.log" 2>&1
code=$?
last=$(tail -1 "$TMP/resume2.log")
[[ $code -eq 0 ]] || { cat "$TMP/resume2.log"; fail "resume: exit $code"; }
grep -q '"consistent":true' <<<"$last" || { cat "$TMP/resume2.log"; fail "resume: $last"; }
grep -q '"workers_fenced":0,' <<<"$last" || { cat "$TMP/resume2.log"; fail "resume: the first run's workers counted as fenced: $last"; }
for file in upstream.tsv view.tsv; do
  cmp -s "$TMP/plain-dump/$file" "$TMP/resume-dump/$file" || fail "resume: $file differs from the never-interrupted run's"
done
echo "resume: $last"

# 11. A second job (another table) on the same etcd: under the first job's
#     prefix it is refused, saying the versions there may be another job's;
#     under a prefix of its own it runs to a consistent view.
sed -e 's/^name: "cluster"/name: "second"/' -e 's/name: "readings"/name: "readings2"/' \
    -e 's/initial_rows: 12000/initial_rows: 2000/' -e 's/max_ops: 2000/max_ops: 300/' \
    -e '/^actions/d' "$SCENARIO" > "$TMP/second.textproto"
second_flags=(--workers=2 --scenario="$TMP/second.textproto" --etcd_endpoints="127.0.0.1:$etcd_port" --json)
"$BIN" "${second_flags[@]}" --data_dir="$TMP/second-a" > "$TMP/second-a.log" 2>&1
code=$?
last=$(tail -1 "$TMP/second-a.log")
[[ $code -eq 2 ]] || { cat "$TMP/second-a.log"; fail "second job, first job's prefix: exit $code, not 2"; }
grep -q "FAILED_PRECONDITION: .*the versions under that prefix are another job's" <<<"$last" ||
    { cat "$TMP/second-a.log"; fail "second job, first job's prefix: $last"; }
"$BIN" "${second_flags[@]}" --data_dir="$TMP/second-b" --etcd_prefix=backfill_cluster/second/ \
    > "$TMP/second-b.log" 2>&1
code=$?
last=$(tail -1 "$TMP/second-b.log")
[[ $code -eq 0 ]] || { cat "$TMP/second-b.log"; fail "second job, own prefix: exit $code"; }
grep -q '"consistent":true' <<<"$last" || { cat "$TMP/second-b.log"; fail "second job, own prefix: $last"; }
kill -9 "$etcd_pid" 2>/dev/null; wait "$etcd_pid" 2>/dev/null
for dir in resume second-a second-b; do
  expect_nothing_left "$TMP/$dir" "after the run in $dir"
done
echo "second job: $last"

# 12. Worker 0 killed after the backfill finished (a small unlimited one, and
#     20 checkpoints after it): the kill is said to come after the backfill,
#     and counted so (case 2's, mid-backfill, is not); the job, still running
#     (its actors forward the upstream's changes), recovers once.
sed -e 's/initial_rows: 12000/initial_rows: 2000/' -e 's/max_ops: 2000/max_ops: 300/' \
    -e '/rate_limit:/d' -e '/^actions/d' \
    -e 's/max_seconds: 120/max_seconds: 120\n  extra_checkpoints_after_finish: 20/' \
    "$SCENARIO" > "$TMP/after.textproto"
"$BIN" --scenario="$TMP/after.textproto" --data_dir="$TMP/after" --workers=3 \
    --kill_worker_after_epochs=25 > "$TMP/after.log" 2>&1
code=$?
last=$(tail -1 "$TMP/after.log")
[[ $code -eq 0 ]] || { cat "$TMP/after.log"; fail "kill after the backfill: exit $code"; }
for pattern in '"consistent":true' '"workers_killed":1,' '"recoveries":1,' '"faults_after_backfill":1'; do
  grep -qF -- "$pattern" <<<"$last" || { cat "$TMP/after.log"; fail "kill after the backfill: no $pattern in $last"; }
done
grep -q "the backfill had finished at epoch [0-9]*, before this fault" "$TMP/after.log" ||
    { cat "$TMP/after.log"; fail "kill after the backfill: the kill is not said to come after it"; }
grep -q "; workers 3, killed 1; 1 fault(s) after the backfill finished$" "$TMP/after.log" ||
    { cat "$TMP/after.log"; fail "kill after the backfill: the summary does not say so"; }
expect_nothing_left "$TMP/after" "after the kill-after-backfill run"
echo "kill after the backfill: $last"
echo PASS
