#!/usr/bin/env bash
# A real Prometheus scrapes a running job: Debian's `prometheus` server on a
# free localhost port, with a generated scrape config pointing at the job's
# /metrics (and tools/monitoring/backfill.rules.yml loaded), scrapes every
# second while //tools:backfill runs a small rate-limited backfill. Then
# Prometheus's HTTP API must show that the snapshot-rows counter increased,
# that the job's progress reached 1 (raw and through the recording rule),
# that view writes and checkpoint durations were recorded,
# and `promtool check metrics` on the live /metrics prints nothing.
# Both processes are stopped on every exit path.
set -uo pipefail
fail() { echo "FAIL: $*"; [[ -f "$TMP/job.err" ]] && tail -5 "$TMP/job.err"; exit 1; }
BIN=tools/backfill
PROMETHEUS=$(command -v prometheus) || { echo "FAIL: prometheus is missing (tools/setup.sh)"; exit 1; }
PROMTOOL=$(command -v promtool) || { echo "FAIL: promtool is missing (tools/setup.sh)"; exit 1; }
TMP=${TEST_TMPDIR:-$(mktemp -d)}
JOB_PID=""; PROM_PID=""
cleanup() {
  for pid in $JOB_PID $PROM_PID; do
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
}
trap cleanup EXIT

# A port nothing listens on now (the caller retries if it is taken later).
free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return 0; fi
  done
  return 1
}
# wait_for SECONDS COMMAND...: polls every 0.2 s.
wait_for() {
  local seconds=$1; shift
  for _ in $(seq 1 $(( seconds * 5 ))); do "$@" && return 0; sleep 0.2; done
  return 1
}

JOB_PORT=$(free_port) || fail "no free port"
PROM_PORT=""
for attempt in 1 2 3; do
  PROM_PORT=$(free_port) || fail "no free port"
  [[ $PROM_PORT != "$JOB_PORT" ]] || continue
  cat > "$TMP/prometheus.yml" <<X
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $PWD/tools/monitoring/backfill.rules.yml
scrape_configs:
  - job_name: backfill
    static_configs:
      - targets: ["127.0.0.1:$JOB_PORT"]
X
  rm -rf "$TMP/tsdb"
  "$PROMETHEUS" --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
      --web.listen-address="127.0.0.1:$PROM_PORT" > "$TMP/prometheus.log" 2>&1 &
  PROM_PID=$!
  if wait_for 30 curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" -o /dev/null; then break; fi
  kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null; PROM_PID=""
done
[[ -n $PROM_PID ]] || { tail -5 "$TMP/prometheus.log"; fail "prometheus did not start"; }

# ~5 s of backfill (20k rows at 4000 rows/s) under a live upstream, then
# 40 more checkpoints (~4 s) so that the finished state is scraped too.
cat > "$TMP/scrape.textproto" <<'X'
name: "scrape"
table {
  columns { name: "id" type: INT64 }
  columns { name: "v" type: VARCHAR nullable: true }
  primary_key { column: 0 }
  vnode_count: 64
}
initial_rows: 20000
seed: 3
workload { ops_per_second: 2000 insert_weight: 1 update_weight: 1 delete_weight: 1 }
backfill { parallelism: 2 chunk_size: 64 rate_limit: 4000 }
runtime { barrier_interval_ms: 100 checkpoint_frequency: 1 extra_checkpoints_after_finish: 40 }
X
"$BIN" --scenario="$TMP/scrape.textproto" --data_dir="$TMP/data" \
    --metrics_port="$JOB_PORT" > "$TMP/job.out" 2> "$TMP/job.err" &
JOB_PID=$!
wait_for 30 grep -q "metrics: http://127.0.0.1:$JOB_PORT/metrics" "$TMP/job.out" ||
    fail "the job did not serve /metrics on $JOB_PORT: $(cat "$TMP/job.out")"

# promtool on the live exposition: silent, exit 0.
wait_for 30 grep -q "epoch" "$TMP/job.out" || fail "no progress line"
curl -sf "http://127.0.0.1:$JOB_PORT/metrics" -o "$TMP/metrics.txt" || fail "GET /metrics"
grep -q "^stream_backfill_snapshot_read_rows_total{" "$TMP/metrics.txt" || fail "no snapshot counter"
grep -q "^backfill_job_upstream_ops_total{" "$TMP/metrics.txt" || fail "no job metrics"
for series in backfill_rocksdb_read_bytes_total backfill_rocksdb_written_bytes_total \
    backfill_rocksdb_pending_compaction_bytes backfill_rocksdb_sst_files \
    backfill_rocksdb_block_cache_hits_total; do
  grep -q "^$series " "$TMP/metrics.txt" || fail "no $series (RocksDB's own figures)"
