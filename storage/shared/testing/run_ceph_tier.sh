#!/usr/bin/env bash
# The Ceph RGW tier: installs the Ceph packages (tools/setup.sh --ceph),
# starts a throwaway cluster (ceph_rgw.sh), runs
# //storage/shared:s3_object_store_ceph_test against it, and always stops
# the cluster. Run from the workspace root (.ci/run does, in the default
# configuration only):
#
#   bash storage/shared/testing/run_ceph_tier.sh
#
# The last line is exactly one of
#   ceph tier: N passed, N failed        (Bazel test targets, as .ci/run counts)
#   ceph tier: SKIPPED: <why>            (Ceph cannot be installed or start)
# and the exit status is non-zero only if a test failed.
set -uo pipefail
cd "$(dirname "$0")/../../.."

log() { printf '[ceph tier] %s\n' "$*"; }
skip() { echo "ceph tier: SKIPPED: $*"; exit 0; }

tier_start=$SECONDS
if ! bash tools/setup.sh --ceph > /tmp/ceph_tier_setup.$$.log 2>&1; then
  tail -5 /tmp/ceph_tier_setup.$$.log
  rm -f /tmp/ceph_tier_setup.$$.log
  skip "tools/setup.sh --ceph could not install the Ceph packages"
fi
rm -f /tmp/ceph_tier_setup.$$.log

# Build first, so the cluster runs only for the test itself.
target=//storage/shared:s3_object_store_ceph_test
if ! bazel build "$target" > /dev/null 2>&1; then
  log "bazel build $target failed"
  echo "ceph tier: 0 passed, 1 failed"
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
log "tests ran in $((SECONDS - test_start)) s ($cases test cases passed); tier total $((SECONDS - tier_start)) s before stopping"

stop
trap - EXIT
echo "ceph tier: $p passed, $f failed"
[[ $f -eq 0 ]]
