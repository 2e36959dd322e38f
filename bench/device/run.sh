#!/bin/bash
# bench:retrieve at 1M on a bare 16-core machine, from the bundle bench/device/pack.sh makes:
# PostgreSQL 15 + pgvector 0.8.0 (this project's Debian build) and node 20, both carried. Runs as
# root, from the repository root with .devbundle/ beside it; the server runs as nobody.
# One load (HNSW builds with 15 workers), then three timings of the same questions:
#   A  shared_buffers 128MB (the server default), ANN modes shuffled per question
#   B  shared_buffers 16GB with the hot relations prewarmed, one mode at a time (BENCH_ORDER=blocks)
#   C  as B, shuffled per question
# fsync is off: it speeds the load and no timed statement writes. Results: $OUT/{run.log,a,b,c.json}.
# Knobs: TIER (1m) QUESTIONS (100) EF (stage-1 factors) BUILD_MEM (8GB); PORT, PGDATA_DIR and
# SKIP_INSTALL=1 to try it on a machine that has PostgreSQL 15 and node already.
set -u
T0=$(date +%s); el(){ echo $(( $(date +%s)-T0 )); }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/run.log) 2>&1
echo "== machine"; nproc; free -g | head -2; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|MHz' ; df -h / /tmp | tail -2; cat /etc/os-release | head -2
if [ -z "${SKIP_INSTALL:-}" ]; then
mkdir -p /opt/node/bin && xz -dc .devbundle/node.xz > /opt/node/bin/node && chmod +x /opt/node/bin/node
mkdir -p /tmp/x && tar -C /tmp/x -xJf .devbundle/pg.tar.xz && cp -a /tmp/x/usr/lib/postgresql /usr/lib/ && mkdir -p /usr/share/postgresql && cp -a /tmp/x/usr/share/postgresql/15 /usr/share/postgresql/ && cp -a /tmp/x/opt/dhrlibs /opt/
[ -e /usr/share/zoneinfo/UTC ] || { mkdir -p /usr/share/zoneinfo; cp -a /tmp/x/opt/zoneinfo/* /usr/share/zoneinfo/; }
fi
/opt/node/bin/node --version 2>/dev/null || node --version
PGBIN=/usr/lib/postgresql/15/bin; L=/opt/dhrlibs
PGDATA=${PGDATA_DIR:-/pgdata}; mkdir -p $PGDATA; chown nobody $PGDATA; chmod 700 $PGDATA
pgu(){ runuser -u nobody -- env LD_LIBRARY_PATH=$L "$@"; }
pgu $PGBIN/initdb -D $PGDATA -U postgres --auth=trust -E UTF8 --locale=C >/dev/null || { echo initdb failed; exit 1; }
cat >> $PGDATA/postgresql.conf <<CONF
listen_addresses='127.0.0.1'
port=${PORT:-5432}
unix_socket_directories='/tmp'
timezone='UTC'
log_timezone='UTC'
fsync=off
synchronous_commit=off
full_page_writes=off
max_wal_size='32GB'
max_worker_processes=24
max_parallel_workers=16
max_parallel_maintenance_workers=15
CONF
pgu $PGBIN/pg_ctl -D $PGDATA -l /tmp/pg.log -w start || { cat /tmp/pg.log; exit 1; }
df -h /dev/shm | tail -1; [ -z "${SKIP_INSTALL:-}" ] && mount -o remount,size=48G /dev/shm 2>&1; df -h /dev/shm | tail -1
echo "setup done at $(el) s"
export DATABASE_URL=postgresql://postgres@127.0.0.1:${PORT:-5432}/postgres PATH=/opt/node/bin:$PATH
common="BENCH_TIER=${TIER:-1m} BENCH_QUESTIONS=${QUESTIONS:-100} BENCH_BUILD_WORKERS=15 BENCH_BUILD_MEMORY=${BUILD_MEM:-8GB} BENCH_EF_FACTORS=${EF:-1,1.5,2,3,4} BENCH_STAGE1_EXPERIMENT=1"
echo "== run A: shared_buffers default (128MB), shuffled ($(el) s)"
env $common BENCH_JSON=$OUT/a.json ${A_ENV:-} timeout $(( ${A_LIMIT:-420} )) node .devbundle/bench.cjs
echo "run A done at $(el) s"
if [ $(el) -lt ${B_START_BEFORE:-430} ]; then
  echo "== run B: shared_buffers 16GB, prewarm, blocks ($(el) s)"
  echo "shared_buffers='16GB'" >> $PGDATA/postgresql.conf
  pgu $PGBIN/pg_ctl -D $PGDATA -l /tmp/pg.log -w restart >/dev/null
  env $common BENCH_PREWARM=1 BENCH_ORDER=blocks BENCH_JSON=$OUT/b.json ${B_ENV:-} timeout $(( 585 - $(el) )) node .devbundle/bench.cjs
  echo "run B done at $(el) s"
  if [ $(el) -lt 470 ]; then echo "== run C: shared_buffers 16GB, prewarm, shuffled"; env $common BENCH_PREWARM=1 BENCH_JSON=$OUT/c.json timeout $(( 590 - $(el) )) node .devbundle/bench.cjs; echo "run C done at $(el) s"; fi
fi
tail -5 /tmp/pg.log
pgu $PGBIN/pg_ctl -D $PGDATA -m fast stop >/dev/null
