#!/usr/bin/env bash
# Black-box tests of //tools:backfill's command line (issue 16): --help and
# --helpfull exit 0 and list the flags; a bad value is one line on standard
# error naming the flag and the accepted values, exit 2, no summary table,
# the JSON line last on standard output; a scenario too large for the data
# directory's free space is refused up front with the estimate unless
# --force; the first Ctrl-C stops at the next checkpoint and says how to
# resume, a second exits at once, and both directories resume to a
# consistent view; a --data_dir or --dump_dir whose parents are missing is
# made, one that cannot be made is exit 2 naming it; --metrics_port=0 --json
# says the port on standard error, and a port in use is exit 2 saying so
# before anything is made. Every job this starts
# is waited for (or killed on exit).
set -uo pipefail
BIN=tools/backfill
TMP=${TEST_TMPDIR:-$(mktemp -d)}
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
wait_for() {
  local seconds=$1; shift
  for _ in $(seq 1 $(( seconds * 10 ))); do "$@" && return 0; sleep 0.1; done
  return 1
}
# wait_exit PID SECONDS: the exit code, or 255 after SECONDS (then killed).
wait_exit() {
  local pid=$1 seconds=$2
  for _ in $(seq 1 $(( seconds * 10 ))); do
    if ! kill -0 "$pid" 2>/dev/null; then wait "$pid"; return $?; fi
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 255
}

# --- --help, --helpfull -------------------------------------------------------
out=$("$BIN" --help 2>"$TMP/err"); code=$?
[[ $code -eq 0 ]] || fail "--help exit $code"
[[ ! -s "$TMP/err" ]] || fail "--help wrote to stderr: $(cat "$TMP/err")"
for flag in scenario data_dir parallelism kind rate_limit target_barrier_latency_ms dump_dir metrics_port json force; do
  grep -q "^  --$flag (" <<<"$out" || fail "--help does not list --$flag: $out"
done
grep -q 'default: unset' <<<"$out" || fail "--help shows no defaults"
grep -q 'Backfill actors' <<<"$out" || fail "--help shows no meanings"
out=$("$BIN" --helpfull); code=$?
[[ $code -eq 0 ]] || fail "--helpfull exit $code"
grep -q "Flags from tools/backfill_main.cc" <<<"$out" || fail "--helpfull: $out"

# --- bad values: one stderr line, exit 2, no table, JSON last -----------------
check_bad() {  # check_bad EXPECTED_TEXT ARGS...
  local expected=$1; shift
  "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"; local code=$?
  [[ $code -eq 2 ]] || fail "$*: exit $code"
  [[ $(wc -l <"$TMP/err") -eq 1 ]] || fail "$*: stderr is not one line: $(cat "$TMP/err")"
  grep -qF -- "$expected" "$TMP/err" || fail "$*: stderr lacks '$expected': $(cat "$TMP/err")"
  ! grep -q "Backfill summary" "$TMP/out" || fail "$*: a summary table was printed"
  [[ $(wc -l <"$TMP/out") -eq 1 ]] || fail "$*: stdout is not one line: $(cat "$TMP/out")"
  grep -q '^{.*"error":"INVALID_ARGUMENT: ' "$TMP/out" || fail "$*: no JSON error: $(cat "$TMP/out")"
}
check_bad "--parallelism=abc: expected an integer in [1, 32768]" --parallelism=abc
check_bad "--parallelism=abc: expected an integer in [1, 32768]" --json --parallelism=abc
check_bad "--parallelism=0: expected an integer in [1, 32768]" --parallelism=0 --json
check_bad "--kind=hash: expected arrangement, no_shuffle or snapshot" --kind=hash
check_bad "--rate_limit=-5: expected an integer in [0, 18446744073709551615]" --rate_limit=-5
check_bad "--rate_limit=fast: expected an integer in [0, 18446744073709551615] (rows/s, 0 = no limit) or adaptive" --rate_limit=fast
check_bad "--target_barrier_latency_ms applies only with --rate_limit=adaptive" --target_barrier_latency_ms=50
check_bad "--target_barrier_latency_ms=0: expected an integer in [1, 4294967295]" --rate_limit=adaptive --target_barrier_latency_ms=0
check_bad "--rate_limit=adaptive needs --target_barrier_latency_ms=T" --rate_limit=adaptive --json
check_bad "--json=maybe: expected true or false" --json=maybe
check_bad "--metrics_port=70000: expected an integer in [0, 65535]" --metrics_port=70000
check_bad "unexpected argument \"extra\" after inspect (it takes only flags" inspect --data_dir="$TMP" extra
check_bad "unexpected argument \"extra\" (flags are --name=value" extra
check_bad "unknown flag --no_such_flag" --no_such_flag=1 --json
check_bad 'unexpected argument "run"' run

