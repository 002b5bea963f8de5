#!/usr/bin/env bash
# Regenerates the vendored etcd v3 API protos in this directory from Debian's
# golang-etcd-server-dev (etcd 3.4.23), for the system protoc:
#
#   bash third_party/etcd/strip_options.sh [SOURCE_ROOT]
#
# SOURCE_ROOT defaults to /usr/share/gocode/src/go.etcd.io/etcd. The script
#   - drops `import "gogoproto/gogo.proto";` and every `option (gogoproto.*)`
#     line (Go code-generation hints; no effect on the wire format);
#   - drops `import "google/api/annotations.proto";` and every
#     `option (google.api.http) = { ... };` block (grpc-gateway HTTP mappings);
#   - rewrites the imports `etcd/mvcc/mvccpb/kv.proto` and
#     `etcd/auth/authpb/auth.proto` to their workspace paths here.
# Package names (etcdserverpb, mvccpb, authpb), messages, field numbers and
# services are untouched, so the generated stubs speak etcd's gRPC API.
set -euo pipefail
source_root="${1:-/usr/share/gocode/src/go.etcd.io/etcd}"
here="$(cd "$(dirname "$0")" && pwd)"

strip() {
  local input="$1" output="$2"
  mkdir -p "$(dirname "$output")"
  {
    echo "// Vendored from etcd 3.4.23 ($3) by third_party/etcd/strip_options.sh;"
    echo "// Go code-generation and HTTP-gateway options removed. Apache License 2.0 (LICENSE)."
    perl -0777 -pe '
      s{^import "gogoproto/gogo\.proto";\n}{}mg;
      s{^//\s*for grpc-gateway\n}{}mg;
      s{^import "google/api/annotations\.proto";\n}{}mg;
      s{^option \(gogoproto\.[^\n]*\n}{}mg;
      s{\s*option \(google\.api\.http\) = \{.*?\};}{}sg;
      s{import "etcd/mvcc/mvccpb/kv\.proto";}{import "third_party/etcd/mvccpb/kv.proto";}g;
      s{import "etcd/auth/authpb/auth\.proto";}{import "third_party/etcd/authpb/auth.proto";}g;
      s{\n{3,}}{\n\n}g;
    ' "$input"
  } > "$output"
  if grep -qE 'gogoproto|google\.api' "$output"; then
    echo "strip_options.sh: options left in $output" >&2; exit 1
  fi
}

strip "$source_root/mvcc/mvccpb/kv.proto" "$here/mvccpb/kv.proto" mvcc/mvccpb/kv.proto
strip "$source_root/auth/authpb/auth.proto" "$here/authpb/auth.proto" auth/authpb/auth.proto
strip "$source_root/etcdserver/etcdserverpb/rpc.proto" "$here/etcdserverpb/rpc.proto" \
  etcdserver/etcdserverpb/rpc.proto
