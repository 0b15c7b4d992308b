import Foundation
import HTTPTypes
import Hummingbird
import InMemoryTracing
import Logging
import NIOCore
import Synchronization

/// A stand-in for the upstream API, on loopback: a token endpoint and an item endpoint that
/// count what they are asked, and can be told to fail.
///
/// - `POST /oauth/token` checks the client credentials (Basic) and issues a new token,
///   `token-1`, `token-2`..., which replaces the one before.
/// - `GET /items/{id}` answers 401 unless it carries the current token, 503 while the item has
///   failures left (`failNextCalls`), 404 for the id `missing`, and otherwise the item as JSON,
///   fresh for 60 s (`Cache-Control: max-age=60`).
final class StandInUpstream: Sendable {
    static let clientID = "gateway-tests"
    static let clientSecret = "s3cret"

    private struct State {
        var tokensIssued = 0
        var currentToken: String?
        var itemCalls: [String: Int] = [:]
        var unauthorizedCalls = 0
        var failuresLeft: [String: Int] = [:]
        var traceIDs: [String] = []
    }

    private let state = Mutex(State())

    /// Tokens issued by the token endpoint so far.
    var tokensIssued: Int { state.withLock { $0.tokensIssued } }
    /// Calls of `GET /items/{id}` answered 401 so far.
    var unauthorizedCalls: Int { state.withLock { $0.unauthorizedCalls } }
    /// The trace ids item calls carried, in order.
    var traceIDs: [String] { state.withLock { $0.traceIDs } }

    /// Calls of `GET /items/{id}` for `id` so far, whatever their answer.
    func itemCalls(_ id: String) -> Int {
        state.withLock { $0.itemCalls[id, default: 0] }
    }

    /// Makes the next `times` calls for `id` (with a valid token) answer 503.
    func failNextCalls(of id: String, times: Int) {
        state.withLock { $0.failuresLeft[id] = times }
    }

    /// Stops accepting the current token, as when it is revoked or expires early.
    func revokeToken() {
        state.withLock { $0.currentToken = nil }
    }

    /// The upstream as a Hummingbird application listening on a free loopback port.
    func application(logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        let router = Router()
        router.post("oauth/token") { request, _ -> Response in
            let expected = "Basic " + Data("\(Self.clientID):\(Self.clientSecret)".utf8).base64EncodedString()
            guard request.headers[.authorization] == expected else {
                return Response(status: .unauthorized)
            }
            let token = self.state.withLock { state in
                state.tokensIssued += 1
                state.currentToken = "token-\(state.tokensIssued)"
                return "token-\(state.tokensIssued)"
            }
            return Self.json(#"{"access_token": "\#(token)", "token_type": "Bearer", "expires_in": 3600}"#)
        }
        router.get("items/:id") { request, context -> Response in
            let id = try context.parameters.require("id")
            return self.answerItemCall(id: id, headers: request.headers)
        }
        return Application(router: router,
                           configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "stand-in-upstream"),
                           onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
                           logger: logger)
    }

    private enum ItemAnswer {
        case unauthorized, unavailable, notFound, item
    }

    private func answerItemCall(id: String, headers: HTTPFields) -> Response {
        let traceID = HTTPField.Name(InMemoryTracer.traceIDKey).flatMap { headers[$0] }
        let answer = state.withLock { state -> ItemAnswer in
            state.itemCalls[id, default: 0] += 1
            if let traceID {
                state.traceIDs.append(traceID)
            }
            guard let token = state.currentToken, headers[.authorization] == "Bearer \(token)" else {
                state.unauthorizedCalls += 1
                return .unauthorized
            }
            if let left = state.failuresLeft[id], left > 0 {
                state.failuresLeft[id] = left - 1
                return .unavailable
            }
            return id == "missing" ? .notFound : .item
        }
        switch answer {
        case .unauthorized:
            return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer"])
        case .unavailable:
            return Response(status: .serviceUnavailable)
        case .notFound:
            return Self.json(#"{"error": "no such item"}"#, status: .notFound)
        case .item:
            return Self.json(#"{"id": "\#(id)", "name": "Item \#(id)"}"#, cacheControl: "max-age=60")
        }
    }

    private static func json(_ text: String, status: HTTPResponse.Status = .ok, cacheControl: String? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let cacheControl {
            headers[.cacheControl] = cacheControl
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
