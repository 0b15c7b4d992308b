/// The echo body of LupineTestServer's `/get`, `/post`, `/anything`... endpoints.
struct HTTPBinResponse: Decodable, Sendable {
    let args: [String: StringOrArray]
    let headers: [String: String]
    let method: String
    let url: String
    let data: String
    let form: [String: StringOrArray]
    let json: JSONValue?

    /// A header value, looked up case-insensitively.
    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// A query or form value: one string, or several for a repeated key.
enum StringOrArray: Decodable, Equatable, Sendable {
    case string(String)
    case array([String])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self = .string(string)
        } else {
            self = .array(try container.decode([String].self))
        }
    }
}

/// Any JSON value, for comparing echoed JSON bodies.
enum JSONValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }
}