# --- a scenario too large for the disk: refused up front ------------------------
sed 's/^initial_rows: .*/initial_rows: 1000000000000/; /key_space/d' \
    tools/scenarios/default.textproto > "$TMP/huge.textproto"
grep -q "^initial_rows: 1000000000000" "$TMP/huge.textproto" || fail "huge scenario not made"
"$BIN" --scenario="$TMP/huge.textproto" --data_dir="$TMP/huge" --json >"$TMP/out" 2>"$TMP/err"; code=$?
[[ $code -eq 2 ]] || fail "huge scenario: exit $code"
grep -q "RESOURCE_EXHAUSTED: the scenario's 1000000000000 initial rows need about .* TB in $TMP/huge" "$TMP/err" ||
    fail "huge scenario message: $(cat "$TMP/err")"
grep -q -- "--force" "$TMP/err" || fail "the refusal does not mention --force"
[[ ! -e "$TMP/huge" ]] || fail "the refused run created its data directory"

# --force runs it anyway (the load starts); two Ctrl-Cs exit at once.
"$BIN" --scenario="$TMP/huge.textproto" --data_dir="$TMP/huge" --force >"$TMP/out" 2>"$TMP/err" &
pid=$!; PIDS+=("$pid")
wait_for 30 grep -q "data directory $TMP/huge" "$TMP/out" || fail "--force did not start: $(cat "$TMP/err")"
kill -INT "$pid"; sleep 0.2; kill -INT "$pid"
wait_exit "$pid" 10; code=$?
[[ $code -eq 130 ]] || fail "two Ctrl-Cs during the load: exit $code"
grep -q "stopping at the next checkpoint" "$TMP/err" || fail "no first-Ctrl-C message: $(cat "$TMP/err")"
grep -q "exiting now; resume with \`backfill --data_dir=$TMP/huge --scenario=$TMP/huge.textproto\`" "$TMP/err" ||
    fail "no second-Ctrl-C message: $(cat "$TMP/err")"
[[ -d "$TMP/huge" ]] || fail "--force did not use the data directory"
# A rerun does the load cut short again, and says so: not "resuming".
"$BIN" --scenario="$TMP/huge.textproto" --data_dir="$TMP/huge" --force >"$TMP/out" 2>"$TMP/err" &
pid=$!; PIDS+=("$pid")
wait_for 30 grep -Eq '^  (starting|bulk load|resuming from the last checkpoint) \| ' "$TMP/out" ||
    fail "the rerun shows no phase: $(cat "$TMP/out" "$TMP/err")"
kill -INT "$pid"; sleep 0.2; kill -INT "$pid"
wait_exit "$pid" 10
grep -Eq '^  (starting|bulk load) \| ' "$TMP/out" || fail "the rerun's phase: $(head -3 "$TMP/out")"
! grep -q "resuming from the last checkpoint" "$TMP/out" ||
    fail "the rerun of a load cut short says it resumes: $(head -3 "$TMP/out")"
rm -rf "$TMP/huge"

