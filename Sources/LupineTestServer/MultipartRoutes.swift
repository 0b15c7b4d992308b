import Crypto
import NIOCore

/// `/multipart` (and `/multipart/<anything>`): parses a `multipart/form-data` body and echoes its parts.
///
/// Answers `{"parts": [{"name", "filename", "contentType", "size", "sha256", "text"}]}`, where
/// `text` is the part's body when it is valid UTF-8 of at most 1 KiB (null otherwise), and `400`
/// when the Content-Type has no boundary or the body is not well-formed multipart.
enum MultipartRoutes {
    static func echo(_ request: TestRequest) -> ResponsePlan {
        guard let boundary = request.header("content-type").flatMap(MultipartParser.boundary(ofContentType:)) else {
            return .response(.error(.badRequest, "expected multipart/form-data with a boundary"))
        }
        guard let parts = MultipartParser.parse(Array(request.body.readableBytesView), boundary: boundary) else {
            return .response(.error(.badRequest, "malformed multipart body"))
        }
        return .response(.json(.object(["parts": .array(parts.map(describe))])))
    }

    private static func describe(_ part: MultipartParser.Part) -> JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        let digest = HexDigit.lowercase(SHA256.hash(data: part.body))
        let text = part.body.count <= 1024 ? String(validating: part.body, as: UTF8.self) : nil
        return .object([
            "name": optional(part.dispositionParameter("name")),
            "filename": optional(part.dispositionParameter("filename")),
            "contentType": optional(part.header("content-type")),
            "size": .integer(part.body.count),
            "sha256": .string(digest),
            "text": optional(text),
        ])
    }
}
