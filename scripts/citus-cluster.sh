#!/usr/bin/env bash
# A local Citus cluster for tests and benchmarks: a coordinator and N workers (default 2), each its
# own PostgreSQL 15 cluster on its own port, all on this machine, run as user postgres (initdb
# refuses root). Nothing here touches the machine's own server on 5432.
#
#   scripts/citus-cluster.sh start [workers]   # initdb (first time), start, register workers
#   scripts/citus-cluster.sh stop              # stop every cluster (data folders stay)
#   scripts/citus-cluster.sh destroy           # stop and delete the data folders
#   scripts/citus-cluster.sh status
#   scripts/citus-cluster.sh stop-node N | start-node N   # one worker (fault tests)
#
# Env: CITUS_DIR (default /var/tmp/dhr-citus), CITUS_PORT (coordinator, default 9700; workers
# follow: 9701, 9702, ...). Databases: create them on the coordinator with
# `scripts/citus-cluster.sh createdb NAME`, which also creates them on every worker with the
# citus and vector extensions (Citus needs the extension in each node's database).
set -euo pipefail

DIR=${CITUS_DIR:-/var/tmp/dhr-citus}
PORT=${CITUS_PORT:-9700}
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
RUN_AS=postgres

as_pg() {
  if [ "$(id -un)" = "$RUN_AS" ]; then "$@"; else runuser -u "$RUN_AS" -- "$@"; fi
}
psql_at() { # port db sql
  PGOPTIONS='-c client_min_messages=warning' as_pg "$BIN/psql" -h 127.0.0.1 -p "$1" -U postgres -d "$2" -v ON_ERROR_STOP=1 -qAtc "$3"
}
workers() { cat "$DIR/workers" 2>/dev/null || echo 2; }
node_dirs() {
  echo "$DIR/n0"
  for i in $(seq 1 "$(workers)"); do echo "$DIR/n$i"; done
}

init_node() { # dir port
  local d=$1 p=$2
  if [ ! -f "$d/PG_VERSION" ]; then
    as_pg mkdir -p "$d"
    as_pg "$BIN/initdb" -D "$d" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    # Small memory: the machine is shared. max_prepared_transactions: Citus's 2PC for
    # multi-shard writes. wal_level logical: shard moves (citus_rebalance_start).
    cat >>"$d/postgresql.conf" <<EOF
port = $p
listen_addresses = '127.0.0.1'
unix_socket_directories = '$d'
shared_preload_libraries = 'citus'
shared_buffers = 128MB
max_connections = 200
max_prepared_transactions = 100
wal_level = logical
max_worker_processes = 16
citus.max_worker_nodes_tracked = 64
EOF
  fi
}

start() {
  local n=${1:-$(workers)}
  [ -f "$($BIN/pg_config --pkglibdir 2>/dev/null || /usr/lib/postgresql/15/bin/pg_config --pkglibdir)/citus.so" ] ||
    { echo "citus is not installed: run install-citus.sh (shared/scripts) as root first" >&2; exit 1; }
  if [ "$(id -u)" = 0 ]; then mkdir -p "$DIR" && chown "$RUN_AS" "$DIR"; else mkdir -p "$DIR"; fi
  as_pg sh -c "echo $n > '$DIR/workers'"
  local i=0
  for d in $(node_dirs); do
    init_node "$d" $((PORT + i))
    if ! as_pg "$BIN/pg_ctl" -D "$d" status >/dev/null 2>&1; then
      as_pg "$BIN/pg_ctl" -D "$d" -l "$d/log" -w -t 60 start >/dev/null
    fi
    i=$((i + 1))
  done
  # Register the workers once (citus_add_node is idempotent for a known node).
  psql_at "$PORT" postgres "CREATE EXTENSION IF NOT EXISTS citus"
  for i in $(seq 1 "$n"); do psql_at $((PORT + i)) postgres "CREATE EXTENSION IF NOT EXISTS citus"; done
  psql_at "$PORT" postgres "SELECT citus_set_coordinator_host('127.0.0.1', $PORT)" >/dev/null
  for i in $(seq 1 "$n"); do
    psql_at "$PORT" postgres "SELECT citus_add_node('127.0.0.1', $((PORT + i)))" >/dev/null
  done
  echo "citus: coordinator 127.0.0.1:$PORT, $n workers (ports $((PORT + 1))-$((PORT + n))), data in $DIR"
}

createdb() { # name: on every node, with citus + vector, then the workers registered in it
  local db=$1 n
  n=$(workers)
  for i in $(seq 0 "$n"); do
    psql_at $((PORT + i)) postgres "CREATE DATABASE $db"
    psql_at $((PORT + i)) "$db" "CREATE EXTENSION citus; CREATE EXTENSION vector"
  done
  psql_at "$PORT" "$db" "SELECT citus_set_coordinator_host('127.0.0.1', $PORT)" >/dev/null
  for i in $(seq 1 "$n"); do psql_at "$PORT" "$db" "SELECT citus_add_node('127.0.0.1', $((PORT + i)))" >/dev/null; done
  echo "postgresql://postgres@127.0.0.1:$PORT/$db"
}

dropdb() {
  local db=$1
  for i in $(seq 0 "$(workers)"); do psql_at $((PORT + i)) postgres "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true; done
}

stop() {
  for d in $(node_dirs); do
    if [ -f "$d/PG_VERSION" ] && as_pg "$BIN/pg_ctl" -D "$d" status >/dev/null 2>&1; then
      as_pg "$BIN/pg_ctl" -D "$d" -m fast -w stop >/dev/null
    fi
  done
  echo "citus: stopped"
}

node() { # stop|start N: one node (0 = coordinator), for fault tests
  local d="$DIR/n$2"
  if [ "$1" = stop ]; then as_pg "$BIN/pg_ctl" -D "$d" -m immediate -w stop >/dev/null
  else as_pg "$BIN/pg_ctl" -D "$d" -l "$d/log" -w -t 60 start >/dev/null; fi
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop ;;
  destroy) stop; rm -rf "$DIR" ;;
  createdb) createdb "$2" ;;
  dropdb) dropdb "$2" ;;
  stop-node) node stop "$2" ;;
  start-node) node start "$2" ;;
  status) for d in $(node_dirs); do as_pg "$BIN/pg_ctl" -D "$d" status | head -1 || true; done ;;
  *) echo "usage: $0 start [workers] | stop | destroy | createdb NAME | dropdb NAME | status | stop-node N | start-node N" >&2; exit 2 ;;
esac
