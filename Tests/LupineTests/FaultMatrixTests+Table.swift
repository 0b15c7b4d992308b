import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer

/// The promises of the fault matrix: for each path and phase, what the caller sees for each fault,
/// in the order silence, reset, close, garbage, oversized, drip.
///
/// A cell `ends` in exactly one outcome within its timeouts (a request timeout of 2 s, a resource
/// timeout of 4 s, the connect and TLS handshake bounded by the request timeout; in the pool wait,
/// a waiter that must outlast its occupant has 8 s), with no crash, no hang, no socket left open
/// towards the server and no temporary file left behind. A cell that cannot happen on a path is
/// `notApplicable`.
extension FaultMatrixTests {
    static let table: [Row] = [
        // Plain HTTP/1.1.
        Row(.http1, .connect, [timedOut, lost, lost, speaksFirst, nothingToOversize, nothingToDrip]),
        Row(.http1, .tlsHandshake, Array(repeating: noTLS, count: 6)),
        Row(.http1, .poolWait, [timedOut, succeeds, succeeds, succeeds, onlyOccupantFaults, onlyOccupantFaults]),
        Row(.http1, .requestBody, [timedOut, lost, lost, badResponse, status(413), timedOut]),
        Row(.http1, .responseHead, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.http1, .responseBody, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.http1, .webSocketFrames, Array(repeating: notWebSocket, count: 6)),

        // HTTPS with a trust policy (the test CA as anchor, host validated). A handshake the server
        // breaks off (closes or resets) is a failed secure connection, as URLSession reports it.
        Row(.httpsTrusted, .connect, [timedOut, tlsFailed, tlsFailed, tlsFailed, nothingToOversize, nothingToDrip]),
        Row(.httpsTrusted, .tlsHandshake, [timedOut, tlsFailed, tlsFailed, tlsFailed, tlsFailed, timedOut]),
        Row(.httpsTrusted, .poolWait, [timedOut, succeeds, succeeds, succeeds, onlyOccupantFaults, onlyOccupantFaults]),
        Row(.httpsTrusted, .requestBody, [timedOut, lost, lost, badResponse, status(413), timedOut]),
        Row(.httpsTrusted, .responseHead, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.httpsTrusted, .responseBody, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.httpsTrusted, .webSocketFrames, Array(repeating: notWebSocket, count: 6)),

        // HTTPS with the system's default validation: the phases before the certificate is judged.
        Row(.httpsDefault, .connect, [timedOut, tlsFailed, tlsFailed, tlsFailed, nothingToOversize, nothingToDrip]),
        Row(.httpsDefault, .tlsHandshake, [timedOut, tlsFailed, tlsFailed, tlsFailed, tlsFailed, timedOut]),
        Row(.httpsDefault, .poolWait, Array(repeating: untrustedTestCA, count: 6)),
        Row(.httpsDefault, .requestBody, Array(repeating: untrustedTestCA, count: 6)),
        Row(.httpsDefault, .responseHead, Array(repeating: untrustedTestCA, count: 6)),
        Row(.httpsDefault, .responseBody, Array(repeating: untrustedTestCA, count: 6)),
        Row(.httpsDefault, .webSocketFrames, Array(repeating: notWebSocket, count: 6)),

        // HTTP/2 (TLS, ALPN h2, with the trust policy).
        Row(.http2, .connect, [timedOut, tlsFailed, tlsFailed, tlsFailed, nothingToOversize, nothingToDrip]),
        Row(.http2, .tlsHandshake, [timedOut, tlsFailed, tlsFailed, tlsFailed, tlsFailed, timedOut]),
        Row(.http2, .poolWait, Array(repeating: multiplexed, count: 6)),
        Row(.http2, .requestBody, [timedOut, lost, lost, badResponse, status(413), timedOut]),
        Row(.http2, .responseHead, [timedOut, lost, lost, badResponse, headerListLimitHeld, headersAreOneFrame]),
        Row(.http2, .responseBody, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.http2, .webSocketFrames, Array(repeating: notWebSocket, count: 6)),

        // Plain HTTP through an HTTP proxy (absolute-form requests); at connect, the proxy is faulty.
        Row(.httpProxy, .connect, [timedOut, lost, lost, speaksFirst, nothingToOversize, nothingToDrip]),
        Row(.httpProxy, .tlsHandshake, Array(repeating: noTLS, count: 6)),
        Row(.httpProxy, .poolWait, [timedOut, succeeds, succeeds, succeeds, onlyOccupantFaults, onlyOccupantFaults]),
        Row(.httpProxy, .requestBody, [timedOut, lost, lost, badResponse, status(413), timedOut]),
        Row(.httpProxy, .responseHead, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.httpProxy, .responseBody, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.httpProxy, .webSocketFrames, Array(repeating: notWebSocket, count: 6)),

        // HTTPS through a CONNECT tunnel of an HTTP proxy; at connect, the proxy is faulty.
        Row(.connectTunnel, .connect, [timedOut, lost, lost, cannotConnect, nothingToOversize, nothingToDrip]),
        Row(.connectTunnel, .tlsHandshake, [timedOut, tlsFailed, tlsFailed, tlsFailed, tlsFailed, timedOut]),
        Row(.connectTunnel, .poolWait, [timedOut, succeeds, succeeds, succeeds, onlyOccupantFaults, onlyOccupantFaults]),
        Row(.connectTunnel, .requestBody, [timedOut, lost, lost, badResponse, status(413), timedOut]),
        Row(.connectTunnel, .responseHead, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.connectTunnel, .responseBody, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.connectTunnel, .webSocketFrames, Array(repeating: notWebSocket, count: 6)),

        // Plain HTTP through a SOCKS5 proxy; at connect, the proxy is faulty.
        Row(.socks, .connect, [timedOut, lost, lost, cannotConnect, nothingToOversize, nothingToDrip]),
        Row(.socks, .tlsHandshake, Array(repeating: noTLS, count: 6)),
        Row(.socks, .poolWait, [timedOut, succeeds, succeeds, succeeds, onlyOccupantFaults, onlyOccupantFaults]),
        Row(.socks, .requestBody, [timedOut, lost, lost, badResponse, status(413), timedOut]),
        Row(.socks, .responseHead, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.socks, .responseBody, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.socks, .webSocketFrames, Array(repeating: notWebSocket, count: 6)),

        // WebSocket (ws://): the upgrade is the response head; automatic pings every 0.5 s, a
        // message limit of 1 KiB.
        Row(.webSocket, .connect, [timedOut, lost, lost, speaksFirst, nothingToOversize, nothingToDrip]),
        Row(.webSocket, .tlsHandshake, Array(repeating: noTLS, count: 6)),
        Row(.webSocket, .poolWait, Array(repeating: ownConnection, count: 6)),
        Row(.webSocket, .requestBody, Array(repeating: noRequestBody, count: 6)),
        Row(.webSocket, .responseHead, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.webSocket, .responseBody, Array(repeating: noResponseBody, count: 6)),
        Row(.webSocket, .webSocketFrames, [lost, lost, lost, badResponse, .ends(.urlError(.dataLengthExceedsMaximum)), succeeds]),

        // WebSocket through an HTTP proxy (a CONNECT tunnel); at connect, the proxy is faulty.
        Row(.webSocketThroughProxy, .connect, [timedOut, lost, lost, cannotConnect, nothingToOversize, nothingToDrip]),
        Row(.webSocketThroughProxy, .tlsHandshake, Array(repeating: noTLS, count: 6)),
        Row(.webSocketThroughProxy, .poolWait, Array(repeating: ownConnection, count: 6)),
        Row(.webSocketThroughProxy, .requestBody, Array(repeating: noRequestBody, count: 6)),
        Row(.webSocketThroughProxy, .responseHead, [timedOut, lost, lost, badResponse, badResponse, timedOut]),
        Row(.webSocketThroughProxy, .responseBody, Array(repeating: noResponseBody, count: 6)),
        Row(.webSocketThroughProxy, .webSocketFrames, [lost, lost, lost, badResponse, .ends(.urlError(.dataLengthExceedsMaximum)), succeeds]),
    ]

