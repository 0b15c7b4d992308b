import NIOCore
import NIOHTTP1

/// The httpbin echo endpoints (`/get`, `/post`, `/anything`, ...) and the echo body others reuse.
enum EchoRoutes {
    private static let binaryDataPrefix = "data:application/octet-stream;base64,"

    /// Echoes the request if its method is in `methods` (any method when nil), else 405.
    static func echo(_ request: TestRequest, allowing methods: [HTTPMethod]?) -> ResponsePlan {
        if let methods, !methods.contains(request.method) {
            var response = TestResponse.error(.methodNotAllowed, "method not allowed")
            response.headers.add(name: "Allow", value: methods.map(\.rawValue).joined(separator: ", "))
            return .response(response)
        }
        return .response(.json(body(for: request)))
    }

    /// The httpbin echo object: args, headers, method, url, origin, data, form, json and files.
    static func body(for request: TestRequest) -> JSONValue {
        let bytes = Array(request.body.readableBytesView)
        let text = String(validating: bytes, as: UTF8.self)
        let data = text ?? binaryDataPrefix + Base64.encode(bytes)
        let contentType = request.header("content-type")?.lowercased() ?? ""
        let form: [FormField]
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            form = FormCoding.parse(Substring(String(decoding: bytes, as: UTF8.self)))
        } else {
            form = []
        }
        let json = bytes.isEmpty ? JSONValue.null : (JSONParser.parse(bytes) ?? .null)
        return .object([
            "args": .grouping(request.query),
            "headers": request.headersJSON,
            "method": .string(request.reportedMethod),
            "url": .string(request.url),
            "origin": .string("127.0.0.1"),
            "data": .string(data),
            "form": .grouping(form),
            "json": json,
            "files": .object([:]),
        ])
    }
}
