/// How a `LupineHTTP2TestServer` treats its connections, in the ways real servers do.
public struct HTTP2ServerBehaviour: Sendable {
    /// After this many streams on a connection the server sends GOAWAY (NO_ERROR) naming the last
    /// one as the last it takes, and finishes those it took: nginx after `keepalive_requests`
    /// (1,000 by default), Hypercorn after `keep_alive_max_requests`. Nil: no limit.
    public var maximumStreamsPerConnection: Int?
    /// The SETTINGS_MAX_CONCURRENT_STREAMS the server announces (nil: SwiftNIO's 100).
    public var maximumConcurrentStreams: Int?
    /// Whether the server closes a connection it sent GOAWAY on once its last stream ended. False
    /// leaves the socket to the client, as a server (or a load balancer) that keeps it does.
    public var closesWhenDrained: Bool

    /// - Parameters:
    ///   - maximumStreamsPerConnection: Streams served on one connection before GOAWAY; nil for no limit.
    ///   - maximumConcurrentStreams: The concurrent streams announced; nil for SwiftNIO's default.
    ///   - closesWhenDrained: Close a connection that went away once its streams ended.
    public init(maximumStreamsPerConnection: Int? = nil, maximumConcurrentStreams: Int? = nil, closesWhenDrained: Bool = false) {
        self.maximumStreamsPerConnection = maximumStreamsPerConnection
        self.maximumConcurrentStreams = maximumConcurrentStreams
        self.closesWhenDrained = closesWhenDrained
    }
}
