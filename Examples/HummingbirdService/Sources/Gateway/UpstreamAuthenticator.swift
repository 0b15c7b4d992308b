import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine

/// Gets and applies the upstream's access tokens for Lupine's `AuthenticationInterceptor`: a token
/// from the upstream's `POST /oauth/token` (client credentials, sent as Basic authentication),
/// refreshed before it expires and whenever the upstream answers 401.
public final class UpstreamAuthenticator: Authenticator {
    private let tokenURL: URL
    private let clientID: String
    private let clientSecret: String

    /// The token endpoint's answer.
    private struct TokenResponse: Decodable, Sendable {
        let accessToken: String
        let expiresIn: Double

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
        }
    }

    /// Creates an authenticator that gets tokens from `tokenURL`.
    public init(tokenURL: URL, clientID: String, clientSecret: String) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    public func apply(_ credential: UpstreamCredential, to urlRequest: inout URLRequest) {
        urlRequest.headers.add(.authorization(bearerToken: credential.accessToken))
    }

    /// Asks the token endpoint for a new token through `session`. The token request is sent
    /// without the authentication interceptor (the gateway passes it per request, not to the
    /// Session), so it never waits for the refresh it is part of. The completion runs on the
    /// Session's serial queue.
    public func refresh(_ credential: UpstreamCredential,
                        for session: Session,
                        completion: @escaping @Sendable (Result<UpstreamCredential, any Error>) -> Void) {
        session.request(tokenURL,
                        method: .post,
                        parameters: ["grant_type": "client_credentials"],
                        headers: [.authorization(username: clientID, password: clientSecret)])
            .validate()
            .responseDecodable(of: TokenResponse.self) { response in
                completion(response.result
                    .map { UpstreamCredential(accessToken: $0.accessToken,
                                              expiration: Date(timeIntervalSinceNow: $0.expiresIn)) }
                    .mapError { $0 as any Error })
            }
    }

    /// A 401 means the upstream no longer accepts the token: refresh it and retry.
    public func didRequest(_ urlRequest: URLRequest,
                           with response: HTTPURLResponse,
                           failDueToAuthenticationError error: any Error) -> Bool {
        response.statusCode == 401
    }

    public func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: UpstreamCredential) -> Bool {
        urlRequest.headers["Authorization"] == HTTPHeader.authorization(bearerToken: credential.accessToken).value
    }
}
