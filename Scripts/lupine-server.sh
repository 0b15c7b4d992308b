# Sourced by the measurement scripts: starts `lupine serve` on a free port in its own process.
#
#   start_lupine_server BINARY NAME [SERVE OPTIONS...]   sets server_pid and base_url (the first line
#   the server prints; server_output holds them all); the server is stopped on exit.
start_lupine_server() {
    local binary="$1" name="$2"
    shift 2
    server_output="$(mktemp)"
    "$binary" serve --port 0 "$@" >"$server_output" 2>/dev/null &
    server_pid=$!
    trap 'kill "$server_pid" 2>/dev/null || true; rm -f "$server_output"' EXIT
    for _ in $(seq 1 100); do
        [ -s "$server_output" ] && break
        sleep 0.1
    done
    base_url="$(head -n 1 "$server_output")"
    [ -n "$base_url" ] || { echo "$name: lupine serve did not start" >&2; exit 1; }
}
