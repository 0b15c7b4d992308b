import NIOCore

/// `/gzip`, `/deflate`, `/brotli`, `/zstd`, `/encoded` (stacked codings) and the compression
/// bombs `/gzip-bomb`, `/deflate-bomb`, `/brotli-bomb`, `/zstd-bomb`.
enum CompressionRoutes {
    /// Largest bomb size in MiB; 4 GiB decoded is about 4 MiB of gzip.
    static let maximumBombMebibytes = 4096
    /// Most codings `/encoded` applies.
    static let maximumStackedCodings = 8

    /// The echo document in `codings`, applied in order, with `flag: true` in it.
    ///
    /// `deflate` is zlib-wrapped deflate (RFC 1950), which is what `Content-Encoding: deflate`
    /// means. Query parameters: `padding=N` adds N characters to the document (a body decoding
    /// past one output chunk); `truncate=N` drops the last N encoded bytes, `trailing=TEXT`
    /// appends bytes after the stream, and `encoding=NAME` names the coding differently in
    /// `Content-Encoding` (case, a list, an unknown coding).
    static func encoded(_ request: TestRequest, _ codings: [ResponseCoding], flag: String) -> ResponsePlan {
        if let missing = codings.first(where: { !$0.isAvailable }) {
            return .response(.error(.notImplemented, "no \(missing.rawValue) encoder in this process"))
        }
        var fields: [String: JSONValue] = [
            flag: .bool(true),
            "method": .string(request.reportedMethod),
            "headers": request.headersJSON,
        ]
        if let padding = request.queryValue("padding").flatMap(Int.init), (0...16_000_000).contains(padding) {
            // Counting numbers: text that compresses about as much as real documents do.
            var text = ""
            var number = 0
            while text.utf8.count < padding {
                text += String(number * 7919 % 1_000_003) + " "
                number += 1
            }
            fields["padding"] = .string(text)
        }
        do {
            var body = ByteBuffer(string: JSONValue.object(fields).serialized)
            for coding in codings {
                body = try coding.makeCompressor().compressWhole(body)
            }
            if let truncate = request.queryValue("truncate").flatMap(Int.init), truncate > 0 {
                body = body.getSlice(at: body.readerIndex, length: max(0, body.readableBytes - truncate)) ?? ByteBuffer()
            }
            if let trailing = request.queryValue("trailing") { body.writeString(trailing) }
            let contentEncoding = request.queryValue("encoding") ?? codings.map(\.rawValue).joined(separator: ", ")
            return .response(
                TestResponse(headers: ["Content-Type": "application/json", "Content-Encoding": contentEncoding], body: body)
            )
        } catch {
            return .response(.error(.internalServerError, "compression failed: \(error)"))
        }
    }

    /// `/encoded?codings=gzip,br`: the echo document with each coding applied in the order
    /// listed, and `Content-Encoding` listing them in that order (RFC 9110, section 8.4). The
    /// document says `"codings": "gzip,br"`. The other parameters are `encoded(_:_:flag:)`'s.
    static func stacked(_ request: TestRequest) -> ResponsePlan {
        let names = (request.queryValue("codings") ?? "").split(separator: ",")
        let codings = names.compactMap { ResponseCoding(token: $0) }
        guard !codings.isEmpty, codings.count == names.count, codings.count <= maximumStackedCodings else {
            let known = ResponseCoding.allCases.map(\.rawValue).joined(separator: ", ")
            return .response(.error(.badRequest, "codings must list 1...\(maximumStackedCodings) of \(known)"))
        }
        return encoded(request, codings, flag: "stacked")
    }

    /// A body in `coding` that decodes to `size` MiB of zeros (1024 by default); for zstd,
    /// `window_log=N` sets the window the frame declares.
    static func bomb(_ request: TestRequest, _ coding: ResponseCoding) -> ResponsePlan {
        guard coding.isAvailable else {
            return .response(.error(.notImplemented, "no \(coding.rawValue) encoder in this process"))
        }
        var size = 1024
        if let text = request.queryValue("size") {
            guard let parsed = Int(text), (0...maximumBombMebibytes).contains(parsed) else {
                return .response(.error(.badRequest, "size must be 0...\(maximumBombMebibytes) MiB"))
            }
            size = parsed
        }
        var windowLog = 0
        if let text = request.queryValue("window_log") {
            guard coding == .zstd, let parsed = Int(text), (10...30).contains(parsed) else {
                return .response(.error(.badRequest, "window_log is 10...30, for zstd only"))
            }
            windowLog = parsed
        }
        return .compressionBomb(CompressionBomb(coding: coding, mebibytes: size, windowLog: windowLog))
    }
}