    // MARK: Outcomes

    static let timedOut = Promise.ends(.urlError(.timedOut))
    static let lost = Promise.ends(.urlError(.networkConnectionLost))
    static let badResponse = Promise.ends(.urlError(.badServerResponse))
    static let tlsFailed = Promise.ends(.urlError(.secureConnectionFailed))
    static let cannotConnect = Promise.ends(.urlError(.cannotConnectToHost))
    static let succeeds = Promise.ends(.succeeds)
    static func status(_ code: Int) -> Promise { .ends(.status(code)) }
    /// Garbage before any request on a plain connection: it answers no request, so the request the
    /// connection was opened for fails as a malformed response, whether the garbage arrived before or
    /// after the request started on it.
    static let speaksFirst = badResponse

    // MARK: Cells that cannot happen, and why

    static let nothingToOversize = Promise.notApplicable("nothing is sent before the request that could be oversized")
    static let nothingToDrip = Promise.notApplicable("nothing is sent before the request that could be dripped")
    static let noTLS = Promise.notApplicable("no TLS on this path")
    static let notWebSocket = Promise.notApplicable("no WebSocket frames on this path")
    static let onlyOccupantFaults = Promise.notApplicable("the waiting request sees only the occupant's connection end or stay")
    static let untrustedTestCA = Promise.notApplicable(
        "the test CA is not a system root, so default validation ends every exchange at the handshake; past it the exchange runs as with a policy")
    static let multiplexed = Promise.notApplicable("an HTTP/2 connection takes concurrent streams: nothing waits below the peer's stream limit")
    static let headerListLimitHeld = Promise.notApplicable(
        "SwiftNIO's HTTP/2 server refuses to send a header block over the client's SETTINGS_MAX_HEADER_LIST_SIZE (it resets the stream)")
    static let headersAreOneFrame = Promise.notApplicable("an HTTP/2 head is one HEADERS frame that SwiftNIO's server cannot trickle")
    static let ownConnection = Promise.notApplicable("a WebSocket upgrade takes a connection of its own and waits for none")
    static let noRequestBody = Promise.notApplicable("a WebSocket upgrade has no request body")
    static let noResponseBody = Promise.notApplicable("after a 101 there is no HTTP body: frames follow")
}
