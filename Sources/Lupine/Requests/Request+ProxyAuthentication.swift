import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// A proxy's 407 is answered as a server's 401 is (Request+Authentication.swift): once per attempt,
// with `Request.credential`, else the credential stored for the proxy's protection space, as Basic
// `Proxy-Authorization`.
//
// The engine reports a proxy's 407 (to a `CONNECT`, or to an absolute-form request for an http
// URL) as `URLError(.userAuthenticationRequired)` ending the hop, without the challenge's realm
// and scheme. Lupine then sends the hop again on a connection whose `CONNECT` (or request) carries
// the credential. The credential is kept per proxy and sent only
// to that proxy, never to an origin, so a redirect cannot carry it elsewhere.
extension Request {
    /// The `Proxy-Authorization` an earlier 407 of this request was answered with, for `proxy`.
    func proxyAuthorizationAnswer(for proxy: TransportProxy?) -> String? {
        guard let proxy, proxy.kind == .http else { return nil }
        return mutableState.withLock { $0.proxyAuthorizations[Self.key(of: proxy)] }
    }

    /// Whether a hop that failed with `failure` may have been refused by `proxy` with 407, from
    /// the failure alone: `answersProxyChallenge` then decides, on the root queue.
    func mayAnswerProxyChallenge(failure: URLError, proxy: TransportProxy?) -> Bool {
        failure.code == .userAuthenticationRequired && proxy?.kind == .http
    }

    /// Whether a hop that failed with `failure` was refused by `proxy` with 407 and can be
    /// answered; the answer is then recorded for the next hop. Asks the credential storage.
    func answersProxyChallenge(failure: URLError, proxy: TransportProxy?) -> Bool {
        guard failure.code == .userAuthenticationRequired, let proxy, proxy.kind == .http,
              let configuration = delegate?.sessionConfiguration else { return false }
        ThreadContract.userCode("the credential storage")
        guard mutableState.withLock({ $0.machine.mayAnswerProxyChallenge() }),
              let credential = credential ?? Self.storedProxyCredential(for: proxy, in: configuration.urlCredentialStorage),
              let user = credential.user, let password = credential.password else { return false }
        let authorization = TransportProxy.basicAuthorization(user: user, password: password)
        // The same answer again would be refused again.
        guard authorization != proxy.authorization else { return false }
        mutableState.withLock { $0.proxyAuthorizations[Self.key(of: proxy)] = authorization }
        return true
    }

    /// The credential stored for `proxy` in the Session's credential storage: one whose
    /// protection space is a proxy space on the proxy's host and port (any realm, since the
    /// `CONNECT` refusal does not reach Lupine with its challenge).
    static func storedProxyCredential(for proxy: TransportProxy, in storage: URLCredentialStorage?) -> URLCredential? {
        guard let storage else { return nil }
        let space = storage.allCredentials.keys.first { space in
            space.isProxy() && space.host.lowercased() == proxy.host.lowercased() && space.port == proxy.port
        }
        guard let space else { return nil }
        return storage.defaultCredential(for: space) ?? storage.credentials(for: space)?.values.first
    }

    private static func key(of proxy: TransportProxy) -> String {
        "\(proxy.host.lowercased()):\(proxy.port)"
    }
}
