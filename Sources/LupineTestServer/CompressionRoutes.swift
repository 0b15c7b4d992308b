import NIOCore

/// `/gzip`, `/deflate` and `/gzip-bomb`.
enum CompressionRoutes {
    /// Largest `/gzip-bomb` size in MiB; 4 GiB inflated is about 4 MiB compressed.
    static let maximumBombMebibytes = 4096

    static func gzip(_ request: TestRequest) -> ResponsePlan {
        compressed(request, flag: "gzipped", format: .gzip, encoding: "gzip")
    }

    /// zlib-wrapped deflate (RFC 1950), which is what `Content-Encoding: deflate` means.
    static func deflate(_ request: TestRequest) -> ResponsePlan {
        compressed(request, flag: "deflated", format: .zlib, encoding: "deflate")
    }

    static func bomb(_ request: TestRequest) -> ResponsePlan {
        var size = 1024
        if let text = request.queryValue("size") {
            guard let parsed = Int(text), (0...maximumBombMebibytes).contains(parsed) else {
                return .response(.error(.badRequest, "size must be 0...\(maximumBombMebibytes) MiB"))
            }
            size = parsed
        }
        return .gzipBomb(mebibytes: size)
    }

    private static func compressed(
        _ request: TestRequest,
        flag: String,
        format: ZlibCompressor.Format,
        encoding: String
    ) -> ResponsePlan {
        // `padding=N` adds N characters to the document (a body inflating past one output chunk);
        // `truncate=N` drops the last N compressed bytes, `trailing=TEXT` appends bytes after the
        // stream, and `encoding=NAME` names the coding differently (case, a list).
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
            var body = try ZlibCompressor.compress(ByteBuffer(string: JSONValue.object(fields).serialized), format: format)
            if let truncate = request.queryValue("truncate").flatMap(Int.init), truncate > 0 {
                body = body.getSlice(at: body.readerIndex, length: max(0, body.readableBytes - truncate)) ?? ByteBuffer()
            }
            if let trailing = request.queryValue("trailing") { body.writeString(trailing) }
            return .response(
                TestResponse(
                    headers: ["Content-Type": "application/json", "Content-Encoding": request.queryValue("encoding") ?? encoding],
                    body: body
                )
            )
        } catch {
            return .response(.error(.internalServerError, "compression failed: \(error)"))
        }
    }
}
