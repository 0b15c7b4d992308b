import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Applies a credential to requests and obtains a new one when it stops working.
///
/// An ``AuthenticationInterceptor`` takes care of when these methods are called, of queuing
/// requests while a refresh runs, and of refreshing once however many requests fail at once; an
/// Authenticator only knows how a credential is written into a request and how a new one is got.
///
/// ```swift
/// final class OAuthAuthenticator: Authenticator {
///     func apply(_ credential: OAuthCredential, to urlRequest: inout URLRequest) {
///         urlRequest.headers.add(.authorization(bearerToken: credential.accessToken))
///     }
///
///     func refresh(_ credential: OAuthCredential,
///                  for session: Session,
///                  completion: @escaping @Sendable (Result<OAuthCredential, any Error>) -> Void) {
///         // Ask the token endpoint for a new credential, then call `completion` once.
///     }
///
///     func didRequest(_ urlRequest: URLRequest,
///                     with response: HTTPURLResponse,
///                     failDueToAuthenticationError error: any Error) -> Bool {
///         response.statusCode == 401
///     }
///
///     func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
///         urlRequest.headers["Authorization"] == HTTPHeader.authorization(bearerToken: credential.accessToken).value
///     }
/// }
/// ```
public protocol Authenticator: AnyObject, Sendable {
    /// The kind of credential this Authenticator applies and refreshes.
    associatedtype Credential: AuthenticationCredential & Sendable

    /// Writes `credential` into `urlRequest`, typically as its `Authorization` header.
    ///
    /// - Parameters:
    ///   - credential: The interceptor's current credential.
    ///   - urlRequest: The request being adapted.
    func apply(_ credential: Credential, to urlRequest: inout URLRequest)

    /// Obtains a new credential to replace `credential`.
    ///
    /// The interceptor calls this from its own private serial queue, at most once at a time for a
    /// given credential, and waits for `completion`, which must be called exactly once, from any
    /// thread. Send the refresh request through a Session or request that does not use this
    /// interceptor: its adaptation would wait for the refresh to end, which would never happen.
    ///
    /// - Parameters:
    ///   - credential: The credential to refresh (for example, the holder of a refresh token).
    ///   - session: The Session of the request that caused the refresh.
    ///   - completion: Called with the new credential, or with the error that ends every
    ///     request waiting for this refresh.
    func refresh(_ credential: Credential, for session: Session, completion: @escaping @Sendable (Result<Credential, any Error>) -> Void)

    /// Whether a failed request failed because it was not authenticated, which the interceptor
    /// answers with a refresh and a retry. Usually: the response's status code is 401.
    ///
    /// - Parameters:
    ///   - urlRequest: The request as it was last adapted.
    ///   - response: The response it received.
    ///   - error: The error the request failed with (an `AFError`).
    /// - Returns: `true` if the failure calls for a new credential.
    func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error) -> Bool

    /// Whether `urlRequest` carried `credential`.
    ///
    /// The interceptor asks this about a request that failed authentication: a request sent with
    /// an older credential is simply retried with the current one, without a new refresh.
    ///
    /// - Parameters:
    ///   - urlRequest: The request as it was last adapted.
    ///   - credential: The interceptor's current credential.
    /// - Returns: `true` if `urlRequest` was authenticated with `credential`.
    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Credential) -> Bool
}
