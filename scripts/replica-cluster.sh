#!/usr/bin/env bash
# A throw-away streaming-replication pair for the replica tests (npm run test:replica):
#   scripts/replica-cluster.sh start   # primary on 9710, standby (pg_basebackup -R) on 9711
#   scripts/replica-cluster.sh stop    # stops both and deletes their data
#   scripts/replica-cluster.sh stop-standby|start-standby   # the replica tests' outage
# Prints the two URLs (REPLICA_PRIMARY_URL=…, REPLICA_STANDBY_URL=…) on start. Uses the machine's
# PostgreSQL 15 binaries (PG_BIN_DIR) with pgvector; never touches the server on 5432. initdb refuses
# to run as root, so as root everything runs as the postgres user.
set -euo pipefail

BIN=${PG_BIN_DIR:-/usr/lib/postgresql/15/bin}
ROOT=${REPLICA_CLUSTER_DIR:-/var/tmp/dhr-replica-cluster}
PRIMARY_PORT=${REPLICA_PRIMARY_PORT:-9710}
STANDBY_PORT=${REPLICA_STANDBY_PORT:-9711}
DB=replica_test

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

ctl() { # ctl <data dir> <pg_ctl args…>
  as_pg "$BIN/pg_ctl" -D "$1" -l "$1.log" -w -t 60 "${@:2}"
}

start() {
  if [ -d "$ROOT" ]; then
    echo "replica-cluster: $ROOT exists (a cluster already running?); run '$0 stop' first" >&2
    exit 1
  fi
  mkdir -p "$ROOT"
  [ "$(id -u)" = 0 ] && chown postgres: "$ROOT"
  as_pg "$BIN/initdb" -D "$ROOT/primary" -A trust -U postgres --no-sync -E UTF8 --locale C >/dev/null
  # Small and fast: a test cluster, not a durable one. wal_level replica is the default; stated
  # because replication depends on it.
  cat >>"$ROOT/primary/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PRIMARY_PORT
unix_socket_directories = '$ROOT'
wal_level = replica
max_wal_senders = 4
shared_buffers = 32MB
fsync = off
full_page_writes = off
EOF
  echo "host replication postgres 127.0.0.1/32 trust" >>"$ROOT/primary/pg_hba.conf"
  ctl "$ROOT/primary" start >/dev/null
  as_pg "$BIN/psql" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qc "CREATE DATABASE $DB"
  as_pg "$BIN/psql" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -d "$DB" -v ON_ERROR_STOP=1 -qc "CREATE EXTENSION vector"
  # -R writes standby.signal and primary_conninfo: the copy starts as a streaming standby.
  as_pg "$BIN/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -D "$ROOT/standby" -R -X stream --checkpoint=fast --no-sync
  cat >>"$ROOT/standby/postgresql.conf" <<EOF
port = $STANDBY_PORT
hot_standby = on
EOF
  ctl "$ROOT/standby" start >/dev/null
  # The standby answers once it is consistent; it must be streaming, not merely running.
  for _ in $(seq 1 100); do
    state=$(as_pg "$BIN/psql" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -d postgres -Atc "SELECT state FROM pg_stat_replication" 2>/dev/null || true)
    [ "$state" = streaming ] && break
    sleep 0.1
  done
  if [ "${state:-}" != streaming ]; then
    echo "replica-cluster: the standby did not start streaming (logs: $ROOT/*.log)" >&2
    exit 1
  fi
  echo "REPLICA_PRIMARY_URL=postgresql://postgres@127.0.0.1:$PRIMARY_PORT/$DB"
  echo "REPLICA_STANDBY_URL=postgresql://postgres@127.0.0.1:$STANDBY_PORT/$DB"
}

stop() {
  for node in standby primary; do
    if [ -f "$ROOT/$node/postmaster.pid" ]; then ctl "$ROOT/$node" -m immediate stop >/dev/null || true; fi
  done
  rm -rf "$ROOT"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  stop-standby) ctl "$ROOT/standby" -m fast stop >/dev/null ;;
  start-standby) ctl "$ROOT/standby" start >/dev/null ;;
  *)
    echo "usage: $0 start|stop|stop-standby|start-standby" >&2
    exit 2
    ;;
esac
