import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body of a WebSocket close frame (RFC 6455 section 5.5.1): an optional two-byte status code,
/// then an optional UTF-8 reason.
struct WebSocketClosePayload: Equatable {
    /// The code as sent; nil when the frame carried none (reported as 1005, `.noStatusReceived`).
    var rawCode: UInt16?
    /// The reason bytes; nil when empty.
    var reason: Data?

    /// The code as a `CloseCode`. corelibs-foundation's `CloseCode` is a closed enum, so codes it
    /// has no case for (the application range 4000-4999, for example) read as `.invalid`.
    var closeCode: URLSessionWebSocketTask.CloseCode {
        guard let rawCode else { return .noStatusReceived }
        return URLSessionWebSocketTask.CloseCode(rawValue: Int(rawCode)) ?? .invalid
    }

    init(rawCode: UInt16?, reason: Data?) {
        self.rawCode = rawCode
        self.reason = reason.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A payload for sending `code`. Codes that must never be sent (RFC 6455 section 7.4.1: 1005,
    /// 1006, 1015, and 0 for `.invalid`) send an empty payload instead. The reason is cut to the
    /// 123 bytes a control frame has room for.
    init(sending code: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        switch code {
        case .invalid, .noStatusReceived, .abnormalClosure, .tlsHandshakeFailure:
            self.init(rawCode: nil, reason: nil)
        default:
            self.init(rawCode: UInt16(clamping: code.rawValue), reason: reason.map { Data($0.prefix(123)) })
        }
    }

    /// Parses a received payload; a one-byte payload is malformed and yields nil.
    init?(parsing payload: Data) {
        guard !payload.isEmpty else {
            self.init(rawCode: nil, reason: nil)
            return
        }
        guard payload.count >= 2 else { return nil }
        let bytes = [UInt8](payload.prefix(2))
        self.init(rawCode: UInt16(bytes[0]) << 8 | UInt16(bytes[1]), reason: Data(payload.dropFirst(2)))
    }

    /// The bytes of the payload.
    var bytes: Data {
        guard let rawCode else { return Data() }
        var data = Data([UInt8(rawCode >> 8), UInt8(rawCode & 0xFF)])
        if let reason { data.append(reason) }
        return data
    }
}
