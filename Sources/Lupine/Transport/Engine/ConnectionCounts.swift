/// How many connections the engine has: open now, opened and closed since it started. Read by
/// gauges (see `ConnectionEngine.connectionCounts`).
struct ConnectionCounts: Sendable, Equatable {
    var open = 0
    var opened = 0
    var closed = 0
}
