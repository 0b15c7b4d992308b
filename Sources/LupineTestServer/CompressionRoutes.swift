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
        let document: JSONValue = .object([
            flag: .bool(true),
            "method": .string(request.reportedMethod),
            "headers": request.headersJSON,
        ])
        do {
            let body = try ZlibCompressor.compress(ByteBuffer(string: document.serialized), format: format)
            return .response(
                TestResponse(
                    headers: ["Content-Type": "application/json", "Content-Encoding": encoding],
                    body: body
                )
            )
        } catch {
            return .response(.error(.internalServerError, "compression failed: \(error)"))
        }
    }
}
