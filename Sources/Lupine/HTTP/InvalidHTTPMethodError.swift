/// A request method that is not an HTTP token (RFC 9110 section 9.1); Lupine refuses to send it.
struct InvalidHTTPMethodError: Error, Sendable, CustomStringConvertible {
    let method: String

    var description: String {
        "The HTTP method \(method.debugDescription) is not a valid token; nothing was sent."
    }
}
