#!/usr/bin/env bash
# Sends [operations] (default 1,000,000) mixed operations over every path (plain, TLS with a pinned
# certificate, HTTP/2, HTTP proxy, CONNECT, SOCKS5, WebSocket, server-sent events, resumed
# downloads, faults, cancellations) against `lupine serve` and its TLS servers and proxies running
# in their own process, printing resident memory, open descriptors, errors and the rate every
# 100,000; exits non-zero on memory growth after the warm-up, a leaked descriptor, an operation
# that ended otherwise than expected, or a crash.
#
#   Scripts/soak.sh [requests] [extra lupine soak options...]     (release build in .build-release)
#
# With LUPINE_TSAN=1 both processes are built with ThreadSanitizer (in .build-tsan; see
# Package.swift for why that build needs the variable) and each writes its reports to
# $TSAN_LOG.<pid> (default .build-tsan/tsan.<pid>); any report fails the run. Reports in the
# Swift runtime that are not races are suppressed by Scripts/tsan-suppressions.txt, which says why.
# Memory growth is left to the plain soak: TSan's own shadow memory and history grow with the run.
set -euo pipefail
cd "$(dirname "$0")/.."
requests="${1:-1000000}"
shift || true
scratch="${SCRATCH_PATH:-.build-release}"
sanitize=()
limits=()
if [ "${LUPINE_TSAN:-}" = 1 ]; then
    scratch="${SCRATCH_PATH:-.build-tsan}"
    sanitize=(--sanitize=thread)
    reports="${TSAN_LOG:-$scratch/tsan}"
    rm -f "$reports".[0-9]*
    export TSAN_OPTIONS="halt_on_error=0 log_path=$reports suppressions=$(pwd)/Scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}"
    limits=(--growth-limit 1024)
fi

swift build -c release "${sanitize[@]}" --scratch-path "$scratch" --product lupine >&2
binary="$(swift build -c release "${sanitize[@]}" --scratch-path "$scratch" --show-bin-path)/lupine"

tls=Tests/LupineTests/Resources/TLS
source Scripts/lupine-server.sh
start_lupine_server "$binary" soak --tls-certificate "$tls/chain.pem" --tls-key "$tls/leaf-key.pem"
for _ in $(seq 1 100); do
    grep -q '^socks-proxy ' "$server_output" && break
    sleep 0.1
done
field() { sed -n "s/^$1 //p" "$server_output"; }

status=0
"$binary" soak --requests "$requests" --server "$base_url" --tls-server "$(field tls)" --http2-server "$(field h2)" \
    --http-proxy "$(field http-proxy)" --socks-proxy "$(field socks-proxy)" --pin-cert "$tls/chain.pem" "${limits[@]}" "$@" || status=$?
kill -0 "$server_pid" 2>/dev/null || { echo "soak: the server process died" >&2; status=1; }
if [ "$status" -gt 128 ]; then echo "soak: lupine soak crashed (signal $((status - 128)))" >&2; fi
if [ "${LUPINE_TSAN:-}" = 1 ]; then
    found=$(cat "$reports".[0-9]* 2>/dev/null | grep -c '^WARNING: ThreadSanitizer' || true)
    echo "soak: $found ThreadSanitizer report(s) (each process's in $reports.<pid>)" >&2
    [ "$found" -eq 0 ] || status=1
fi
exit "$status"
