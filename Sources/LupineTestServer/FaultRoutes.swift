import NIOCore

/// `/fault/...`: endpoints that break HTTP on purpose so clients' error paths can be tested.
enum FaultRoutes {
    static let maximumOversizedKiB = 16 * 1024

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
        case "garbage":
            return .fault(.rawBytesThenClose(ByteBuffer(string: "\u{0}\u{1}garbage\r\n\r\n")))
        case "oversized-headers":
            return oversizedHeaders(request)
        case "wrong-content-length":
            return .fault(.truncatedBody(declaredLength: 100, sentLength: 10, then: .closeConnection))
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
