import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP2

/// What an HTTP/2 RST_STREAM tells the caller: each error code of RFC 9113 section 7 maps to the
/// `URLError` code URLSession reports for the same failure, with a description that names the
/// code and what it means.
enum HTTP2StreamReset {
    /// The URLError code of a stream reset with `code`: the server breaking the protocol is a bad
    /// response, inadequate TLS a failed secure connection, any other reset a lost connection.
    static func urlErrorCode(for code: HTTP2ErrorCode) -> URLError.Code {
        switch code {
        case .protocolError, .flowControlError, .settingsTimeout, .streamClosed, .frameSizeError, .compressionError:
            .badServerResponse
        case .inadequateSecurity:
            .secureConnectionFailed
        default:
            .networkConnectionLost
        }
    }

    /// "The server at host:port reset the stream of the request (RST_STREAM NAME): what it means."
    static func description(of code: HTTP2ErrorCode, authority: String) -> String {
        "The server at \(authority) reset the stream of the request (RST_STREAM \(name(of: code))): \(meaning(of: code))."
    }

    /// The code's name in RFC 9113, or its number.
    static func name(of code: HTTP2ErrorCode) -> String {
        switch code {
        case .noError: "NO_ERROR"
        case .protocolError: "PROTOCOL_ERROR"
        case .internalError: "INTERNAL_ERROR"
        case .flowControlError: "FLOW_CONTROL_ERROR"
        case .settingsTimeout: "SETTINGS_TIMEOUT"
        case .streamClosed: "STREAM_CLOSED"
        case .frameSizeError: "FRAME_SIZE_ERROR"
        case .refusedStream: "REFUSED_STREAM"
        case .cancel: "CANCEL"
        case .compressionError: "COMPRESSION_ERROR"
        case .connectError: "CONNECT_ERROR"
        case .enhanceYourCalm: "ENHANCE_YOUR_CALM"
        case .inadequateSecurity: "INADEQUATE_SECURITY"
        case .http11Required: "HTTP_1_1_REQUIRED"
        default: "0x\(String(code.networkCode, radix: 16))"
        }
    }

    private static func meaning(of code: HTTP2ErrorCode) -> String {
        switch code {
        case .noError: "the response ended before it was complete"
        case .protocolError, .flowControlError, .settingsTimeout, .streamClosed, .frameSizeError, .compressionError:
            "it saw an HTTP/2 protocol error"
        case .internalError: "it failed internally"
        case .refusedStream: "it refused the request without processing it"
        case .cancel: "it cancelled the response"
        case .connectError: "the tunnel of a CONNECT request failed"
        case .enhanceYourCalm: "it asks the client to send fewer requests"
        case .inadequateSecurity: "the TLS parameters of the connection do not meet its requirements"
        case .http11Required: "it requires HTTP/1.1 for this request"
        default: "an error code RFC 9113 does not define"
        }
    }
}
