#!/usr/bin/env bash
# Black-box test of `backfill inspect` (issue 16 point 6; tools/README.md):
#  (a) a job killed with kill -9 mid-backfill: `inspect --json` reports a
#      committed epoch > 0, some vnodes not finished, the saved rate limit
#      and parallelism, and the data directory's bytes are unchanged;
#      --vnodes lists every vnode; the text report says the same;
#  (b) the job resumes from that directory to a consistent finish, and
#      inspect then reports every vnode finished and the view's rows;
#  (c) a missing directory is NOT_FOUND and a corrupt one DATA_LOSS naming
#      the file, both exit 2 with the error as the JSON line;
#  (d) run-only flags are refused with inspect, --vnodes without it;
#  (e) a job paused and throttled online (scenario actions), killed with
#      kill -9: inspect shows the mutations in force from the persisted job
#      state (paused, the new rate limit, parallelism), text and JSON.
set -uo pipefail
source tests/e2e/lib.sh
RUN_TIMEOUT=150

# field JSON NAME: the value of a number, boolean or null field.
field() { grep -o "\"$2\":[a-z0-9.]*" <<<"$1" | head -1 | cut -d: -f2; }

# digest DIR: every file's name and checksum.
digest() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# wait_for_epoch LOG PID N: until the run's progress line shows epoch >= N.
wait_for_epoch() {
  local epoch
  for _ in $(seq 1 1200); do
    epoch=$(tr '\r' '\n' < "$1" 2>/dev/null | grep -o 'epoch [0-9]*' | tail -1 | cut -d' ' -f2)
    if [[ ${epoch:-0} -ge $3 ]] || ! kill -0 "$2" 2>/dev/null; then return; fi
    sleep 0.05
  done
}

cat > "$TMP/s.textproto" <<'X'
name: "inspected"
table {
  columns { name: "id" type: INT64 }
  columns { name: "tag" type: VARCHAR nullable: true }
  primary_key { column: 0 }
  vnode_count: 64
}
initial_rows: 20000
seed: 5
workload { ops_per_second: 500 insert_weight: 1 update_weight: 1 delete_weight: 1 }
backfill { parallelism: 3 chunk_size: 64 rate_limit: 1000 }
runtime { barrier_interval_ms: 100 checkpoint_frequency: 1 max_seconds: 90 }
X
DATA="$TMP/job.data"

# --- (a) kill -9 mid-backfill, inspect ----------------------------------------
"$BIN" --scenario="$TMP/s.textproto" --data_dir="$DATA" > "$TMP/a.log" 2>&1 &
pid=$!
wait_for_epoch "$TMP/a.log" $pid 15
kill -9 $pid 2>/dev/null || fail "(a) the run ended before it was killed: $(tail -3 "$TMP/a.log")"
wait $pid 2>/dev/null
before=$(digest "$DATA")
"$BIN" inspect --data_dir="$DATA" --json > "$TMP/a.json" 2> "$TMP/a.err"
code=$?
[[ $code -eq 0 ]] || fail "(a) inspect: exit $code: $(cat "$TMP/a.err")"
json=$(tail -1 "$TMP/a.json")
[[ $(wc -l < "$TMP/a.json") -eq 1 ]] || fail "(a) --json printed more than the JSON line"
epoch=$(field "$json" committed_epoch)
finished=$(field "$json" vnodes_finished)
in_progress=$(field "$json" vnodes_in_progress)
not_started=$(field "$json" vnodes_not_started)
[[ ${epoch:-0} -gt 0 ]] || fail "(a) committed_epoch not > 0: $json"
[[ $(field "$json" vnode_count) == 64 ]] || fail "(a) vnode_count: $json"
[[ $((finished + in_progress + not_started)) -eq 64 ]] || fail "(a) vnode counts do not add up: $json"
[[ $((in_progress + not_started)) -gt 0 ]] || fail "(a) every vnode finished before the kill: $json"
[[ $(field "$json" job_found) == true ]] || fail "(a) no job found: $json"
[[ $(field "$json" rate_limit) == 1000 ]] || fail "(a) rate_limit: $json"
[[ $(field "$json" parallelism) == 3 ]] || fail "(a) parallelism: $json"
[[ $(field "$json" paused) == false ]] || fail "(a) paused: $json"
[[ $(field "$json" epochs_since_creation) -gt 0 ]] || fail "(a) epochs_since_creation: $json"
[[ $(field "$json" upstream_rows) -gt 0 ]] || fail "(a) upstream_rows: $json"
awk -v p="$(field "$json" snapshot_percent)" 'BEGIN { exit !(p > 0 && p < 100) }' ||
    fail "(a) snapshot_percent not in (0, 100): $json"