# --- Ctrl-C during a backfill -----------------------------------------------------
# 20k rows at 4000 rows/s under a live upstream: ~5 s of backfill.
cat > "$TMP/small.textproto" <<'X'
name: "interrupt"
table {
  columns { name: "id" type: INT64 }
  columns { name: "v" type: VARCHAR nullable: true }
  primary_key { column: 0 }
  vnode_count: 64
}
initial_rows: 20000
seed: 9
workload { ops_per_second: 2000 insert_weight: 1 update_weight: 2 delete_weight: 1 update_primary_key: true }
backfill { parallelism: 2 chunk_size: 64 rate_limit: 4000 }
runtime { barrier_interval_ms: 50 checkpoint_frequency: 4 }
X
# Twice: exit 130 whether a checkpoint came between the two or not (that a
# second Ctrl-C exits at once is shown above, during the load, where no
# checkpoint can come); either way the directory resumes.
for presses in 1 2; do
  data="$TMP/interrupted$presses"
  scenario="$TMP/small.textproto"
  # The first in adaptive mode: an interrupted run reports it too.
  mode=()
  [[ $presses -eq 1 ]] && mode=(--rate_limit=adaptive --target_barrier_latency_ms=1000)
  "$BIN" --scenario="$scenario" --data_dir="$data" "${mode[@]}" >"$TMP/out" 2>"$TMP/err" &
  pid=$!; PIDS+=("$pid")
  wait_for 30 bash -c "[[ \$(grep -c epoch '$TMP/out') -ge 2 ]]" || fail "no progress: $(cat "$TMP/err")"
  kill -INT "$pid"
  # Apart, as a user presses: a signal pending twice is delivered once.
  [[ $presses -eq 2 ]] && { sleep 0.2; kill -INT "$pid"; }
  wait_exit "$pid" 20; code=$?
  [[ $code -eq 130 ]] || fail "$presses Ctrl-C: exit $code; $(cat "$TMP/err")"
  grep -q "stopping at the next checkpoint (Ctrl-C again to exit at once" "$TMP/err" ||
      fail "$presses Ctrl-C: no stop message: $(cat "$TMP/err")"
  if [[ $presses -eq 1 ]]; then
    grep -q "stopped after checkpoint [0-9]* of this run; resume with \`backfill --data_dir=$data --scenario=$TMP/small.textproto\`" "$TMP/err" ||
        fail "no resume command: $(cat "$TMP/err")"
    last=$(tail -1 "$TMP/out")
    grep -q '"interrupted":true' <<<"$last" || fail "JSON not interrupted: $last"
    grep -q '"recoveries":0[,}]' <<<"$last" || fail "the interrupted run recovered: $last"
    grep -q "\"data_dir\":\"$data\"" <<<"$last" || fail "JSON lacks data_dir: $last"
    # How far it got, its rate included (this run's rows over its seconds),
    # and the adaptive mode in force.
    grep -q '"snapshot_rows":[1-9]' <<<"$last" || fail "no snapshot rows: $last"
    grep -q '"snapshot_rows_per_second":0[,}]' <<<"$last" && fail "no snapshot rate: $last"
    grep -q '"adaptive_target_barrier_latency_ms":1000[,}]' <<<"$last" ||
        fail "the interrupted adaptive run does not say so: $last"
    grep -q '"adaptive_rows_per_second":[1-9]' <<<"$last" || fail "no adaptive rate: $last"
    grep -q "INTERRUPTED" "$TMP/out" || fail "no INTERRUPTED verdict in the table"
    # The live line (tools/live_progress.h): a labelled phase at once, no
    # percentage; then the snapshot's share with the vnodes done.
    sed -n 2p "$TMP/out" | grep -Eq '^  (starting|bulk load|creating the view) \| ' ||
        fail "the first line after the header is not a phase: $(head -3 "$TMP/out")"
    grep -Eq '^ +[0-9.]+% of snapshot \| vnodes [0-9]+/64 done \| ' "$TMP/out" ||
        fail "no snapshot share: $(head -5 "$TMP/out")"
  else
    grep -q "exiting now\|stopped after checkpoint" "$TMP/err" || fail "no exit message: $(cat "$TMP/err")"
  fi
  # The directory resumes: a consistent view.
  "$BIN" --scenario="$scenario" --data_dir="$data" --json >"$TMP/out" 2>"$TMP/err"; code=$?
  [[ $code -eq 0 ]] || fail "resume after $presses Ctrl-C: exit $code: $(cat "$TMP/err")"
  last=$(tail -1 "$TMP/out")
  grep -q '"consistent":true' <<<"$last" || fail "resume after $presses Ctrl-C: $last"
  # No fault was injected: a recovery would be one from the job's own bug.
  grep -q '"recoveries":0[,}]' <<<"$last" ||
      fail "resume after $presses Ctrl-C recovered although no fault was injected: $last"
  [[ $presses -eq 2 ]] || grep -q '"resumed":true' <<<"$last" ||
      fail "resume after $presses Ctrl-C did not resume: $last"
