#!/usr/bin/env bash
# Black-box test of //tools:backfill --store=shared: the heavy_churn
# scenario (pk-changing updates, deletes, two online rescales; the default
# scenario's million rows take minutes in a fastbuild, so it is run by hand:
# tools/README.md) on the shared store (local-directory objects, the command's own local
# 3-member etcd cluster) finishes consistent with equal dumps, and the
# command leaves no etcd process and no etcd directory behind, neither after
# a normal run nor after two Ctrl-Cs (exit at once, 130).
set -uo pipefail
BIN="tools/backfill"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"

fail() { echo "FAIL: $*"; exit 1; }

# No etcd process started for DATA_DIR is left, nor its directory.
expect_no_etcd_left() {
  local data_dir=$1 what=$2
  if pgrep -f "etcd --name member[0-9]* --data-dir $data_dir/" > /dev/null; then
    pgrep -fa "etcd --name member[0-9]* --data-dir $data_dir/"
    fail "$what: an etcd member of $data_dir is still running"
  fi
  compgen -G "$data_dir/etcd-*" > /dev/null &&
      fail "$what: the local etcd directory is left in $data_dir: $(ls -d "$data_dir"/etcd-*)"
  return 0
}

# 1. heavy_churn, consistent.
"$BIN" --scenario=tools/scenarios/heavy_churn.textproto --store=shared --object_store="$TMP/objects" --data_dir="$TMP/run" \
    --dump_dir="$TMP/dump" --json > "$TMP/run.log" 2>&1
code=$?
[[ $code -eq 0 ]] || { tail -20 "$TMP/run.log"; fail "heavy_churn: exit $code"; }
last=$(tail -1 "$TMP/run.log")
grep -q '"consistent":true' <<<"$last" || fail "not consistent: $last"
grep -q '"recoveries":0[,}]' <<<"$last" || fail "recovered without a fault: $last"
grep -q '"scenario":"heavy_churn"' <<<"$last" || fail "not heavy_churn: $last"
cmp "$TMP/dump/upstream.tsv" "$TMP/dump/view.tsv" || fail "view dump != upstream dump"
compgen -G "$TMP/objects/sst/*.sst" > /dev/null || fail "no SST object in $TMP/objects"
expect_no_etcd_left "$TMP/run" "after the run"
echo "heavy_churn: $last"

# 2. Two Ctrl-Cs once the local cluster runs: exit 130 at once, and the
# kernel stops the members with the process (PR_SET_PDEATHSIG).
"$BIN" --store=shared --object_store="$TMP/objects2" --data_dir="$TMP/int" \
    > "$TMP/int.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q "^etcd: a local 3-member cluster" "$TMP/int.log" && break
  kill -0 $pid 2> /dev/null || break
  sleep 0.1
done
grep -q "^etcd: a local 3-member cluster" "$TMP/int.log" ||
    { cat "$TMP/int.log"; fail "the local etcd cluster did not start"; }
kill -INT $pid; sleep 0.2; kill -INT $pid
wait $pid
code=$?
[[ $code -eq 130 ]] || { tail -20 "$TMP/int.log"; fail "two Ctrl-Cs: exit $code, not 130"; }
grep -q "cannot be resumed" "$TMP/int.log" || fail "no word that the run cannot be resumed"
for _ in $(seq 1 50); do  # SIGKILL from the kernel is asynchronous.
  pgrep -f "etcd --name member[0-9]* --data-dir $TMP/int/" > /dev/null || break
  sleep 0.1
done
pgrep -f "etcd --name member[0-9]* --data-dir $TMP/int/" > /dev/null &&
    fail "after two Ctrl-Cs: an etcd member is still running"
echo "PASS"
