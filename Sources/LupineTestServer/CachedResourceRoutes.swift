import NIOHTTP1
import Synchronization

/// `/cached/KEY?Header=value...`: a resource for HTTP cache tests. Every query pair becomes a
/// response header (as `/response-headers`), so a test chooses `Cache-Control`, `Expires`, `ETag`,
/// `Last-Modified` and `Vary`. Each test uses its own KEY, and the server's hit counter tells how
/// often the path was really requested.
///
/// A request whose `If-None-Match` names the configured `ETag`, or whose `If-Modified-Since`
/// equals the configured `Last-Modified`, gets a 304 with the configured headers. Every 200 body
/// is `{"serial": N, "varied": V}`: N counts the full responses the server generated (so a test
/// tells a stored body from a new one), V is the request's value of the header `Vary` names.
/// Both kinds of response carry `X-Served: 200-N` or `X-Served: 304-N`.
///
/// A request header `X-Cached-Set: Name: value` (repeatable) sets that response header for this
/// answer only, replacing the configured one: a test makes the server change its mind between
/// two requests of one URL (for instance a 304 that now says `Cache-Control: no-store`).
enum CachedResourceRoutes {
    private static let serial = Atomic<Int>(0)

    static func respond(_ request: TestRequest) -> ResponsePlan {
        for field in request.query {
            guard HeaderSyntax.isValidName(field.name), HeaderSyntax.isValidValue(field.value),
                  !HeaderSyntax.isFramingHeader(field.name) else {
                return .response(.error(.badRequest, "invalid header \(field.name)"))
            }
        }
        let number = serial.wrappingAdd(1, ordering: .relaxed).newValue
        var headers = HTTPHeaders()
        for field in request.query {
            headers.add(name: field.name, value: field.value)
        }
        for override in request.head.headers["x-cached-set"] {
            guard let colon = override.firstIndex(of: ":") else { continue }
            let name = override[..<colon].trimmingCharacters(in: " ")
            let value = override[override.index(after: colon)...].trimmingCharacters(in: " ")
            guard HeaderSyntax.isValidName(String(name)), HeaderSyntax.isValidValue(String(value)),
                  !HeaderSyntax.isFramingHeader(String(name)) else { continue }
            headers.replaceOrAdd(name: String(name), value: String(value))
        }
        if isNotModified(request, configured: headers) {
            headers.add(name: "X-Served", value: "304-\(number)")
            return .response(.empty(.notModified, headers: headers))
        }
        let varyName = headers.first(name: "vary")
        let varied = varyName.flatMap { request.header($0.lowercased()) }
        var response = TestResponse.json(.object([
            "serial": .number(String(number)),
            "varied": varied.map(JSONValue.string) ?? .null,
        ]))
        response.headers.add(contentsOf: headers)
        response.headers.add(name: "X-Served", value: "200-\(number)")
        return .response(response)
    }

    private static func isNotModified(_ request: TestRequest, configured: HTTPHeaders) -> Bool {
        if let etag = configured.first(name: "etag"), let ifNoneMatch = request.header("if-none-match") {
            return ifNoneMatch.split(separator: ",").contains { $0.trimmingCharacters(in: " ") == etag || $0 == "*" }
        }
        if let lastModified = configured.first(name: "last-modified"), let since = request.header("if-modified-since") {
            return since == lastModified
        }
        return false
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> Substring {
        var value = self.drop { $0 == set }
        while value.last == set { value = value.dropLast() }
        return value
    }
}
