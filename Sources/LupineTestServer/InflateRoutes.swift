import NIOCore

/// `/inflate`: checks a compressed request body and echoes it decompressed.
///
/// A body sent with `Content-Encoding: deflate` must be a valid zlib stream (RFC 1950); it is
/// inflated and echoed like `/anything` does, with `"inflated": true`, the `compressedLength` as
/// received and the two header bytes in hex (`zlibHeader`). A body without that header is echoed
/// as received with `"inflated": false`. A stream that does not inflate is answered with 400.
enum InflateRoutes {
    static func inflate(_ request: TestRequest) -> ResponsePlan {
        let encoding = request.header("content-encoding")?.lowercased()
        guard encoding == "deflate" else {
            return .response(.json(merged(EchoRoutes.body(for: request), ["inflated": .bool(false)])))
        }
        let inflated: ByteBuffer
        do {
            inflated = try ZlibInflater.inflate(request.body)
        } catch {
            return .response(.error(.badRequest, "the body is not a valid zlib stream: \(error)"))
        }
        let header = HexDigit.lowercase(request.body.readableBytesView.prefix(2))
        let decoded = TestRequest(head: request.head, body: inflated, localPort: request.localPort)
        return .response(.json(merged(EchoRoutes.body(for: decoded), [
            "inflated": .bool(true),
            "compressedLength": .integer(request.body.readableBytes),
            "zlibHeader": .string(header),
        ])))
    }

    private static func merged(_ document: JSONValue, _ extra: [String: JSONValue]) -> JSONValue {
        guard case var .object(fields) = document else { return document }
        fields.merge(extra) { _, new in new }
        return .object(fields)
    }
}
