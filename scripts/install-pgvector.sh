#!/usr/bin/env bash
# Installs pgvector into the machine's PostgreSQL when it is missing.
# Debian bookworm has no pgvector package; trixie's source package builds against
# bookworm's PostgreSQL. The deb-src entry is derived from the system's own sources
# file (suite changed to trixie) and kept out of the system's apt configuration.
set -euo pipefail
PG_CONFIG=${PG_CONFIG:-$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -n 1)}
if [ -z "$PG_CONFIG" ]; then
  # No server dev tools yet: pick the newest installed server's major version.
  major=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  PG_CONFIG=/usr/lib/postgresql/$major/bin/pg_config
fi
major=$(basename "$(dirname "$(dirname "$PG_CONFIG")")")
sharedir=/usr/share/postgresql/$major/extension
if [ -f "$sharedir/vector.control" ]; then
  echo "pgvector already installed for PostgreSQL $major"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends build-essential dpkg-dev "postgresql-server-dev-$major" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial"
# Take the first deb822 stanza of the system's sources and turn it into deb-src for trixie.
awk 'BEGIN{RS=""; ORS="\n\n"} NR==1{print}' /etc/apt/sources.list.d/debian.sources \
  | sed -e 's/^Types:.*/Types: deb-src/' -e 's/^Suites:.*/Suites: trixie/' > "$work/trixie-src.sources"
mkdir -p "$work/parts"
cp "$work/trixie-src.sources" "$work/parts/"
apt_opts=(-o "Dir::Etc::sourcelist=/dev/null" -o "Dir::Etc::sourceparts=$work/parts" -o "Dir::State::Lists=$work/lists")
apt-get "${apt_opts[@]}" update -qq
cd "$work"
apt-get "${apt_opts[@]}" source --download-only pgvector
dpkg-source -x pgvector_*.dsc src >/dev/null
cd src
make -s PG_CONFIG="$PG_CONFIG" >/dev/null
make -s install PG_CONFIG="$PG_CONFIG" >/dev/null
echo "pgvector installed for PostgreSQL $major"
