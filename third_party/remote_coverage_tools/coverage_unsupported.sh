#!/bin/sh
echo "bazel coverage is not supported in this offline build (no remote_coverage_tools)." >&2
exit 1
