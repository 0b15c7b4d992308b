import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSOCKS
import NIOSSL

/// Failures the engine itself detects, besides the errors SwiftNIO hands it.
enum EngineError: Error, Sendable {
    /// A timer of the engine fired (connect, handshake, idle gap, resource deadline, pool wait).
    case timedOut
    /// The HTTP proxy refused the `CONNECT` tunnel with this status.
    case proxyRefusedTunnel(status: Int)
    /// The HTTP proxy asked for credentials (407) that were not given or not accepted.
    case proxyAuthenticationRequired
    /// The proxy's answer to `CONNECT` is not an HTTP response head.
    case invalidProxyResponse
    /// The connection ended while it was being set up.
    case closedDuringSetup
    /// The connection ended or broke during the TLS handshake.
    case tlsHandshakeBrokenOff
    /// The engine was shut down.
    case shutDown
    /// An HTTP/2 peer left a PING unanswered for a whole interval: the connection is gone.
    case pingUnanswered
    /// The request body's bytes do not match the length its `Content-Length` field declares:
    /// `sent` is what the body gave (so far, when it is longer).
    case bodyLengthMismatch(declared: Int64, sent: Int64)
}

/// Turns what went wrong into the `URLError` URLSession reports for the same failure, matching on
/// error types and codes (never on type names as text), with a description of Lupine's own that
/// names the host and port and carries no SwiftNIO or BoringSSL text.
///
/// The original error is logged by the engine at debug level, not put into the URLError: its text
/// holds library internals and build paths that a user should never be shown.
enum EngineErrors {
    /// The URLError for `error`, for a request to `url` on the connection to `authority`.
    static func urlError(for error: any Error, url: URL, authority: String) -> URLError {
        if let urlError = error as? URLError { return urlError }
        let code = code(for: error)
        let description: String
        switch error {
        case EngineError.proxyAuthenticationRequired:
            description = "The proxy answered 407 Proxy Authentication Required and no credential was accepted: "
                + "give one with authenticate(...), the credential storage (a proxy protection space) or the proxy URL."
        case let error as ContentDecodingError:
            description = "The response body from \(authority) could not be decoded: \(error); the connection was closed."
        case let EngineError.proxyRefusedTunnel(status):
            description = "The proxy refused to open a tunnel to \(authority) (status \(status)); nothing was sent."
        case let EngineError.bodyLengthMismatch(declared, sent):
            description = sent > declared
                ? "The request body is longer than the \(declared) bytes its Content-Length field declares; "
                    + "the request to \(authority) was stopped and its connection closed."
                : "The request body ended after \(sent) of the \(declared) bytes its Content-Length field declares; "
                    + "the request to \(authority) was stopped and its connection closed."
        case let error as NIOHTTP2Errors.StreamClosed:
            description = HTTP2StreamReset.description(of: error.errorCode, authority: authority)
        case EngineError.pingUnanswered:
            description = "The server at \(authority) did not answer an HTTP/2 PING in time; its connection was closed."
        default:
            description = Self.description(of: code, authority: authority)
        }
        return URLError(code, userInfo: [
            NSURLErrorFailingURLErrorKey: url,
            NSLocalizedDescriptionKey: description,
        ])
    }

