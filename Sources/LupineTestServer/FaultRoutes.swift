import NIOCore
import NIOHTTP1

/// `/fault/...`: endpoints that break HTTP on purpose so clients' error paths can be tested.
enum FaultRoutes {
    static let maximumOversizedKiB = 16 * 1024
    private static let chunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n\r\n"

    static func plan(_ request: TestRequest, name: String) -> ResponsePlan {
        switch name {
        case "stall":
            return .fault(.stall)
        case "stall-body":
            return truncated(request, then: .stall)
        case "close-mid-body":
            return truncated(request, then: .closeConnection)
        case "reset":
            return .fault(.reset)
        case "malformed-status":
            return .fault(.rawBytesThenClose(ByteBuffer(string: "HTTP/1.1 abc Bogus\r\nContent-Length: 0\r\n\r\n")))
        case "short-status":
            // A status code of one digit, which SwiftNIO's parser accepts.
            return .fault(.rawBytesThenClose(ByteBuffer(string: "HTTP/1.1 2 Short\r\nContent-Length: 2\r\n\r\nok")))
        case "garbage":
            return .fault(.rawBytesThenClose(ByteBuffer(string: "\u{0}\u{1}garbage\r\n\r\n")))
        case "oversized-headers":
            return oversizedHeaders(request)
        case "wrong-content-length":
            return .fault(.truncatedBody(declaredLength: 100, sentLength: 10, then: .closeConnection))
        case "extra-bytes":
            // Content-Length 5, then a whole second response the client never asked for.
            return .fault(.rawBytesThenStall(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
                + "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled")))
        case "truncated-chunk":
            // A chunk announcing 0x64 = 100 bytes, 10 sent, then the connection closes.
            return .fault(.rawBytesThenClose(ByteBuffer(string: chunkedHead + "64\r\n0123456789")))
        case "bad-chunk-size":
            return .fault(.rawBytesThenStall(ByteBuffer(string: chunkedHead + "zz\r\nhello\r\n0\r\n\r\n")))
        case "endless-headers":
            return .fault(.rawEndless(head: ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"),
                                      chunk: ByteBuffer(string: "X-Endless: " + String(repeating: "a", count: 1000) + "\r\n")))
        case "endless-chunked":
            // Chunks of 0x10000 = 64 KiB, never a last chunk.
            var chunk = ByteBuffer(string: "10000\r\n")
            chunk.writeRepeatingByte(UInt8(ascii: "x"), count: 0x10000)
            chunk.writeString("\r\n")
            return .fault(.rawEndless(head: ByteBuffer(string: chunkedHead), chunk: chunk))
        case "informational":
            return informational(request)
        case "trailers":
            // A body without a length, then trailer fields (chunked on HTTP/1.1, a last HEADERS
            // frame on HTTP/2), as gRPC and some CDNs send them.
            return .trailers(.text("ok\n", contentType: "text/plain"),
                             trailers: ["X-Checksum": "sha256=4d4b4c", "X-Served-By": "lupine"])
        case "dribble-head":
            // A whole response, head included, one byte at a time: alive, yet never quiet for long.
            guard let milliseconds = Int(request.queryValue("interval-ms") ?? "40"), (1...1000).contains(milliseconds) else {
                return .response(.error(.badRequest, "interval-ms must be 1...1000"))
            }
            let response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"
            return .fault(.dribble(ByteBuffer(string: response), every: .milliseconds(Int64(milliseconds))))
        case "drop-next":
            // ConnectionHandler closes this connection, without a byte, on its next request.
            return .response(.text("ok\n", contentType: "text/plain"))
        case "redirect-loop":
            return .response(.empty(.found, headers: ["Location": "/fault/redirect-loop"]))
        default:
            return .response(.error(.notFound, "not found"))
        }
    }

    /// `count` interim responses with status `code` (default one 103 Early Hints with a `Link`
    /// field, as CDNs send them), then a 200 with the body `ok`.
    private static func informational(_ request: TestRequest) -> ResponsePlan {
        guard let code = Int(request.queryValue("code") ?? "103"), (100...199).contains(code), code != 101,
              let count = Int(request.queryValue("count") ?? "1"), (1...10).contains(count) else {
            return .response(.error(.badRequest, "code must be 100...199 but not 101, count 1...10"))
        }
        let interim = TestResponse(status: HTTPResponseStatus(statusCode: code),
                                   headers: ["Link": "</style.css>; rel=preload; as=style"])
        return .interim(Array(repeating: interim, count: count), then: .response(.text("ok\n", contentType: "text/plain")))
    }

    /// A head announcing twice `bytes` (default 1024) followed by only `bytes` of body.
    private static func truncated(_ request: TestRequest, then ending: StreamEnding) -> ResponsePlan {
        var count: UInt64 = 1024
        if let text = request.queryValue("bytes") {
            guard let parsed = UInt64(text), parsed <= StreamingRoutes.maximumByteCount else {
                return .response(.error(.badRequest, "bytes must be 0...\(StreamingRoutes.maximumByteCount)"))
            }
            count = parsed
        }
        return .fault(.truncatedBody(declaredLength: count * 2, sentLength: count, then: ending))
    }

    private static func oversizedHeaders(_ request: TestRequest) -> ResponsePlan {
        var kibibytes = 256
        if let text = request.queryValue("kb") {
            guard let parsed = Int(text), (0...maximumOversizedKiB).contains(parsed) else {
                return .response(.error(.badRequest, "kb must be 0...\(maximumOversizedKiB)"))
            }
            kibibytes = parsed
        }
        var response = TestResponse.text("ok\n", contentType: "text/plain")
        response.headers.add(name: "X-Big", value: String(repeating: "a", count: kibibytes * 1024))
        return .response(response)
    }
}