done

# --- missing parent directories are made; one that cannot be is an error -------
cat > "$TMP/tiny.textproto" <<'X'
name: "tiny"
table {
  columns { name: "id" type: INT64 }
  columns { name: "v" type: VARCHAR nullable: true }
  primary_key { column: 0 }
  vnode_count: 16
}
initial_rows: 500
seed: 3
workload { ops_per_second: 500 insert_weight: 1 update_weight: 1 delete_weight: 1 }
backfill { parallelism: 2 chunk_size: 64 }
runtime { barrier_interval_ms: 20 checkpoint_frequency: 2 }
X
rm -rf "$TMP/parents"
"$BIN" --scenario="$TMP/tiny.textproto" --data_dir="$TMP/parents/a/data" \
    --dump_dir="$TMP/parents/b/c/dump" --json >"$TMP/out" 2>"$TMP/err"; code=$?
[[ $code -eq 0 ]] || fail "missing parents: exit $code: $(cat "$TMP/err")"
grep -q '"consistent":true' <<<"$(tail -1 "$TMP/out")" || fail "missing parents: $(tail -1 "$TMP/out")"
[[ -d "$TMP/parents/a/data" ]] || fail "the data directory was not made"
cmp -s "$TMP/parents/b/c/dump/upstream.tsv" "$TMP/parents/b/c/dump/view.tsv" ||
    fail "missing parents: the dumps differ or are missing"
touch "$TMP/a_file"
for flag in data_dir dump_dir; do
  "$BIN" --scenario="$TMP/tiny.textproto" --data_dir="$TMP/tiny_data" \
      "--$flag=$TMP/a_file/sub" --json >"$TMP/out" 2>"$TMP/err"; code=$?
  [[ $code -eq 2 ]] || fail "--$flag under a file: exit $code: $(cat "$TMP/err")"
  [[ $(wc -l <"$TMP/err") -eq 1 ]] || fail "--$flag under a file: stderr is not one line: $(cat "$TMP/err")"
  grep -qF -- "--$flag=$TMP/a_file/sub: cannot create the directory" "$TMP/err" ||
      fail "--$flag under a file: $(cat "$TMP/err")"
  grep -q '"error":"FAILED_PRECONDITION: ' <<<"$(tail -1 "$TMP/out")" ||
      fail "--$flag under a file: no JSON error: $(tail -1 "$TMP/out")"
done

# --- --metrics_port: with --json the port is said on standard error; a port
# in use is exit 2 saying so, before the data directory is made ------------
sed 's/initial_rows: 500/initial_rows: 20000/; s/backfill { parallelism: 2 chunk_size: 64 }/backfill { parallelism: 2 chunk_size: 64 rate_limit: 4000 }/' \
    "$TMP/tiny.textproto" > "$TMP/held.textproto"
"$BIN" --scenario="$TMP/held.textproto" --data_dir="$TMP/held" --metrics_port=0 --json \
    >"$TMP/held.out" 2>"$TMP/held.err" &
pid=$!; PIDS+=("$pid")
wait_for 30 grep -q "^metrics: http://127.0.0.1:[0-9]*/metrics$" "$TMP/held.err" ||
    fail "--metrics_port=0 --json does not say the port: $(cat "$TMP/held.err")"
port=$(sed -n 's|^metrics: http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$TMP/held.err")
"$BIN" --scenario="$TMP/tiny.textproto" --data_dir="$TMP/port_taken" --metrics_port="$port" \
    >"$TMP/out" 2>"$TMP/err"; code=$?
[[ $code -eq 2 ]] || fail "a port in use: exit $code: $(cat "$TMP/err")"
grep -q "127.0.0.1:$port: the port is in use" "$TMP/err" || fail "a port in use: $(cat "$TMP/err")"
[[ ! -e "$TMP/port_taken" ]] || fail "a port in use: the data directory was made"
kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
[[ $(wc -l <"$TMP/held.out") -le 1 ]] || fail "--json printed more than the JSON line: $(cat "$TMP/held.out")"

echo "ok: help, bad values, size refusal, --force, Ctrl-C once and twice, resumed, missing parent directories, the metrics port"