[[ $(digest "$DATA") == "$before" ]] || fail "(a) inspect changed the data directory"
echo "ok: (a) after kill -9: epoch $epoch, $finished finished, $in_progress in progress, $not_started not started; directory unchanged"

"$BIN" inspect --data_dir="$DATA" --vnodes --json > "$TMP/a2.json" 2>&1 ||
    fail "(a) inspect --vnodes: $(tail -2 "$TMP/a2.json")"
[[ $(tail -1 "$TMP/a2.json" | grep -o '{"vnode":' | wc -l) -eq 64 ]] ||
    fail "(a) --vnodes did not list 64 vnodes: $(tail -1 "$TMP/a2.json")"
[[ $(tail -1 "$TMP/a2.json" | grep -o '"state":"finished"' | wc -l) -eq $finished ]] ||
    fail "(a) --vnodes disagrees with the summary"
"$BIN" inspect --data_dir="$DATA" > "$TMP/a3.txt" 2>&1 || fail "(a) inspect (text): $(cat "$TMP/a3.txt")"
grep -q "^committed epoch $epoch\$" "$TMP/a3.txt" || fail "(a) text: no committed epoch: $(cat "$TMP/a3.txt")"
grep -q "rate limit 1000 rows/s, parallelism 3" "$TMP/a3.txt" || fail "(a) text: state in force: $(cat "$TMP/a3.txt")"
grep -q "$finished finished, $in_progress in progress, $not_started not started" "$TMP/a3.txt" ||
    fail "(a) text: vnode summary: $(cat "$TMP/a3.txt")"
[[ $(digest "$DATA") == "$before" ]] || fail "(a) inspect --vnodes changed the data directory"
echo "ok: (a) --vnodes lists 64 vnodes; the text report agrees"

# --- (b) resume to a consistent finish, inspect again --------------------------
timeout $RUN_TIMEOUT "$BIN" --scenario="$TMP/s.textproto" --data_dir="$DATA" --rate_limit=0 \
    --dump_dir="$TMP/b.dump" > "$TMP/b.log" 2>&1
code=$?
[[ $code -eq 0 ]] || { tail -5 "$TMP/b.log"; fail "(b) resume: exit $code"; }
expect_consistent "(b)" "$TMP/b.log" "$TMP/b.dump"
expect_resumed "(b)" "$TMP/b.log"
result=$(tail -1 "$TMP/b.log")
"$BIN" inspect --data_dir="$DATA" --json > "$TMP/b.json" 2>&1 || fail "(b) inspect: $(tail -2 "$TMP/b.json")"
json=$(tail -1 "$TMP/b.json")
[[ $(field "$json" vnodes_finished) == 64 ]] || fail "(b) not every vnode finished: $json"
[[ $(field "$json" vnodes_in_progress) == 0 && $(field "$json" vnodes_not_started) == 0 ]] ||
    fail "(b) unfinished vnodes: $json"
[[ $(field "$json" committed_epoch) -gt $epoch ]] || fail "(b) committed epoch did not advance: $json"
[[ $(field "$json" upstream_rows) == $(field "$result" upstream_rows) ]] ||
    fail "(b) upstream_rows $json vs the run's $result"
[[ $(field "$json" view_rows) == $(field "$result" view_rows) ]] ||
    fail "(b) view_rows $json vs the run's $result"
[[ $(field "$json" rate_limit) == null ]] || fail "(b) --rate_limit=0 not saved: $json"
[[ $(field "$json" snapshot_percent) == 100 ]] || fail "(b) snapshot_percent: $json"
echo "ok: (b) resumed to a consistent finish; inspect: 64 finished, rows as the run's"

