import NIOCore
import NIOHTTP1

/// `/sse`: a `text/event-stream` of numbered events, resumable with `Last-Event-ID`.
///
/// Query: `count=N` events in all (default 5); the first is `from=K` (default 1), or the one after
/// the `Last-Event-ID` request header; `retry=MS` sends a `retry:` field first; `drop-after=M`
/// sends M events, then half of the next one, and drops the connection; `crlf=1` ends lines with
/// CR LF. Each event is `id: i`, `event: tick`, and two `data:` lines ("event i", "line two"),
/// and is written in two chunks split mid-line. When no event is left, the answer is 204.
enum ServerSentEventRoutes {
    static let maximumCount = 10_000

    static func events(_ request: TestRequest) -> ResponsePlan {
        let count = min(Int(request.queryValue("count") ?? "") ?? 5, maximumCount)
        let resumedAfter = request.header("last-event-id").flatMap { Int($0) }
        let first = resumedAfter.map { $0 + 1 } ?? (Int(request.queryValue("from") ?? "") ?? 1)
        guard first <= count else {
            return .response(.empty(.noContent))
        }
        let newline = request.queryValue("crlf") == "1" ? "\r\n" : "\n"
        let dropAfter = request.queryValue("drop-after").flatMap { Int($0) }
        var chunks: [ByteBuffer] = [ByteBuffer(string: ": stream of \(count) events" + newline)]
        if let retry = request.queryValue("retry").flatMap({ Int($0) }) {
            chunks.append(ByteBuffer(string: "retry: \(retry)" + newline + newline))
        }
        var sent = 0
        for id in first...count {
            let event = ["id: \(id)", "event: tick", "data: event \(id)", "data: line two", ""]
                .map { $0 + newline }.joined()
            let bytes = Array(event.utf8)
            let middle = bytes.count / 2
            if let dropAfter, sent == dropAfter {
                // Half an event, then the connection goes away.
                chunks.append(ByteBuffer(bytes: bytes[..<middle]))
                return .chunkedLines(chunks, contentType: "text/event-stream; charset=utf-8", ending: .closeConnection)
            }
            chunks.append(ByteBuffer(bytes: bytes[..<middle]))
            chunks.append(ByteBuffer(bytes: bytes[middle...]))
            sent += 1
        }
        return .chunkedLines(chunks, contentType: "text/event-stream; charset=utf-8")
    }
}
