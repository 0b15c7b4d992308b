import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer

/// A bearer token of LupineTestServer's `/token` endpoints.
struct BearerToken: AuthenticationCredential, Sendable {
    let value: String
    var requiresRefresh = false
}

/// The answer of `/token/issue`.
struct IssuedToken: Decodable, Sendable {
    let token: String
    let issued: Int
}

/// Authenticates with the tokens of one `/token` key; `refresh` asks `/token/issue` through `AF`
/// (a Session without the interceptor), and counts how often it is called.
final class TokenAuthenticator: Authenticator {
    let server: LupineTestServer
    /// This test's key: its tokens and counts are its own.
    let key: String
    /// How long `refresh` waits before asking the server, so that requests pile up behind it.
    let refreshDelay: TimeInterval
    /// Whether the tokens `refresh` returns say they require a refresh (short-lived tokens).
    let issuesTokensRequiringRefresh: Bool
    /// Calls to `refresh`.
    let refreshes = Locked(0)
    /// While true, `refresh` asks `/status/503` instead, and fails with its validation error.
    let refreshFails = Locked(false)
    /// While true, `refresh` keeps its completion in `heldRefreshes` instead of calling it.
    let holdsRefreshes = Locked(false)
    let heldRefreshes = Locked<[@Sendable (Result<BearerToken, any Error>) -> Void]>([])

    init(server: LupineTestServer, refreshDelay: TimeInterval = 0, issuesTokensRequiringRefresh: Bool = false) {
        self.server = server
        key = "auth-\(UUID().uuidString)"
        self.refreshDelay = refreshDelay
        self.issuesTokensRequiringRefresh = issuesTokensRequiringRefresh
    }

    /// The endpoint that accepts only the current token of `key`.
    var protectedURL: String { server.url("/token/protected?key=\(key)") }

    func apply(_ credential: BearerToken, to urlRequest: inout URLRequest) {
        urlRequest.headers.add(.authorization(bearerToken: credential.value))
    }

    func refresh(_ credential: BearerToken, for session: Session, completion: @escaping @Sendable (Result<BearerToken, any Error>) -> Void) {
        refreshes.increment()
        if holdsRefreshes.current {
            heldRefreshes.withValue { $0.append(completion) }
            return
        }
        let path = refreshFails.current ? "/status/503" : "/token/issue?key=\(key)"
        let requiresRefresh = issuesTokensRequiringRefresh
        let url = server.url(path)
        DispatchQueue.global().asyncAfter(deadline: .now() + refreshDelay) {
            AF.request(url).validate().responseDecodable(of: IssuedToken.self) { response in
                completion(response.result
                    .map { BearerToken(value: $0.token, requiresRefresh: requiresRefresh) }
                    .mapError { $0 })
            }
        }
    }

    func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error) -> Bool {
        response.statusCode == 401
    }

    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: BearerToken) -> Bool {
        urlRequest.headers["Authorization"] == HTTPHeader.authorization(bearerToken: credential.value).value
    }

    /// Issues a token directly (not through `refresh`), which invalidates the previous one.
    func issueToken() async throws -> BearerToken {
        let issued = try await AF.request(server.url("/token/issue?key=\(key)")).validate()
            .serializingDecodable(IssuedToken.self).value
        return BearerToken(value: issued.token)
    }

    /// How many tokens the server issued for `key`, through `refresh` or directly.
    func issuedCount() async throws -> Int {
        try await AF.request(server.url("/token/count?key=\(key)")).validate()
            .serializingDecodable([String: Int].self).value["issued"] ?? -1
    }
}

/// A monotonic clock that moves only when the test says so.
final class ManualUptime: Sendable {
    private let seconds = Locked<TimeInterval>(0)

    var now: TimeInterval { seconds.current }

    func set(_ value: TimeInterval) { seconds.withValue { $0 = value } }
}

extension RetryResult {
    /// A comparable description: "retry", "retryWithDelay(1.0)", "doNotRetry", "doNotRetryWithError(<error>)".
    var summary: String {
        switch self {
        case .retry: "retry"
        case let .retryWithDelay(delay): "retryWithDelay(\(delay))"
        case .doNotRetry: "doNotRetry"
        case let .doNotRetryWithError(error): "doNotRetryWithError(\(error))"
        }
    }
}
