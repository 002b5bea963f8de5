#!/usr/bin/env bash
# A throwaway Ceph cluster with an S3 gateway, on loopback, for the S3 object
# store's Ceph tier: one monitor, three memstore OSDs (data in memory, nothing
# on disk but logs), no manager, one radosgw, and a user with S3 keys.
#
#   storage/shared/testing/ceph_rgw.sh start DIR   # DIR must not exist; ~20 s
#   source DIR/env                                 # CEPH_RGW_ENDPOINT, ..._ACCESS_KEY, ..._SECRET_KEY
#   storage/shared/testing/ceph_rgw.sh stop DIR    # stops the daemons, removes DIR
#
# Ports are free loopback ports chosen at start. `stop` ends exactly the
# processes whose pid files are in DIR (TERM, then KILL after 10 s) and is
# safe to call twice or after a failed start. `start` stops what it started
# if it fails. Needs the packages of `tools/setup.sh --ceph`.
set -euo pipefail

log() { printf '[ceph_rgw] %s\n' "$*" >&2; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Waits until something accepts connections on 127.0.0.1:$1, up to $2 s.
wait_for_port() {
  local port="$1" seconds="$2" i
  for ((i = 0; i < seconds * 10; i++)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

stop_cluster() {
  local dir="$1" pid_file pid i
  [[ -d "$dir/run" ]] || { rm -rf "$dir"; return 0; }
  local pids=()
  for pid_file in "$dir"/run/*.pid; do
    [[ -f "$pid_file" ]] || continue
    pid=$(cat "$pid_file")
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
  done
  for ((i = 0; i < 100; i++)); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}

start_cluster() {
  local dir="$1"
  [[ -e "$dir" ]] && { log "$dir exists"; return 1; }
  for tool in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph-authtool ceph uuidgen; do
    command -v "$tool" >/dev/null || { log "missing $tool (tools/setup.sh --ceph)"; return 1; }
  done
  mkdir -p "$dir"/{run,log}
  local mon_port rgw_port fsid conf="$dir/ceph.conf"
  mon_port=$(free_port)
  rgw_port=$(free_port)
  fsid=$(uuidgen)
  # '$name' is Ceph's metavariable (mon.a, osd.0, client.rgw).
  cat > "$conf" <<CONF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$mon_port]
public addr = 127.0.0.1
ms bind msgr1 = false
ms bind ipv6 = false
keyring = $dir/keyring
client mount timeout = 30
rgw init timeout = 60
run dir = $dir/run
pid file = $dir/run/\$name.pid
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
osd objectstore = memstore
memstore device bytes = 536870912
osd data = $dir/\$name
mon data = $dir/\$name
osd pool default size = 3
osd pool default min size = 2
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool delete = true
# A throwaway cluster: no refusal to start on a disk under 5% free (a CI
# machine's big disk can be, with gigabytes left; the OSDs use memory).
mon data avail crit = 0
mon warn on pool no redundancy = false
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw data = $dir/client.rgw
rgw dns name = localhost
rgw thread pool size = 32
CONF
  # One keyring with every entity's key and caps; the monitor's mkfs imports
  # it, so the OSDs and the gateway need no further registration.
  local keyring="$dir/keyring" osd
  ceph-authtool --create-keyring "$keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$keyring" --gen-key -n client.admin --cap mon 'allow *' \
    --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$keyring" --gen-key -n client.rgw --cap mon 'allow rw' \
    --cap osd 'allow rwx' >/dev/null
  for osd in 0 1 2; do
    ceph-authtool "$keyring" --gen-key -n "osd.$osd" --cap mon 'allow profile osd' \
      --cap osd 'allow *' --cap mgr 'allow profile osd' >/dev/null
  done
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" \
    "$dir/monmap" >/dev/null
  ceph-mon -c "$conf" -i a --mkfs --monmap "$dir/monmap" --keyring "$keyring" >/dev/null
  ceph-mon -c "$conf" -i a
  wait_for_port "$mon_port" 30 || { log "monitor did not listen"; return 1; }
  local i uuid id
  for i in 0 1 2; do
    uuid=$(uuidgen)
    id=$(ceph -c "$conf" --connect-timeout 30 osd new "$uuid")
    mkdir -p "$dir/osd.$id"
    ceph-osd -c "$conf" -i "$id" --mkfs --osd-uuid "$uuid" >/dev/null 2>&1
    ceph-osd -c "$conf" -i "$id" >/dev/null 2>&1
  done
  mkdir -p "$dir/client.rgw"
  radosgw -c "$conf" -n client.rgw
  if ! wait_for_port "$rgw_port" 90; then
    log "radosgw did not listen on $rgw_port; its log:"
    tail -20 "$dir/log/client.rgw.log" >&2 || true
    return 1
  fi
  local access_key secret_key
  access_key="TIER$(uuidgen | tr -d - | head -c 16 | tr a-z A-Z)"
  secret_key="$(uuidgen | tr -d -)$(uuidgen | tr -d - | head -c 8)"
  radosgw-admin -c "$conf" user create --uid=tier \
    --display-name="ceph tier" --access-key="$access_key" \
    --secret-key="$secret_key" >/dev/null
  cat > "$dir/env" <<ENV
export CEPH_RGW_ENDPOINT=http://127.0.0.1:$rgw_port
export CEPH_RGW_ACCESS_KEY=$access_key
export CEPH_RGW_SECRET_KEY=$secret_key
ENV
  log "up: RGW at http://127.0.0.1:$rgw_port, monitor at 127.0.0.1:$mon_port, state in $dir"
}

case "${1:-}" in
  start)
    [[ -n "${2:-}" ]] || { log "usage: $0 start|stop DIR"; exit 2; }
    if ! start_cluster "$2"; then
      log "start failed; stopping what was started"
      # Keep the logs for the caller: copy them out of DIR first.
      [[ -d "$2/log" ]] && cp -r "$2/log" "${2%/}.failed-logs" 2>/dev/null || true
      stop_cluster "$2"
      exit 1
    fi
    ;;
  stop)
    [[ -n "${2:-}" ]] || { log "usage: $0 start|stop DIR"; exit 2; }
    stop_cluster "$2"
    ;;
  *) log "usage: $0 start|stop DIR"; exit 2 ;;
esac