# --- (c) missing and corrupt directories ---------------------------------------
"$BIN" inspect --data_dir="$TMP/absent" --json > "$TMP/c1.out" 2> "$TMP/c1.err"
code=$?
[[ $code -eq 2 ]] || fail "(c) missing directory: exit $code"
grep -q "NOT_FOUND: no data directory at $TMP/absent" "$TMP/c1.err" || fail "(c) missing: $(cat "$TMP/c1.err")"
tail -1 "$TMP/c1.out" | grep -q '"error":"NOT_FOUND' || fail "(c) missing: JSON $(tail -1 "$TMP/c1.out")"
[[ ! -e $TMP/absent ]] || fail "(c) inspect created the missing directory"
cp -r "$DATA" "$TMP/corrupt"
printf '\x5a' | dd of="$TMP/corrupt/ACKNOWLEDGED_EPOCH" bs=1 seek=10 conv=notrunc status=none
"$BIN" inspect --data_dir="$TMP/corrupt" > "$TMP/c2.out" 2> "$TMP/c2.err"
code=$?
[[ $code -eq 2 ]] || fail "(c) corrupt directory: exit $code"
grep -q "DATA_LOSS: .*ACKNOWLEDGED_EPOCH" "$TMP/c2.err" || fail "(c) corrupt: $(cat "$TMP/c2.err")"
echo "ok: (c) missing: NOT_FOUND, exit 2; corrupt: DATA_LOSS naming the file, exit 2"

# --- (d) flags that do not belong ---------------------------------------------
"$BIN" inspect --data_dir="$DATA" --parallelism=2 --json > "$TMP/d1.out" 2> "$TMP/d1.err"
code=$?
[[ $code -eq 2 ]] && grep -q "parallelism does not apply to \`backfill inspect\`" "$TMP/d1.err" ||
    fail "(d) inspect --parallelism: exit $code: $(cat "$TMP/d1.err")"
[[ $(cat "$TMP/d1.out") == '{"error":"INVALID_ARGUMENT: --parallelism does not apply'* ]] ||
    fail "(d) inspect --parallelism --json: $(cat "$TMP/d1.out")"
"$BIN" inspect > /dev/null 2> "$TMP/d3.err"
code=$?
[[ $code -eq 2 ]] && grep -q "backfill inspect needs --data_dir" "$TMP/d3.err" ||
    fail "(d) inspect without --data_dir: exit $code: $(cat "$TMP/d3.err")"
"$BIN" --vnodes --data_dir="$TMP/never" > /dev/null 2> "$TMP/d2.err"
code=$?
[[ $code -eq 2 ]] && grep -q "vnodes applies to \`backfill inspect\` only" "$TMP/d2.err" ||
    fail "(d) --vnodes without inspect: exit $code: $(cat "$TMP/d2.err")"
[[ ! -e $TMP/never ]] || fail "(d) a refused command created its data directory"
echo "ok: (d) run-only flags refused with inspect; --vnodes refused without it"

# --- (e) mutations in force after kill -9 ---------------------------------------
sed -e 's/rate_limit: 1000 }/rate_limit: 1000 }\nactions { at_epoch: 3 set_rate_limit: 700 }\nactions { at_epoch: 4 pause: true }/' \
    "$TMP/s.textproto" > "$TMP/e.textproto"
grep -q "pause: true" "$TMP/e.textproto" || fail "(e) scenario: $(cat "$TMP/e.textproto")"
DATA_E="$TMP/paused.data"
"$BIN" --scenario="$TMP/e.textproto" --data_dir="$DATA_E" --parallelism=2 > "$TMP/e.log" 2>&1 &
pid=$!
wait_for_epoch "$TMP/e.log" $pid 10   # paused since epoch 4, committed since
kill -9 $pid 2>/dev/null || fail "(e) the run ended before it was killed: $(tail -3 "$TMP/e.log")"
wait $pid 2>/dev/null
"$BIN" inspect --data_dir="$DATA_E" --json > "$TMP/e.json" 2> "$TMP/e.err" || fail "(e) inspect: $(cat "$TMP/e.err")"
json=$(tail -1 "$TMP/e.json")
[[ $(field "$json" paused) == true ]] || fail "(e) paused: $json"
[[ $(field "$json" rate_limit) == 700 ]] || fail "(e) rate_limit: $json"
[[ $(field "$json" parallelism) == 2 ]] || fail "(e) parallelism (the flag's, persisted): $json"
[[ $(field "$json" epochs_since_creation) -ge 4 ]] || fail "(e) epochs_since_creation: $json"
"$BIN" inspect --data_dir="$DATA_E" > "$TMP/e.txt" 2>&1 || fail "(e) inspect (text): $(cat "$TMP/e.txt")"
grep -q "^state in force  paused, rate limit 700 rows/s, parallelism 2, upstream live" "$TMP/e.txt" ||
    fail "(e) text: state in force: $(cat "$TMP/e.txt")"
echo "ok: (e) after kill -9: paused, rate limit 700, parallelism 2 in force (text and JSON)"
echo PASS
