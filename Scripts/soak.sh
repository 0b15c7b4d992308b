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

source Scripts/lupine-server.sh
start_lupine_server "$binary" soak

status=0
"$binary" soak --requests "$requests" --server "$base_url" "$@" || status=$?
kill -0 "$server_pid" 2>/dev/null || { echo "soak: the server process died" >&2; status=1; }
if [ "$status" -gt 128 ]; then echo "soak: lupine soak crashed (signal $((status - 128)))" >&2; fi
exit "$status"
