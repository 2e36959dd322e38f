#!/usr/bin/env bash
# What a new user waits for: a fresh clone of each git ref given, `npm ci` (offline
# from npm's cache when it can), then the first and a later `npx dhr --help`, `node bin/dhr.js
# --help`, and `npm start` until it prints its URL on a store that already exists (the first
# start, which loads the demo corpus, runs before and is stopped once it prints its URL).
#   bash bench/first-start.sh <ref> [<ref>…]     e.g. bash bench/first-start.sh 5244258 cli-server
# Prints one line per measure and ref, in seconds. Clones into a temporary folder, removed after.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/dhr-first-start.XXXXXX)
trap 'rm -rf "$work"' EXIT

seconds() { local start=$1; echo "$(date +%s.%N) - $start" | bc | xargs printf '%.2f'; }

# Starts `npm start` and waits for its URL; prints the seconds; stops it (SIGINT, as Ctrl-C).
start_until_url() {
  local dir=$1 log=$2 start
  start=$(date +%s.%N)
  (cd "$dir" && exec setsid npm start >"$log" 2>&1) &
  local pid=$!
  until grep -q 'ready at' "$log"; do
    if ! kill -0 "$pid" 2>/dev/null; then echo "npm start exited: $(tail -5 "$log")" >&2; return 1; fi
    sleep 0.1
  done
  seconds "$start"
  kill -INT -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

for ref in "$@"; do
  dir="$work/$ref"
  git clone -q "$repo" "$dir"
  git -C "$dir" checkout -q "$ref"
  start=$(date +%s.%N)
  (cd "$dir" && { npm ci --offline --no-audit --no-fund >/dev/null 2>&1 || npm ci --no-audit --no-fund >/dev/null 2>&1; })
  echo "$ref npm ci: $(seconds "$start") s"
  # npx installs the checkout into npm's npx cache on its first run in a checkout (an entry per
  # path: this clone's is new), which runs its prepare script again.
  for run in first second third; do
    start=$(date +%s.%N)
    (cd "$dir" && npx dhr --help >/dev/null 2>&1)
    echo "$ref npx dhr --help ($run): $(seconds "$start") s"
  done
  start=$(date +%s.%N)
  (cd "$dir" && node bin/dhr.js --help >/dev/null)
  echo "$ref node bin/dhr.js --help: $(seconds "$start") s"
  export DATA_DIR="$dir/data" PORT=$((4600 + RANDOM % 300))
  echo "$ref npm start, first (loads the demo corpus): $(start_until_url "$dir" "$dir/first.log") s"
  for run in second third; do
    echo "$ref npm start, $run (store exists): $(start_until_url "$dir" "$dir/$run.log") s"
  done
  unset DATA_DIR PORT
done