done
lint=$("$PROMTOOL" check metrics < "$TMP/metrics.txt" 2>&1); code=$?
[[ $code -eq 0 && -z $lint ]] || fail "promtool check metrics (exit $code): $lint"

for _ in $(seq 1 600); do kill -0 "$JOB_PID" 2>/dev/null || break; sleep 0.2; done
wait "$JOB_PID"; code=$?; JOB_PID=""
[[ $code -eq 0 ]] || fail "the job exited $code"
grep -q '"consistent":true' <<<"$(tail -1 "$TMP/job.out")" || fail "not consistent"
# No fault was injected: a recovery would be one from the job's own bug.
grep -q '"recoveries":0[,}]' <<<"$(tail -1 "$TMP/job.out")" ||
    fail "recovered although no fault was injected: $(tail -1 "$TMP/job.out")"

# query EXPR: the first result's value ("" if none).
query() {
  curl -sf -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
      grep -o '"value":\[[0-9.e+-]*,"[^"]*"\]' | head -1 | sed 's/.*,"\(.*\)"\]/\1/'
}
scrapes=$(query 'count_over_time(up{job="backfill"}[10m])')
[[ ${scrapes%.*} -ge 5 ]] || fail "only ${scrapes:-0} scrapes of the job"
rows_min=$(query 'sum(min_over_time(stream_backfill_snapshot_read_rows_total[10m]))')
rows_max=$(query 'sum(max_over_time(stream_backfill_snapshot_read_rows_total[10m]))')
[[ -n $rows_min && -n $rows_max ]] || fail "no snapshot counter in Prometheus"
awk -v a="$rows_min" -v b="$rows_max" 'BEGIN { exit !(b > a) }' ||
    fail "the snapshot-rows counter did not increase ($rows_min -> $rows_max)"
progress=$(query 'max_over_time(backfill_job_progress_ratio[10m])')
[[ $progress == "1" ]] || fail "progress reached ${progress:-nothing}, not 1"
recorded=$(query 'max_over_time(table_id:backfill_job_progress_ratio:max[10m])')
[[ $recorded == "1" ]] || fail "the recording rule's progress reached ${recorded:-nothing}, not 1"
# The job metrics the runtime does not count itself (tools/metered_state_store.h).
view_rows=$(query 'max(max_over_time(backfill_job_view_written_rows_total[10m]))')
awk -v v="${view_rows:-0}" 'BEGIN { exit !(v >= 20000) }' ||
    fail "view rows written: ${view_rows:-none}, expected >= 20000 (the snapshot alone)"
checkpoints=$(query 'max(max_over_time(backfill_job_checkpoint_duration_seconds_count[10m]))')
awk -v v="${checkpoints:-0}" 'BEGIN { exit !(v >= 40) }' ||
    fail "checkpoint durations observed: ${checkpoints:-none}, expected >= 40"
# Storage figures from RocksDB itself: the bulk load's 20,000 rows and more
# were written, the snapshot read them, the block cache was used.
written=$(query 'max_over_time(backfill_rocksdb_written_bytes_total[10m])')
awk -v v="${written:-0}" 'BEGIN { exit !(v >= 20000 * 16) }' ||
    fail "RocksDB bytes written: ${written:-none}, expected >= 320000"
read_bytes=$(query 'max_over_time(backfill_rocksdb_read_bytes_total[10m])')
awk -v v="${read_bytes:-0}" 'BEGIN { exit !(v > 0) }' || fail "RocksDB bytes read: ${read_bytes:-none}"
upstream_rows=$(query 'max(max_over_time(backfill_job_upstream_written_rows_total[10m]))')
awk -v v="${upstream_rows:-0}" 'BEGIN { exit !(v >= 20000) }' ||
    fail "upstream rows written: ${upstream_rows:-none}, expected >= 20000 (the bulk load)"
echo "ok: $scrapes scrapes; snapshot rows $rows_min -> $rows_max; progress 1; RocksDB: $written bytes written, $read_bytes read; promtool silent"
