#!/usr/bin/env bash
# Measures resident memory growth of a 1 GiB download to file, a 1 GiB file upload and a 1 GiB
# stream read by a slow consumer, against `lupine serve` running in its own process.
#
#   Scripts/measure-memory.sh [MiB]        (default 1024; release build)
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-1024}"
configuration="${CONFIGURATION:-release}"
scratch="${SCRATCH_PATH:-.build}"

swift build -c "$configuration" --scratch-path "$scratch" --product lupine >&2
binary="$(swift build -c "$configuration" --scratch-path "$scratch" --show-bin-path)/lupine"

server_output="$(mktemp)"
"$binary" serve --port 0 >"$server_output" 2>/dev/null &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; rm -f "$server_output"' EXIT

for _ in $(seq 1 100); do
    [ -s "$server_output" ] && break
    sleep 0.1
done
base_url="$(head -n 1 "$server_output")"
[ -n "$base_url" ] || { echo "measure-memory: lupine serve did not start" >&2; exit 1; }

"$binary" measure-memory --mebibytes "$size" --server "$base_url"
