import Foundation
import Lupine

/// An access token of the upstream API and the time it stops being valid.
public struct UpstreamCredential: AuthenticationCredential, Sendable {
    /// The bearer token sent in `Authorization`.
    public let accessToken: String
    /// When the upstream stops accepting the token.
    public let expiration: Date

    /// A credential that is refreshed before the first request: the gateway starts without a
    /// token and fetches one when it first needs it.
    public static let initial = UpstreamCredential(accessToken: "", expiration: .distantPast)

    /// Creates a credential.
    public init(accessToken: String, expiration: Date) {
        self.accessToken = accessToken
        self.expiration = expiration
    }

    /// Refreshed 30 s before it expires, so that no request goes out with a token about to lapse.
    public var requiresRefresh: Bool {
        Date(timeIntervalSinceNow: 30) > expiration
    }
}
