/// What LupineTestServer's echo endpoints (`/get`, `/post`, `/gzip`...) say they received.
struct ServerEcho: Decodable, Sendable {
    /// The method the server saw.
    let method: String
    /// The request headers, by the name the client spelled.
    let headers: [String: String]
    /// The query parameters (`/get`, `/post`...).
    let args: [String: String]?
    /// The form body's fields (`/post`...).
    let form: [String: String]?
    /// Whether the server gzipped this document (`/gzip`).
    let gzipped: Bool?

    /// The value of the request header `name`, looked up case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}
