#!/usr/bin/env bash
# The Ceph RGW tier: installs the Ceph packages (tools/setup.sh --ceph),
# starts a throwaway cluster (ceph_rgw.sh), and against its gateway runs
#   1. //storage/shared:s3_object_store_ceph_test (the object store's
#      conformance suite and error cases), then
#   2. the command on the shared store over S3: //tools:backfill
#      --scenario=tools/scenarios/heavy_churn.textproto --store=shared
#      --object_store=s3://BUCKET/heavy_churn/ (a fresh bucket made here; the
#      command's own local 3-member etcd cluster, as without --etcd it
#      starts and stops one; credentials through AWS_ENDPOINT_URL,
#      AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), which passes only if it
#      exits 0, its last line is its JSON summary with "consistent":true and
#      "recoveries":0, SST objects are in the bucket and no etcd member of
#      its data directory is left running;
#   3. the job over processes on the same gateway: //tools:backfill_cluster
#      --workers=3 --scenario=tools/testdata/cluster.textproto
#      --kill_worker_after_epochs=10 --object_store=s3://BUCKET/cluster/
#      (a fresh bucket), which passes only if it exits 0 with "consistent":
#      true and "workers_killed":1, SST objects are in the bucket and
#      nothing of its run is left running;
# and always stops the cluster. Run from the workspace root (.ci/run does,
# in the default configuration only):
#
#   bash storage/shared/testing/run_ceph_tier.sh
#
# The last line is exactly one of
#   ceph tier: N passed, N failed        (the Bazel test target and the
#                                         command run, as .ci/run counts)
#   ceph tier: SKIPPED: <why>            (Ceph cannot be installed or start)
# and the exit status is non-zero only if something failed.
set -uo pipefail
cd "$(dirname "$0")/../../.."

log() { printf '[ceph tier] %s\n' "$*"; }
skip() { echo "ceph tier: SKIPPED: $*"; exit 0; }

# An S3 request to the tier's gateway signed by curl (SigV4; RGW wants the
# payload hash header, here of an empty body): s3_request METHOD PATH
# [CURL OPTIONS...].
s3_request() {
  curl -sS --max-time 30 --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$CEPH_RGW_ACCESS_KEY:$CEPH_RGW_SECRET_KEY" \
    -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
    -X "$1" "$CEPH_RGW_ENDPOINT$2" "${@:3}"
}

# Makes a fresh bucket on the tier's gateway and prints its name; $1 names
# the step in the log.
make_bucket() {
  local step=$1 bucket status
  command -v curl > /dev/null || { log "$step: no curl to make the bucket" >&2; return 1; }
  bucket="backfill-tier-$(uuidgen | tr -d - | head -c 12)"
  status=$(s3_request PUT "/$bucket" -o /dev/null -w '%{http_code}' 2>&1)
  [[ "$status" == 200 ]] || { log "$step: PUT bucket $bucket: $status" >&2; return 1; }
  echo "$bucket"
}

