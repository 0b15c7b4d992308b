import NIOCore
import NIOHTTP1

/// `/bytes/N`, `/stream-bytes/N`, `/stream/N`, `/drip` and `/delay/N`: endpoints whose body is
/// produced over time.
enum StreamingRoutes {
    static let maximumByteCount: UInt64 = 4 << 30
    static let maximumLineCount = 10_000
    static let maximumDripBytes = 10 << 20
    static let maximumDelay = 30.0
    static let maximumDripDuration = 60.0

    static func bytes(_ request: TestRequest, count text: String) -> ResponsePlan {
        guard let count = UInt64(text), count <= maximumByteCount else {
            return .response(.error(.badRequest, "byte count must be 0...\(maximumByteCount)"))
        }
        var seed: UInt64 = 0
        if let seedText = request.queryValue("seed") {
            // Negative seeds are accepted by reinterpreting their two's-complement bits.
            guard let parsed = UInt64(seedText) ?? Int64(seedText).map(UInt64.init(bitPattern:)) else {
                return .response(.error(.badRequest, "seed must be an integer"))
            }
            seed = parsed
        }
        return RangeSupport.bytes(request, count: count, seed: seed)
    }

    /// `/stream-bytes/N?seed=S`: the bytes of `/bytes/N?seed=S`, chunked (no Content-Length) and
    /// sent under backpressure, so a slow reader slows the server instead of filling its memory.
    static func streamBytes(_ request: TestRequest, count text: String) -> ResponsePlan {
        guard let count = UInt64(text), count <= maximumByteCount else {
            return .response(.error(.badRequest, "byte count must be 0...\(maximumByteCount)"))
        }
        guard let seed = request.queryValue("seed").map({ UInt64($0) }) ?? 0 else {
            return .response(.error(.badRequest, "seed must be a non-negative integer"))
        }
        let headers: HTTPHeaders = ["Content-Type": "application/octet-stream"]
        return .byteRange(ByteRangeResponse(status: .ok, headers: headers, seed: seed, offset: 0, count: count, ending: .endResponse))
    }

    static func stream(_ request: TestRequest, count text: String) -> ResponsePlan {
        guard let requested = Int(text), requested >= 0 else {
            return .response(.error(.badRequest, "line count must be a non-negative integer"))
        }
        let lines = (0..<min(requested, maximumLineCount)).map { id in
            let line: JSONValue = .object(["id": .integer(id), "url": .string(request.url)])
            return ByteBuffer(string: line.serialized + "\n")
        }
        return .chunkedLines(lines, contentType: "application/json")
    }

    static func drip(_ request: TestRequest) -> ResponsePlan {
        guard let byteCount = integer(request.queryValue("numbytes"), default: 10, range: 0...maximumDripBytes),
            let duration = seconds(request.queryValue("duration"), default: 2, maximum: maximumDripDuration),
            let delay = seconds(request.queryValue("delay"), default: 0, maximum: maximumDelay),
            let code = integer(request.queryValue("code"), default: 200, range: 200...599)
        else {
            return .response(.error(.badRequest, "invalid numbytes, duration, delay or code"))
        }
        let drip = ResponsePlan.drip(
            DripSchedule(totalBytes: byteCount, duration: duration),
            status: HTTPResponseStatus(statusCode: code)
        )
        return delay == .zero ? drip : .delayed(delay, drip)
    }

    static func delay(_ request: TestRequest, seconds text: String) -> ResponsePlan {
        guard let delay = seconds(text, default: 0, maximum: maximumDelay) else {
            return .response(.error(.badRequest, "delay must be a non-negative number of seconds"))
        }
        return .delayed(delay, .response(.json(EchoRoutes.body(for: request))))
    }

    private static func integer(_ text: String?, default fallback: Int, range: ClosedRange<Int>) -> Int? {
        guard let text else { return fallback }
        guard let value = Int(text), range.contains(value) else { return nil }
        return value
    }

    /// Parses fractional seconds; values above `maximum` are clamped, negative or non-finite ones rejected.
    private static func seconds(_ text: String?, default fallback: Double, maximum: Double) -> TimeAmount? {
        let value: Double
        if let text {
            guard let parsed = Double(text), parsed.isFinite, parsed >= 0 else { return nil }
            value = min(parsed, maximum)
        } else {
            value = fallback
        }
        return .nanoseconds(Int64((value * 1_000_000_000).rounded()))
    }
}
