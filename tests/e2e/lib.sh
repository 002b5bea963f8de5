# Shared by the black-box tests of //tools:backfill (sourced, not run):
#
#   source tests/e2e/lib.sh
#   use_seed BACKFILL_KILL_SEED          # optional: seeded $RANDOM
#   run_ok "$TMP/ref.log" --scenario=... --dump_dir="$TMP/ref"
#   expect_consistent ref "$TMP/ref.log" "$TMP/ref"   # and "recoveries":0
#
# Paths are relative to the runfiles root, where sh_test starts.

BIN="tools/backfill"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
SEED=""

# use_seed VAR: seeds $RANDOM from the environment variable VAR (default:
# the clock) and prints how to rerun with the same seed.
use_seed() {
  local var=$1
  SEED="${!var:-$(( $(date +%s) % 100000 ))}"
  RANDOM=$SEED
  echo "seed $SEED (rerun with --test_env=$var=$SEED)"
}

# fail MESSAGE...: ends the test, naming the seed if there is one.
fail() {
  if [[ -n $SEED ]]; then echo "FAIL (seed $SEED): $*"; else echo "FAIL: $*"; fi
  exit 1
}

# random_below N: uniform in [0, N) for N up to 2^30.
random_below() { echo $(( (RANDOM * 32768 + RANDOM) % $1 )); }

# run_ok LOG ARGS...: runs the command with ARGS, stdout and stderr to LOG;
# the test fails, showing the log's tail, unless it exits 0 and, when ARGS
# inject no storage faults, reports "recoveries":0.
run_ok() {
  local log=$1 code
  shift
  "$BIN" "$@" > "$log" 2>&1
  code=$?
  [[ $code -eq 0 ]] || { tail -20 "$log"; fail "backfill $*: exit $code"; }
  if [[ " $* " != *" --inject_storage_faults="* ]]; then
    [[ $(recoveries_of "$log") == 0 ]] ||
        { tail -20 "$log"; fail "backfill $*: recovered although no fault was injected"; }
  fi
}

# expect_consistent NAME LOG DUMP_DIR [injected]: the run's last line (its
# JSON) says consistent, and the upstream and view dumps it wrote are equal.
# Unless "injected" says the run was given faults (--inject_storage_faults),
# it must also report "recoveries":0: a run that recovered from its own bug
# (a failed write of the view, say) is not a pass.
expect_consistent() {
  local name=$1 last
  last=$(tail -1 "$2")
  grep -q '"consistent":true' <<<"$last" || fail "$name: final verdict not consistent: $last"
  cmp "$3/upstream.tsv" "$3/view.tsv" || fail "$name: view dump != upstream dump"
  if [[ ${4:-} != injected ]]; then
    grep -q '"recoveries":0[,}]' <<<"$last" ||
        fail "$name: recovered although no fault was injected: $last"
  fi
}

# recoveries_of LOG: the "recoveries" count of the run's JSON (last line).
recoveries_of() {
  tail -1 "$1" | grep -o '"recoveries":[0-9]*' | cut -d: -f2
}

# expect_resumed NAME LOG: the run resumed a job (did not start over).
expect_resumed() {
  tail -1 "$2" | grep -q '"resumed":true' || fail "$1: the run did not resume: $(tail -1 "$2")"
}
