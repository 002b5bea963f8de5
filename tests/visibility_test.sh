#!/usr/bin/env bash
# The public surface is exactly the component map.
#
#   visibility_test.sh PUBLIC_LIBRARIES PUBLIC_TARGETS README
#
# PUBLIC_LIBRARIES: genquery output, every cc_library with
#   visibility //visibility:public reachable from the packages' tests;
# PUBLIC_TARGETS: docs/public_targets.txt, the machine-readable component map
#   (one label per line; '#' comments);
# README: README.md, whose component map must name each listed label.
# Fails, naming each label, when a library is public but not listed, listed
# but not public (or gone), or listed but missing from the README's map.
set -euo pipefail

query=$1
list=$2
readme=$3

# Our own libraries only: the Debian wrappers in //third_party: are plumbing.
actual=$(grep -E '^//' "$query" | grep -vE '^//third_party:' | sort -u || true)
expected=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$list" | grep -E '^//' | sort -u)

status=0
while read -r label; do
  [[ -z "$label" ]] && continue
  echo "public but not in docs/public_targets.txt (make it private, or list it and map it in README.md): $label"
  status=1
done < <(comm -23 <(echo "$actual") <(echo "$expected"))

while read -r label; do
  [[ -z "$label" ]] && continue
  echo "listed in docs/public_targets.txt but not a public cc_library reached by any test: $label"
  status=1
done < <(comm -13 <(echo "$actual") <(echo "$expected"))

while read -r label; do
  [[ -z "$label" ]] && continue
  if ! grep -qF "\`$label\`" "$readme"; then
    echo "listed in docs/public_targets.txt but not named in README.md's component map: $label"
    status=1
  fi
done <<< "$expected"

if [[ $status -eq 0 ]]; then
  echo "public surface: $(echo "$expected" | wc -l) libraries, as listed and mapped"
fi
exit $status
