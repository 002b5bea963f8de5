#!/usr/bin/env bash
# //tools:backfill_bench's command line (it does not run the benchmark):
# --help exits 0 listing each flag with its default and meaning; a bad value
# is one stderr line naming the flag and the accepted values, exit 2, and
# with --json the JSON error is the last line of standard output.
set -uo pipefail
BIN=tools/backfill_bench
fail() { echo "FAIL: $*"; exit 1; }
out=$("$BIN" --help); code=$?
[[ $code -eq 0 ]] || fail "--help exit $code"
for flag in rows load growth_seconds speed_rounds json plot dir only_snapshot; do
  grep -q "^  --$flag (" <<<"$out" || fail "--help does not list --$flag: $out"
done
grep -q "^  --rows (uint64; default: 2000000)" <<<"$out" || fail "no default for --rows: $out"
"$BIN" --helpfull >/dev/null || fail "--helpfull exit $?"
for args in "--rows=10" "--rows=abc" "--load=-1" "--load=fast" "--growth_seconds=-1" "--speed_rounds=0" "--speed_rounds=51" "--no_such_flag" "--rows=10 --json" "--json --load=x"; do
  # shellcheck disable=SC2086
  "$BIN" $args >"$TEST_TMPDIR/out" 2>"$TEST_TMPDIR/err"; code=$?
  [[ $code -eq 2 ]] || fail "$args: exit $code"
  [[ $(wc -l <"$TEST_TMPDIR/err") -eq 1 ]] || fail "$args: stderr: $(cat "$TEST_TMPDIR/err")"
  flag=${args%%=*}; flag=${flag#--json }
  grep -q -- "${flag}" "$TEST_TMPDIR/err" || fail "$args: the error does not name $flag"
  if [[ $args == *--json* ]]; then
    [[ $(tail -1 "$TEST_TMPDIR/out") == \{\"error\":\"INVALID_ARGUMENT:* ]] ||
        fail "$args: last stdout line: $(cat "$TEST_TMPDIR/out")"
  else
    [[ ! -s "$TEST_TMPDIR/out" ]] || fail "$args: stdout: $(cat "$TEST_TMPDIR/out")"
  fi
done
grep -q "expected a number >= 0" "$TEST_TMPDIR/err" || fail "accepted values not named: $(cat "$TEST_TMPDIR/err")"
echo "ok"
