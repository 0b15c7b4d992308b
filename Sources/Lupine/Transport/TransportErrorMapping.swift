import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Lupine's descriptions of the `URLError` codes it reports, because corelibs' URLError has none
/// for most codes. Mapping errors to codes is the engine's (`EngineErrors`), by type.
enum TransportErrorMapping {
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
