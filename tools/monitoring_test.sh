#!/usr/bin/env bash
# tools/monitoring/ is valid for Prometheus's own tools: the scrape config
# (`promtool check config`, which also loads the rule files), the rules
# (`promtool check rules`) and their unit tests (`promtool test rules`). A
# broken copy must fail, so a passing run means promtool really checked.
set -uo pipefail
fail() { echo "FAIL: $*"; exit 1; }
PROMTOOL=$(command -v promtool) || fail "promtool is missing (Debian package prometheus; tools/setup.sh)"
DIR=tools/monitoring

out=$("$PROMTOOL" check config "$DIR/prometheus.yml" 2>&1) || fail "check config: $out"
grep -q "1 rule files found" <<<"$out" || fail "the config does not load the rules: $out"
out=$("$PROMTOOL" check rules "$DIR/backfill.rules.yml" 2>&1) || fail "check rules: $out"
for alert in BackfillStalled BackfillBarrierLatencyOverBudget BackfillAdaptiveTargetUnreachable \
    BackfillRecovered; do
  grep -q "alert: $alert\$" "$DIR/backfill.rules.yml" || fail "no alert $alert"
done
# promtool test rules resolves rule_files relative to the test file.
out=$(cd "$DIR" && "$PROMTOOL" test rules rules_test.yml 2>&1) || fail "test rules: $out"

# Negative controls.
TMP=${TEST_TMPDIR:-$(mktemp -d)}
sed 's/expr: increase(backfill_job_recoveries_total\[15m\]) > 0/expr: increase(backfill_job_recoveries_total[15m] > 0/' \
    "$DIR/backfill.rules.yml" > "$TMP/broken.rules.yml"
if "$PROMTOOL" check rules "$TMP/broken.rules.yml" >/dev/null 2>&1; then
  fail "promtool accepted a broken rule"
fi
cp "$DIR/rules_test.yml" "$TMP/rules_test.yml"
sed 's/> 1$/> 10/' "$DIR/backfill.rules.yml" > "$TMP/backfill.rules.yml"
if (cd "$TMP" && "$PROMTOOL" test rules rules_test.yml >/dev/null 2>&1); then
  fail "the rule unit tests passed with a 10 s latency budget"
fi
echo "ok: config, rules and rule unit tests"
