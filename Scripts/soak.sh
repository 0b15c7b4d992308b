#!/usr/bin/env bash
# Sends [requests] (default 1,000,000) mixed requests through one Session against `lupine serve`
# running in its own process, printing resident memory, open descriptors, errors and the rate
# every 100,000; exits non-zero on memory growth after the warm-up, a leaked descriptor, a request
# that ended otherwise than expected, or a crash.
#
#   Scripts/soak.sh [requests] [extra lupine soak options...]     (release build in .build-release)
set -euo pipefail
cd "$(dirname "$0")/.."
requests="${1:-1000000}"
shift || true
scratch="${SCRATCH_PATH:-.build-release}"

swift build -c release --scratch-path "$scratch" --product lupine >&2
binary="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/lupine"

server_output="$(mktemp)"
"$binary" serve --port 0 >"$server_output" 2>/dev/null &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; rm -f "$server_output"' EXIT

for _ in $(seq 1 100); do
    [ -s "$server_output" ] && break
    sleep 0.1
done
base_url="$(head -n 1 "$server_output")"
[ -n "$base_url" ] || { echo "soak: lupine serve did not start" >&2; exit 1; }

status=0
"$binary" soak --requests "$requests" --server "$base_url" "$@" || status=$?
kill -0 "$server_pid" 2>/dev/null || { echo "soak: the server process died" >&2; status=1; }
if [ "$status" -gt 128 ]; then echo "soak: lupine soak crashed (signal $((status - 128)))" >&2; fi
exit "$status"
