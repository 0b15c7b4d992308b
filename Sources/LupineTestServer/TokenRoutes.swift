import NIOHTTP1
import Synchronization

/// `/token/issue`, `/token/count` and `/token/protected`: a bearer-token issuer with one current
/// token per key, for testing credential refresh. Each test uses its own key, so tests running
/// at the same time never see each other's tokens or counts.
///
/// - `/token/issue?key=K` issues `K-<n>` (n = 1, 2, ...), which replaces K's previous token, and
///   answers `{"token": "K-<n>", "issued": n}`.
/// - `/token/count?key=K` answers `{"issued": n}`: how many tokens were issued for K.
/// - `/token/protected?key=K` answers 200 with the httpbin echo body when the request carries
///   `Authorization: Bearer <current token of K>`, else 401 with `WWW-Authenticate: Bearer`.
enum TokenRoutes {
    static func plan(_ request: TestRequest, action: String) -> ResponsePlan {
        guard let key = request.queryValue("key"), !key.isEmpty else {
            return .response(.error(.badRequest, "key is required"))
        }
        switch action {
        case "issue":
            let issued = TokenRegistry.shared.issue(for: key)
            return .response(.json(.object([
                "token": .string(TokenRegistry.token(for: key, generation: issued)),
                "issued": .number(String(issued)),
            ])))
        case "count":
            return .response(.json(.object(["issued": .number(String(TokenRegistry.shared.issued(for: key)))])))
        case "protected":
            return protected(request, key: key)
        default:
            return Router.notFound
        }
    }

    private static func protected(_ request: TestRequest, key: String) -> ResponsePlan {
        let issued = TokenRegistry.shared.issued(for: key)
        let expected = "Bearer " + TokenRegistry.token(for: key, generation: issued)
        guard issued > 0, request.header("authorization") == expected else {
            return .response(.empty(.unauthorized, headers: ["WWW-Authenticate": "Bearer"]))
        }
        return .response(.json(EchoRoutes.body(for: request)))
    }
}

/// The tokens issued so far, per key, for the whole process.
final class TokenRegistry: Sendable {
    static let shared = TokenRegistry()

    private let issuedCounts = Mutex<[String: Int]>([:])

    static func token(for key: String, generation: Int) -> String {
        "\(key)-\(generation)"
    }

    /// Issues the next token of `key`; returns its generation, which is also the number issued.
    func issue(for key: String) -> Int {
        issuedCounts.withLock { counts in
            counts[key, default: 0] += 1
            return counts[key, default: 0]
        }
    }

    func issued(for key: String) -> Int {
        issuedCounts.withLock { $0[key] ?? 0 }
    }
}
