/// A credential an ``AuthenticationInterceptor`` applies to requests, such as an OAuth access token.
///
/// The credential decides for itself when it is no longer good to use. A credential that knows
/// its expiry date can ask for a refresh slightly before it, so that no request is sent with a
/// token the server is about to reject.
///
/// ```swift
/// struct OAuthCredential: AuthenticationCredential, Sendable {
///     let accessToken: String
///     let refreshToken: String
///     let expiration: Date
///
///     // Refresh five minutes before the token expires.
///     var requiresRefresh: Bool { Date(timeIntervalSinceNow: 5 * 60) > expiration }
/// }
/// ```
public protocol AuthenticationCredential {
    /// Whether the credential must be refreshed before it is applied to another request.
    ///
    /// When this is `true` at adaptation time, ``AuthenticationInterceptor`` refreshes the
    /// credential first and holds the request until the refresh ends. The interceptor reads it
    /// while holding its lock: keep it a quick check of the credential's own data that never
    /// touches the interceptor.
    var requiresRefresh: Bool { get }
}
