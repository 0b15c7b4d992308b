import NIOCore

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
        case "drop-next":
            // ConnectionHandler closes this connection, without a byte, on its next request.
            return .response(.text("ok\n", contentType: "text/plain"))
        case "redirect-loop":
            return .response(.empty(.found, headers: ["Location": "/fault/redirect-loop"]))
        default:
            return .response(.error(.notFound, "not found"))
        }
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