# Runs //tools:backfill on heavy_churn with --store=shared over S3 in a fresh
# bucket, DATA_DIR ($1) for its cache and local etcd cluster; returns 0 only
# if it passed (see the header).
run_command_over_rgw() {
  local data_dir="$1" bucket status last
  bucket=$(make_bucket command) || return 1
  local output="$data_dir.log"
  mkdir -p "$data_dir"
  # heavy_churn runs for about 3 s here; the timeout only guards against a
  # hang (SIGINT: the command stops its etcd cluster and exits).
  AWS_ENDPOINT_URL="$CEPH_RGW_ENDPOINT" AWS_ACCESS_KEY_ID="$CEPH_RGW_ACCESS_KEY" \
    AWS_SECRET_ACCESS_KEY="$CEPH_RGW_SECRET_KEY" \
    timeout --signal=INT --kill-after=15 180 bazel-bin/tools/backfill \
      --scenario=tools/scenarios/heavy_churn.textproto --store=shared \
      --object_store="s3://$bucket/heavy_churn/" --data_dir="$data_dir" \
      --json > "$output" 2>&1
  status=$?
  last=$(tail -1 "$output")
  log "command: exit $status; last line: $last"
  local ok=1
  if [[ $status -ne 0 ]]; then
    log "command: exit $status, not 0; its last lines:"; tail -15 "$output"; ok=0
  fi
  # The summary line, strictly: one JSON object, consistent, no recovery.
  if ! [[ "$last" =~ ^\{.*\}$ && "$last" =~ \"consistent\":true[,}] &&
          "$last" =~ \"recoveries\":0[,}] ]]; then
    log "command: the last line is not a consistent summary without recoveries"; ok=0
  fi
  # Its SST objects went to the gateway (the bucket holds nothing else).
  if ! s3_request GET "/$bucket?list-type=2" 2>&1 |
      grep -q '<Key>heavy_churn/sst/'; then
    log "command: no SST object under s3://$bucket/heavy_churn/sst/"; ok=0
  fi
  # It stopped the local etcd cluster it started (members run with
  # --data-dir DATA_DIR/etcd-XXXXXX/member<i>).
  if pgrep -f "etcd --name member[0-9]* --data-dir $data_dir/" > /dev/null; then
    log "command: an etcd member of $data_dir is still running"; ok=0
  fi
  ((ok))
}

# Runs //tools:backfill_cluster over S3 in a fresh bucket with worker 0
# killed mid-backfill, DATA_DIR ($1) for its caches and local etcd cluster;
# returns 0 only if it passed (see the header).
run_cluster_over_rgw() {
  local data_dir="$1" bucket status last
  bucket=$(make_bucket cluster) || return 1
  local output="$data_dir.log"
  mkdir -p "$data_dir"
  AWS_ENDPOINT_URL="$CEPH_RGW_ENDPOINT" AWS_ACCESS_KEY_ID="$CEPH_RGW_ACCESS_KEY" \
    AWS_SECRET_ACCESS_KEY="$CEPH_RGW_SECRET_KEY" \
    timeout --signal=INT --kill-after=15 240 bazel-bin/tools/backfill_cluster \
      --workers=3 --scenario=tools/testdata/cluster.textproto \
      --kill_worker_after_epochs=10 --object_store="s3://$bucket/cluster/" \
      --data_dir="$data_dir" --json > "$output" 2>&1
  status=$?
  last=$(tail -1 "$output")
  log "cluster: exit $status; last line: $last"
  local ok=1
  if [[ $status -ne 0 ]]; then
    log "cluster: exit $status, not 0; its last lines:"; tail -15 "$output"; ok=0
  fi
  if ! [[ "$last" =~ \"consistent\":true[,}] && "$last" =~ \"workers_killed\":1[,}] ]]; then
    log "cluster: the last line is not a consistent run with a worker killed"; ok=0
  fi
  if ! s3_request GET "/$bucket?list-type=2" 2>&1 | grep -q '<Key>cluster/sst/'; then
    log "cluster: no SST object under s3://$bucket/cluster/sst/"; ok=0
  fi
  if pgrep -f -- "--data_dir=$data_dir" > /dev/null ||
      pgrep -f "etcd --name member[0-9]* --data-dir $data_dir/" > /dev/null; then
    log "cluster: a process of $data_dir is still running"; ok=0
  fi
  ((ok))
}

tier_start=$SECONDS
if ! bash tools/setup.sh --ceph > /tmp/ceph_tier_setup.$$.log 2>&1; then
  tail -5 /tmp/ceph_tier_setup.$$.log
  rm -f /tmp/ceph_tier_setup.$$.log
  skip "tools/setup.sh --ceph could not install the Ceph packages"
fi
rm -f /tmp/ceph_tier_setup.$$.log

# Build first, so the cluster runs only for the tests themselves.
target=//storage/shared:s3_object_store_ceph_test
command_target=//tools:backfill
cluster_target=//tools:backfill_cluster
if ! bazel build "$target" "$command_target" "$cluster_target" > /dev/null 2>&1; then
  log "bazel build $target $command_target $cluster_target failed"
  echo "ceph tier: 0 passed, 3 failed"
  exit 1
fi

state_parent=$(mktemp -d)
state="$state_parent/cluster"
stop() {
  local stop_start=$SECONDS
  bash storage/shared/testing/ceph_rgw.sh stop "$state"
  rm -rf "$state_parent"
  log "cluster stopped in $((SECONDS - stop_start)) s"
}
trap stop EXIT
# A signal still runs the EXIT trap: never leave daemons behind.
trap 'exit 130' INT TERM HUP

start_start=$SECONDS
if ! bash storage/shared/testing/ceph_rgw.sh start "$state"; then
  for log_file in "$state".failed-logs/*.log; do
    [[ -f "$log_file" ]] && { log "tail of $log_file:"; tail -5 "$log_file"; }
  done
  # ceph_rgw.sh stopped what it had started.
  trap - EXIT
  rm -rf "$state_parent" "$state".failed-logs
  skip "the cluster did not start (see the logs above)"
fi
log "cluster up in $((SECONDS - start_start)) s"
# shellcheck disable=SC1091
source "$state/env"

test_start=$SECONDS
output=$(mktemp)
bazel test --nocache_test_results --test_output=errors --test_summary=short \
  --test_env=CEPH_RGW_ENDPOINT --test_env=CEPH_RGW_ACCESS_KEY \
  --test_env=CEPH_RGW_SECRET_KEY "$target" 2>&1 | tee "$output" | \
  grep -E '^(//|ERROR|FAIL|\[  FAILED)' || true
p=$(grep -cE '^//\S+\s+(\(cached\) )?PASSED' "$output" || true)
f=$(grep -cE '^//\S+\s+(\(cached\) )?(FAILED|TIMEOUT|FLAKY|NO STATUS|INCOMPLETE|FAILED TO BUILD)' "$output" || true)
if [[ $((p + f)) -eq 0 ]]; then f=1; fi
rm -f "$output"
cases=$(grep -cE '^\[       OK \]' "bazel-testlogs/storage/shared/s3_object_store_ceph_test/test.log" 2>/dev/null || echo 0)
log "tests ran in $((SECONDS - test_start)) s ($cases test cases passed)"

# Runs one step ($2...) and counts it as passed or failed; $1 names it.
count_step() {
  local name=$1 start=$SECONDS
  shift
  if "$@"; then p=$((p + 1)); else f=$((f + 1)); fi
  log "$name ran in $((SECONDS - start)) s"
}

# 2. The command on the shared store over this RGW.
count_step "the command" run_command_over_rgw "$state_parent/backfill"
# 3. The job over processes on this RGW, a worker killed.
count_step "the cluster command" run_cluster_over_rgw "$state_parent/cluster_run"
log "tier total $((SECONDS - tier_start)) s before stopping"

stop
trap - EXIT
echo "ceph tier: $p passed, $f failed"
[[ $f -eq 0 ]]