    /// The URLError code for `error`.
    static func code(for error: any Error) -> URLError.Code {
        switch error {
        case let error as URLError: return error.code
        case let error as EngineError: return code(for: error)
        case is ContentDecodingError: return .cannotDecodeContentData
        case let error as HTTPParserError:
            return error == .invalidEOFState || error == .closedConnection ? .networkConnectionLost : .badServerResponse
        // A response to no request, or one the decoder refuses (SwiftNIO's own checks).
        case is NIOHTTPDecoderError: return .badServerResponse
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return code(for: first.error) }
            return error.dnsAError != nil || error.dnsAAAAError != nil ? .cannotFindHost : .cannotConnectToHost
        case let error as SocketAddressError:
            if case .unknown = error { return .cannotFindHost }
            return .badURL
        case let error as IOError: return code(forErrno: error.errnoCode)
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return .timedOut
            case .connectPending: return .cannotConnectToHost
            default: return .networkConnectionLost
            }
        case let error as NIOSSLError: return code(for: error)
        case let error as NIOSSLExtraError:
            return error == .failedToValidateHostname || error == .serverHostnameImpossibleToMatch
                ? .serverCertificateUntrusted : .secureConnectionFailed
        case is BoringSSLError, is NIOSSLCloseTimedOutError: return .secureConnectionFailed
        // A SOCKS proxy that refuses or fails the connect request leaves the host unreached.
        case is SOCKSError.ConnectionFailed, is SOCKSError.InvalidProtocolVersion, is SOCKSError.InvalidReservedByte,
             is SOCKSError.InvalidAddressType, is SOCKSError.InvalidAuthenticationSelection,
             is SOCKSError.NoValidAuthenticationMethod, is SOCKSError.UnexpectedRead, is SOCKSError.InvalidServerState,
             is SOCKSError.InvalidClientState:
            return .cannotConnectToHost
        case let error as NIOHTTP2Errors.StreamClosed:
            return HTTP2StreamReset.urlErrorCode(for: error.errorCode)
        case is NIOHTTP2Errors.NoSuchStream, is NIOHTTP2Errors.IOOnClosedConnection:
            return .networkConnectionLost
        // Any other HTTP/2 error is the peer breaking the protocol.
        case is any NIOHTTP2Error:
            return .badServerResponse
        case is CancellationError: return .cancelled
        default:
            return .unknown
        }
    }

    private static func code(for error: EngineError) -> URLError.Code {
        switch error {
        case .timedOut: .timedOut
        case .proxyRefusedTunnel, .invalidProxyResponse: .cannotConnectToHost
        case .proxyAuthenticationRequired: .userAuthenticationRequired
        case .closedDuringSetup: .networkConnectionLost
        case .tlsHandshakeBrokenOff: .secureConnectionFailed
        case .shutDown: .cancelled
        case .pingUnanswered: .networkConnectionLost
        case let .bodyLengthMismatch(declared, sent): sent > declared ? .dataLengthExceedsMaximum : .requestBodyStreamExhausted
        }
    }

    private static func code(for error: NIOSSLError) -> URLError.Code {
        if case .uncleanShutdown = error { return .networkConnectionLost }
        return .secureConnectionFailed
    }

    private static func code(forErrno errno: CInt) -> URLError.Code {
        switch errno {
        case ECONNREFUSED: .cannotConnectToHost
        case ECONNRESET, EPIPE, ECONNABORTED: .networkConnectionLost
        case ETIMEDOUT: .timedOut
        case ENETUNREACH, ENETDOWN: .notConnectedToInternet
        case EHOSTUNREACH, EHOSTDOWN, EADDRNOTAVAIL: .cannotConnectToHost
        default: .unknown
        }
    }

    /// A short description of `code` that names the server.
    static func description(of code: URLError.Code, authority: String) -> String {
        switch code {
        case .cancelled: "The request to \(authority) was cancelled."
        case .timedOut: "The request to \(authority) timed out."
        case .cannotFindHost: "The host of \(authority) could not be found."
        case .cannotConnectToHost: "Could not connect to \(authority): the connection was refused or the server is unreachable."
        case .networkConnectionLost: "The connection to \(authority) was lost."
        case .badServerResponse: "The server at \(authority) sent a malformed response."
        case .cannotDecodeContentData:
            "The response body from \(authority) could not be decoded (content encoding error or decompression limit)."
        case .secureConnectionFailed: "A secure (TLS) connection to \(authority) could not be made."
        case .serverCertificateUntrusted: "The certificate of \(authority) is not trusted."
        case .notConnectedToInternet: "The network is unreachable (connecting to \(authority))."
        case .userAuthenticationRequired: "The proxy for \(authority) requires authentication."
        default: "The request to \(authority) failed (\(TransportErrorMapping.description(of: code)))"
        }
    }
}
