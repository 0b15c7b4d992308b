import Foundation

/// One HTTP header field: a name and its value.
///
/// Names are compared case-insensitively by ``HTTPHeaders``; the value is kept exactly as given.
public struct HTTPHeader: Equatable, Hashable, Sendable {
    /// The field name, casing preserved.
    public let name: String
    /// The field value.
    public let value: String

    /// Creates a header from its name and value.
    ///
    /// - Parameters:
    ///   - name: The field name, for example `"Content-Type"`.
    ///   - value: The field value.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension HTTPHeader: CustomStringConvertible {
    /// The header as `"<name>: <value>"`.
    public var description: String {
        "\(name): \(value)"
    }
}

extension HTTPHeader {
    /// An `Accept` header.
    ///
    /// - Parameter value: The media ranges the client accepts.
    /// - Returns: The header.
    public static func accept(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept", value: value)
    }

    /// An `Accept-Charset` header.
    ///
    /// - Parameter value: The character sets the client accepts.
    /// - Returns: The header.
    public static func acceptCharset(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Charset", value: value)
    }

    /// An `Accept-Language` header.
    ///
    /// - Parameter value: The languages the client prefers.
    /// - Returns: The header.
    public static func acceptLanguage(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Language", value: value)
    }

    /// An `Accept-Encoding` header.
    ///
    /// - Parameter value: The content codings the client accepts.
    /// - Returns: The header.
    public static func acceptEncoding(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Encoding", value: value)
    }

    /// An `Authorization` header for HTTP Basic authentication.
    ///
    /// The value is `Basic ` followed by the Base64 of the UTF-8 bytes of `"username:password"`.
    ///
    /// - Parameters:
    ///   - username: The user name.
    ///   - password: The password.
    /// - Returns: The header.
    public static func authorization(username: String, password: String) -> HTTPHeader {
        let credential = Data("\(username):\(password)".utf8).base64EncodedString()
        return authorization("Basic \(credential)")
    }

    /// An `Authorization` header carrying a bearer token: `Bearer <token>`.
    ///
    /// - Parameter bearerToken: The token, sent as is.
    /// - Returns: The header.
    public static func authorization(bearerToken: String) -> HTTPHeader {
        authorization("Bearer \(bearerToken)")
    }

    /// An `Authorization` header with the given value.
    ///
    /// - Parameter value: The complete credentials, scheme included.
    /// - Returns: The header.
    public static func authorization(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Authorization", value: value)
    }

    /// A `Content-Disposition` header.
    ///
    /// - Parameter value: The disposition, for example `form-data; name="file"`.
    /// - Returns: The header.
    public static func contentDisposition(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Disposition", value: value)
    }

    /// A `Content-Encoding` header.
    ///
    /// - Parameter value: The content coding applied to the body.
    /// - Returns: The header.
    public static func contentEncoding(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Encoding", value: value)
    }

    /// A `Content-Type` header.
    ///
    /// - Parameter value: The media type of the body.
    /// - Returns: The header.
    public static func contentType(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Type", value: value)
    }

    /// A `User-Agent` header.
    ///
    /// - Parameter value: The product tokens identifying the client.
    /// - Returns: The header.
    public static func userAgent(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "User-Agent", value: value)
    }

    /// A `Sec-WebSocket-Protocol` header.
    ///
    /// - Parameter value: The WebSocket subprotocols offered.
    /// - Returns: The header.
    public static func websocketProtocol(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Sec-WebSocket-Protocol", value: value)
    }
}
