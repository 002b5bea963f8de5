#!/usr/bin/env bash
# Black-box test of //tools:backfill over a corrupted data directory: bytes
# of a stopped job's table files (SST), write-ahead log, MANIFEST, CURRENT or
# ACKNOWLEDGED_EPOCH are flipped (at seeded random offsets), the length of
# the last log or MANIFEST record is made to run past the end (what RocksDB
# alone takes for a torn write), or CURRENT is removed; starting the
# command again on the directory must exit 2 with a DATA_LOSS error naming
# the damaged file -- never exit 0 ("consistent" over lost data), never 1,
# never a signal. Stopped jobs: one that finished (then ran again, so its
# data is in table files and the log) and one killed during its backfill.
#
# Env: BACKFILL_CORRUPTION_SEED (default: from the clock; printed).
set -uo pipefail
source tests/e2e/lib.sh
use_seed BACKFILL_CORRUPTION_SEED

SCENARIO="$TMP/corrupt.textproto"
cat > "$SCENARIO" <<'X'
name: "corrupt"
table {
  columns { name: "region" type: VARCHAR nullable: true }
  columns { name: "id" type: INT64 }
  columns { name: "amount" type: DECIMAL nullable: true }
  columns { name: "note" type: VARCHAR nullable: true }
  primary_key { column: 0 nulls: NULLS_FIRST }
  primary_key { column: 1 descending: true }
  distribution_key: 1
  vnode_count: 32
}
initial_rows: 10000
seed: 77
workload { ops_per_second: 2000 insert_weight: 1 update_weight: 2 delete_weight: 1
           null_fraction: 0.1 }
backfill { parallelism: 2 rate_limit: 4000 }
runtime { barrier_interval_ms: 50 checkpoint_frequency: 2 max_seconds: 300 }
X

# flip FILE OFFSET LENGTH: XORs LENGTH bytes at OFFSET with 0xa5 (so every
# one changes).
flip() {
  local file=$1 offset=$2 length=$3 i byte
  local bytes=($(od -An -tu1 -j "$offset" -N "$length" -v "$file"))
  for i in "${!bytes[@]}"; do
    byte=$(( bytes[i] ^ 0xa5 ))
    printf "\\$(printf '%03o' $byte)" |
        dd of="$file" bs=1 seek=$((offset + i)) conv=notrunc status=none
  done
}
# random_offset SIZE LOW_PERCENT HIGH_PERCENT: uniform in that part of the file.
random_offset() {
  local size=$1 low=$(( $1 * $2 / 100 )) high=$(( $1 * $3 / 100 ))
  [[ $high -gt $low ]] || high=$((low + 1))
  echo $(( low + $(random_below $(( high - low ))) ))
}
# expect_data_loss NAME DIR WHAT: starts the command on DIR; it must fail
# with DATA_LOSS naming WHAT (a regex).
expect_data_loss() {
  local name=$1 dir=$2 what=$3 out="$TMP/$1.out" err="$TMP/$1.err" code
  timeout 120 "$BIN" --scenario="$SCENARIO" --data_dir="$dir" --json > "$out" 2> "$err"
  code=$?
  if [[ $code -ne 2 ]]; then
    tail -5 "$err"; tail -1 "$out"
    [[ $code -eq 0 ]] && fail "$name: exit 0 on a corrupt data directory (silently consistent)"
    [[ $code -eq 124 ]] && fail "$name: hung"
    [[ $code -gt 128 ]] && fail "$name: killed by signal $((code - 128))"
    fail "$name: exit $code, expected 2"
  fi
  grep -q "^backfill: error: DATA_LOSS: " "$err" ||
      { cat "$err"; fail "$name: the error is not DATA_LOSS"; }
  grep "^backfill: error: DATA_LOSS: " "$err" | grep -Eq "$what" ||
      { cat "$err"; fail "$name: the error does not name /$what/"; }
  grep -q "data loss" "$err" || fail "$name: no data-loss hint"
  tail -1 "$out" | grep -q '"error":"DATA_LOSS: ' || fail "$name: JSON error is not DATA_LOSS"
  tail -1 "$out" | grep -q '"consistent":false' || fail "$name: JSON claims consistent"
  echo "ok: $name: $(grep "^backfill: error: " "$err" | cut -c1-200)"
}

# --- the stopped jobs -----------------------------------------------------
FINISHED="$TMP/finished"
for i in 1 2; do
  run_ok "$TMP/finished$i.log" --scenario="$SCENARIO" --data_dir="$FINISHED" --json
