import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix

/// Turns the errors of AsyncHTTPClient and SwiftNIO into the `URLError` codes URLSession reports for
/// the same failure, so that `RetryPolicy`, `catch` clauses and users' error handling written for
/// Alamofire keep working.
enum TransportErrorMapping {
    /// The URLError for `error`, carrying the failing URL and the original error as underlying error.
    static func urlError(for error: any Error, url: URL) -> URLError {
        if let urlError = error as? URLError { return urlError }
        if let clientError = error as? HTTPClientError, clientError == .proxyAuthenticationRequired {
            return URLError(.userAuthenticationRequired, userInfo: [
                NSURLErrorFailingURLErrorKey: url,
                NSUnderlyingErrorKey: error as NSError,
                NSLocalizedDescriptionKey: "The proxy answered 407 Proxy Authentication Required and no credential was accepted: "
                    + "give one with authenticate(...), the credential storage (a proxy protection space) or the proxy URL.",
            ])
        }
        return URLError(code(for: error), userInfo: [
            NSURLErrorFailingURLErrorKey: url,
            NSUnderlyingErrorKey: error as NSError,
            NSLocalizedDescriptionKey: "\(description(of: code(for: error))) [\(error)]",
        ])
    }

    static func code(for error: any Error) -> URLError.Code {
        switch error {
        case let error as HTTPClientError: return code(forClientError: error)
        case is NIOHTTPDecompression.DecompressionError, is NIOHTTPDecompression.ExtraDecompressionError:
            return .cannotDecodeContentData
        case let error as HTTPParserError:
            return error == .invalidEOFState || error == .closedConnection ? .networkConnectionLost : .badServerResponse
        case let error as NIOConnectionError:
            let dnsFailed = error.dnsAError != nil || error.dnsAAAAError != nil
            return dnsFailed && error.connectionErrors.isEmpty ? .cannotFindHost : .cannotConnectToHost
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
        case is CancellationError: return .cancelled
        default:
            // NIOSSL's and NIOSOCKS's errors are matched by name so this file needs no TLS or SOCKS
            // import; a SOCKS proxy that refuses or fails the connect request leaves the host unreached.
            let typeName = String(reflecting: type(of: error))
            if typeName.contains("NIOSSL") { return .secureConnectionFailed }
            return typeName.contains("SOCKS") ? .cannotConnectToHost : .unknown
        }
    }

    private static func code(forClientError error: HTTPClientError) -> URLError.Code {
        switch error {
        case .cancelled, .alreadyShutdown: return .cancelled
        case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
             .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return .timedOut
        case .remoteConnectionClosed, .uncleanShutdown: return .networkConnectionLost
        case .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath: return .badURL
        case .proxyAuthenticationRequired: return .userAuthenticationRequired
        // The proxy refused the tunnel (403, 502...): the origin could not be reached through it.
        case .invalidProxyResponse: return .cannotConnectToHost
        default:
            return String(describing: error).contains("unsupportedScheme") ? .unsupportedURL : .unknown
        }
    }

    private static func code(forErrno errno: CInt) -> URLError.Code {
        switch errno {
        case ECONNREFUSED: return .cannotConnectToHost
        case ECONNRESET, EPIPE, ECONNABORTED: return .networkConnectionLost
        case ETIMEDOUT: return .timedOut
        case ENETUNREACH, ENETDOWN: return .notConnectedToInternet
        case EHOSTUNREACH, EHOSTDOWN, EADDRNOTAVAIL: return .cannotConnectToHost
        default: return .unknown
        }
    }

    /// A short human description, used because corelibs' URLError has none for most codes.
    static func description(of code: URLError.Code) -> String {
        switch code {
        case .cancelled: "The request was cancelled."
        case .timedOut: "The request timed out."
        case .cannotFindHost: "A server with the specified hostname could not be found."
        case .cannotConnectToHost: "Could not connect to the server."
        case .networkConnectionLost: "The network connection was lost."
        case .badServerResponse: "The server sent a malformed response."
        case .cannotDecodeContentData: "The response body could not be decoded (content encoding error or decompression limit)."
        case .badURL: "The URL is not valid."
        case .unsupportedURL: "The URL's scheme is not supported."
        case .secureConnectionFailed: "A secure connection to the server could not be made."
        case .httpTooManyRedirects: "Too many HTTP redirects."
        case .dataLengthExceedsMaximum: "The response body exceeds the maximum size held in memory."
        case .appTransportSecurityRequiresSecureConnection: "A redirect from https to http was refused."
        case .requestBodyStreamExhausted: "The request body stream cannot be sent again to follow the redirect."
        case .userAuthenticationRequired: "Authentication is required."
        case .notConnectedToInternet: "The network is unreachable."
        case .resourceUnavailable: "The response is not in the cache and the cache policy forbids loading it."
        default: "The request failed (URLError \(code.rawValue))."
        }
    }
}
