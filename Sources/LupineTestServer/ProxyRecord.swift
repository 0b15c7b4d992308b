/// What one client asked a `LupineTestProxy` for.
public struct ProxyRecord: Sendable, Equatable {
    /// `CONNECT` for an HTTP tunnel request, `SOCKS5` for a SOCKS connect request, else the
    /// method of a request the proxy refused.
    public let method: String
    /// The tunnel's target as `host:port`, or the request target of a refused request.
    public let target: String
    /// Header fields of an HTTP request, in order; empty for SOCKS.
    public let headerFields: [HeaderField]
    /// The status the proxy answered with: 200 for an open tunnel (SOCKS included), 407, 405...
    public let status: Int

    /// One header field.
    public struct HeaderField: Sendable, Equatable {
        public let name: String
        public let value: String
    }

    /// The first value of the header field `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headerFields.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
