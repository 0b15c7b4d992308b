/// What the `/websocket/echo` endpoint does, from its query:
/// - `messages=N`: sends "message 1" ... "message N" (text) once connected;
/// - `oversized=B`: sends one binary message of B bytes once connected;
/// - `flood=N` with `flood-size=B` (default 64 KiB): sends N binary messages of B bytes (at least
///   8), the first 8 bytes of each its number from 1 (big-endian), as fast as the channel takes
///   them: it writes while the channel is writable and goes on when it is writable again, so a
///   client that stops reading makes the server wait; `LupineTestServer.webSocketFlood` counts
///   the messages written and the times the server had to wait;
/// - `send-header=NAME`: first sends the value of request header NAME (empty if absent);
/// - `fragments=K`: every message the server sends is split into K frames (default 1);
/// - `close-after=N`: after sending N messages, closes with `close-code` (default 1000) and
///   `reason` (default none); `close-after=0` closes at once;
/// - `drop-after=N`: after sending N messages, drops the TCP connection without a close frame;
/// - `ignore-pings=1`: never answers pings (a server that is gone without a FIN);
/// - `require-bearer=TOKEN`: refuses the upgrade (401) without `Authorization: Bearer TOKEN`.
/// Every message received is echoed with its kind (text or binary), reassembled first, except the
/// text "ping-count", answered with "pings: N" (the pings received so far).
struct WebSocketBehaviour: Sendable {
    var greetingHeader: String?
    var greetingCount = 0
    var oversizedBytes = 0
    var floodCount = 0
    var floodMessageSize = 64 << 10
    var fragments = 1
    var closeAfter: Int?
    var closeCode: UInt16 = 1000
    var closeReason = ""
    var dropAfter: Int?
    var ignoresPings = false
    var requiredBearer: String?

    init(_ request: TestRequest) {
        greetingHeader = request.queryValue("send-header")
        greetingCount = min(Int(request.queryValue("messages") ?? "") ?? 0, 10_000)
        oversizedBytes = min(Int(request.queryValue("oversized") ?? "") ?? 0, 64 << 20)
        floodCount = max(0, min(Int(request.queryValue("flood") ?? "") ?? 0, 1_000_000))
        floodMessageSize = max(8, min(Int(request.queryValue("flood-size") ?? "") ?? 64 << 10, 16 << 20))
        fragments = max(1, min(Int(request.queryValue("fragments") ?? "") ?? 1, 1_000))
        closeAfter = request.queryValue("close-after").flatMap { Int($0) }
        closeCode = request.queryValue("close-code").flatMap { UInt16($0) } ?? 1000
        closeReason = request.queryValue("reason") ?? ""
        dropAfter = request.queryValue("drop-after").flatMap { Int($0) }
        ignoresPings = request.queryValue("ignore-pings") == "1"
        requiredBearer = request.queryValue("require-bearer")
    }

    /// Whether `request` may upgrade: the bearer token, when one is required, must match.
    func allowsUpgrade(_ request: TestRequest) -> Bool {
        guard let requiredBearer else { return true }
        return request.header("authorization") == "Bearer \(requiredBearer)"
    }
}
