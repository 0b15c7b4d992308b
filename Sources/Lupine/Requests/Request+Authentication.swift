import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// HTTP authentication as URLSession does it for Alamofire: a 401 challenge is answered once per
// attempt, never pre-emptively, with `Request.credential` or else the default credential of the
// Session's credential storage for the challenge's protection space. A second 401 is delivered.
extension Request {
    /// The request answering the challenge of a 401 response, or nil when it is delivered as is.
    func requestAnsweringChallenge(of head: TransportResponseHead, to sentRequest: @autoclosure () -> URLRequest) -> URLRequest? {
        guard head.statusCode == 401 else { return nil }
        let urlRequest = sentRequest()
        guard let url = urlRequest.url,
              let challenge = AuthenticationChallenge.answerable(in: head.headerFields) else { return nil }
        guard mutableState.withLock({ $0.machine.mayAnswerChallenge() }) else { return nil }
        ThreadContract.userCode("the credential storage")
        let stored = challenge.protectionSpace(for: url).flatMap { space in
            delegate?.sessionConfiguration.urlCredentialStorage.flatMap { Self.storedCredential(for: space, in: $0) }
        }
        guard let credential = credential ?? stored else { return nil }
        return challenge.answer(urlRequest, with: credential)
    }

    /// The default credential stored for a protection space equal to `space`, else any credential
    /// stored for it. The storage is searched by the space's fields because corelibs-foundation
    /// compares `URLProtectionSpace`s by identity, so a lookup with a space built here never matches.
    static func storedCredential(for space: URLProtectionSpace, in storage: URLCredentialStorage) -> URLCredential? {
        func matches(_ candidate: URLProtectionSpace) -> Bool {
            candidate.host.lowercased() == space.host.lowercased()
                && candidate.port == space.port
                && candidate.protocol?.lowercased() == space.protocol?.lowercased()
                && (candidate.realm ?? "") == (space.realm ?? "")
                && candidate.authenticationMethod == space.authenticationMethod
        }
        guard let match = storage.allCredentials.keys.first(where: matches) else { return nil }
        return storage.defaultCredential(for: match) ?? storage.credentials(for: match)?.values.first
    }
}
