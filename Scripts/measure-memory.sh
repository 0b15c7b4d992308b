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

source Scripts/lupine-server.sh
start_lupine_server "$binary" measure-memory

"$binary" measure-memory --mebibytes "$size" --server "$base_url"
