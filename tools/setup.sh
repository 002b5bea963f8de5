#!/usr/bin/env bash
# Installs exactly the Debian 12 packages this repository needs, offline from
# Debian's own mirror (no other downloads). Idempotent: packages already
# present are left alone, and `apt-get update` runs only when something is
# missing. Safe to run twice, and as a non-first step of a longer script.
#
#   sudo bash tools/setup.sh        # or as root
#   bash tools/setup.sh --check     # only report; exit 1 if something is missing
#   sudo bash tools/setup.sh --ceph # also the Ceph RGW test tier's packages
#                                   # (storage/shared/testing/ceph_rgw.sh)
set -euo pipefail

check_only=0
with_ceph=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    --ceph) with_ceph=1 ;;
    *) printf '[setup] unknown argument: %s\n' "$arg"; exit 2 ;;
  esac
done

PACKAGES=(
  bazel-bootstrap          # Bazel 4.2.3 (WORKSPACE mode)
  g++                      # C++20 compiler (g++ 12)
  pkg-config               # link lines of the -dev packages
  libabsl-dev              # abseil 20220623
  libprotobuf-dev          # protobuf 3.21 runtime
  protobuf-compiler        # protoc for //third_party:proto.bzl
  librocksdb-dev           # RocksDB 7.8
  zlib1g-dev               # zlib (RocksDB, CRC)
  libgoogle-perftools-dev  # tcmalloc (gperftools)
  libgtest-dev             # googletest 1.12
  libgmock-dev             # googlemock 1.12
  libbenchmark-dev         # Google Benchmark 1.7
  libcivetweb-dev          # HTTP server for /metrics
  prometheus               # promtool and the server, used by the metrics tests
  curl                     # HTTP client of //tools:prometheus_scrape_test
  clang                    # clang 14 for --config=fuzz
  libclang-rt-14-dev       # libFuzzer and sanitizer runtimes for clang
  gnuplot-nox              # tools/backfill_bench --plot
  libgrpc++-dev            # gRPC C++ 1.51 (//third_party:grpc)
  protobuf-compiler-grpc   # grpc_cpp_plugin for cc_grpc in //third_party:proto.bzl
  etcd-server              # etcd 3.4.23: the tests' 3-member clusters (storage/shared)
  etcd-client              # etcdctl, for looking at a test cluster by hand
  libcurl4-openssl-dev     # HTTP for the S3 object store (storage/shared)
  libssl-dev               # SHA-256 of S3 payloads (libcrypto)
)

# Services a package starts on install that the repository does not want
# running: tests start their own members on free ports (never the system one).
SERVICES=(etcd prometheus)

# Optional group (--ceph): one monitor, memstore OSDs and a RADOS gateway for
# the S3 object store's Ceph tier; about 150 MB, so not installed by default.
CEPH_PACKAGES=(
  ceph-mon                 # Ceph 16.2 monitor
  ceph-osd                 # object storage daemons (memstore backend)
  radosgw                  # the S3 gateway (RGW) and radosgw-admin
  ceph-common              # ceph CLI, ceph-authtool, monmaptool
)
if [[ $with_ceph -eq 1 ]]; then
  PACKAGES+=("${CEPH_PACKAGES[@]}")
fi

log() { printf '[setup] %s\n' "$*"; }

if [[ $check_only -eq 0 && $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo -E bash "$0" "$@"
  fi
  log "must run as root (apt-get install)"; exit 1
fi

missing=()
for package in "${PACKAGES[@]}"; do
  if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    log "present: $package"
  else
    missing+=("$package")
  fi
done

if [[ $check_only -eq 1 ]]; then
  if ((${#missing[@]} == 0)); then
    log "all ${#PACKAGES[@]} packages present"; exit 0
  fi
  log "missing: ${missing[*]}"; exit 1
fi

if ((${#missing[@]} == 0)); then
  log "all ${#PACKAGES[@]} packages present; nothing to install"
else
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Retry once: a fresh machine may still be refreshing its lists.
  apt-get update -qq || { sleep 5; apt-get update -qq; }
  apt-get install -y -qq "${missing[@]}" >/dev/null
  log "installed ${#missing[@]} packages"
fi

# Stop and disable those services, idempotently, with whatever init system the
# machine has (systemd, or sysvinit scripts in containers without systemd).
stop_service() {
  local service="$1"
  if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
    systemctl disable --now "$service" >/dev/null 2>&1 || true
  fi
  if [[ -x "/etc/init.d/$service" ]]; then
    "/etc/init.d/$service" stop >/dev/null 2>&1 || true
    if command -v update-rc.d >/dev/null 2>&1; then
      update-rc.d "$service" disable >/dev/null 2>&1 || true
    fi
  fi
}
for service in "${SERVICES[@]}"; do
  if [[ -e "/etc/init.d/$service" || -e "/lib/systemd/system/$service.service" ]]; then
    stop_service "$service"
    log "stopped and disabled service: $service"
  fi
done
# The Ceph packages enable systemd units; the tier starts its own daemons on
# loopback, so no packaged service may run (or start at boot) beside them.
if [[ $with_ceph -eq 1 ]] && command -v systemctl >/dev/null 2>&1 && \
    [[ -d /run/systemd/system ]]; then
  systemctl disable --now ceph.target ceph-mon.target ceph-osd.target \
    ceph-radosgw.target >/dev/null 2>&1 || true
  log "ceph: packaged services stopped and disabled"
fi

log "bazel: $(bazel --version 2>/dev/null || echo 'bazel-bootstrap 4.2.3') at $(command -v bazel)"
log "g++: $(g++ --version | head -1)"
log "done"