done
KILLED="$TMP/killed"
run_ok "$TMP/killed1.log" --scenario="$SCENARIO" --data_dir="$KILLED" --json
"$BIN" --scenario="$SCENARIO" --data_dir="$KILLED" --parallelism=3 > "$TMP/killed2.log" 2>&1 &
pid=$!
# Kill it during the run (after its first progress line or 1.5 s).
for _ in $(seq 1 30); do
  grep -q "epoch" "$TMP/killed2.log" 2>/dev/null && break
  sleep 0.05
done
sleep 0.$((RANDOM % 5))
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null

for job in finished killed; do
  src="$TMP/$job"
  # The pristine copy starts fine: the damage below is what fails.
  cp -r "$src" "$TMP/$job.control"
  timeout 120 "$BIN" --scenario="$SCENARIO" --data_dir="$TMP/$job.control" --json \
      > "$TMP/$job.control.log" 2>&1 ||
      { tail -5 "$TMP/$job.control.log"; fail "$job: the uncorrupted copy fails"; }
  [[ $(recoveries_of "$TMP/$job.control.log") == 0 ]] ||
      fail "$job: the uncorrupted copy recovered: $(tail -1 "$TMP/$job.control.log")"
  files=()
  for f in "$src"/*.sst "$src"/*.log "$src"/MANIFEST-* "$src"/CURRENT \
           "$src"/ACKNOWLEDGED_EPOCH; do
    [[ -e $f ]] && files+=("$(basename "$f")")
  done
  echo "$job: ${files[*]}"
  for file in "${files[@]}"; do
    size=$(stat -c %s "$src/$file")
    [[ $size -gt 0 ]] || continue
    case "$file" in
      *.sst) what="${file}"; ranges=("2 85" "2 85" "2 85");;  # data and index blocks
      *.log) what="${file}"; ranges=("1 95" "1 95");;
      MANIFEST-*) what="MANIFEST"; ranges=("0 100" "0 100");;
      CURRENT) what="CURRENT"; ranges=("0 100");;
      ACKNOWLEDGED_EPOCH) what="ACKNOWLEDGED_EPOCH"; ranges=("0 100");;
    esac
    for range in "${ranges[@]}"; do
      dir="$TMP/$job.$file.$RANDOM"
      cp -r "$src" "$dir"
      offset=$(random_offset "$size" $range)
      length=$(( 1 + RANDOM % 8 ))
      [[ $((offset + length)) -le $size ]] || length=$((size - offset))
      flip "$dir/$file" "$offset" "$length"
      cmp -s "$src/$file" "$dir/$file" && fail "$job $file: flip changed nothing"
      expect_data_loss "$job-$file@$offset+$length" "$dir" "$what"
    done
  done
done

# --- the last record of the log / MANIFEST made to run past the file's end --
# last_record FILE: the offset of the last record header (RocksDB's log
# format: 32 KiB blocks, 7-byte headers crc | length u16 LE | type).
last_record() {
  local file=$1 size offset=0 last=0 left length
  size=$(stat -c %s "$file")
  while [[ $((offset + 7)) -le $size ]]; do
    left=$(( 32768 - offset % 32768 ))
    if [[ $left -lt 7 ]]; then offset=$((offset + left)); continue; fi
    last=$offset
    length=$(od -An -tu2 -j $((offset + 4)) -N 2 --endian=little "$file" | tr -d ' ')
    offset=$((offset + 7 + length))
  done
  echo $last
}
for file in "$(basename "$FINISHED"/*.log)" "$(basename "$FINISHED"/MANIFEST-*)"; do
  dir="$TMP/finished.$file.last"
  cp -r "$FINISHED" "$dir"
  last=$(last_record "$dir/$file")
  printf '\377\377' | dd of="$dir/$file" bs=1 seek=$((last + 4)) conv=notrunc status=none
  case "$file" in
    *.log) what="checkpoint .* had been acknowledged";;
    *) what="MANIFEST-[0-9]* is damaged at offset $last";;
  esac
  expect_data_loss "finished-$file-last-record-length" "$dir" "$what"
done

# --- a missing CURRENT beside the database files --------------------------
dir="$TMP/no_current"
cp -r "$FINISHED" "$dir"
rm "$dir/CURRENT"
expect_data_loss "no-CURRENT" "$dir" "CURRENT file is missing"
[[ ! -e "$dir/CURRENT" ]] || fail "no-CURRENT: a new CURRENT was written over the old files"
rm -f "$dir"/*.log
expect_data_loss "no-CURRENT-no-log" "$dir" "CURRENT file is missing"
echo "ok: corruption"
