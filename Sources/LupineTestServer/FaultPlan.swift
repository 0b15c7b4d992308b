/// Where in an exchange a `LupineFaultServer` breaks it.
public enum FaultPhase: String, Sendable, CaseIterable {
    /// As soon as the TCP connection is made (for `.silence`: the connection is never accepted).
    case connect
    /// After the client's first TLS bytes (the ClientHello).
    case tlsHandshake
    /// While the request body is arriving.
    case requestBody
    /// Once the request is read, instead of (or in) the response head.
    case responseHead
    /// After the response head and the first bytes of the body.
    case responseBody
    /// After a WebSocket upgrade was accepted (101).
    case webSocketFrames
}

/// How a `LupineFaultServer` breaks the exchange at its phase.
public enum FaultKind: String, Sendable, CaseIterable {
    /// Nothing more is sent or read (the connection stays open until the client gives up).
    case silence
    /// The connection is reset (TCP RST).
    case reset
    /// The connection is closed (TCP FIN) without completing what the phase was sending.
    case close
    /// Bytes that are not the protocol spoken in that phase.
    case garbage
    /// An element over any sane limit: a huge header, a TLS record too long, a chunk size that
    /// overflows, a WebSocket frame over the client's limit, or an early 413 for a request body.
    case oversized
    /// What the phase sends (or reads), a few bytes at a time with pauses well under a second,
    /// never ending (for a WebSocket: one message over 1.5 s, then a clean close).
    case drip
}

/// What a `LupineFaultServer` does to the connections it accepts.
public struct FaultPlan: Sendable, CustomStringConvertible {
    public var phase: FaultPhase
    public var kind: FaultKind
    /// Connections beyond the first `faultedConnections` are served normally: a 200 with the body
    /// `ok` for every request, kept alive (nil: every connection is faulted).
    public var faultedConnections: Int?

    public init(_ phase: FaultPhase, _ kind: FaultKind, faultedConnections: Int? = nil) {
        self.phase = phase
        self.kind = kind
        self.faultedConnections = faultedConnections
    }

    public var description: String { "\(phase.rawValue)/\(kind.rawValue)" }
}
