import Foundation
import Lupine
import LupineTestServer
import Testing

/// `authenticate(...)` answering 401 challenges the way URLSession does for Alamofire.
@Suite struct AuthenticationChallengeTests {
    struct Authenticated: Decodable, Sendable { let authenticated: Bool; let user: String }

    @Test func basicChallengeIsAnsweredWithTheRequestsCredential() async throws {
        let server = try await testServer()
        let user = "u\(UUID().uuidString.prefix(8))"
        let path = "/basic-auth/\(user)/secret"
        let request = AF.request(server.url(path)).authenticate(username: user, password: "secret")
        let value = try await request.validate().serializingDecodable(Authenticated.self).value
        #expect(value.authenticated)
        #expect(value.user == user)
        // Never pre-emptive: the first exchange got the challenge, the second answered it.
        #expect(server.hits(for: path) == 2)
        #expect(request.retryCount == 0)
        #expect(request.performedRequests.count == 1)
    }

    @Test func wrongCredentialIsTriedOnceThenThe401IsDelivered() async throws {
        let server = try await testServer()
        let path = "/basic-auth/alice-\(UUID().uuidString.prefix(8))/right"
        let response = await AF.request(server.url(path))
            .authenticate(with: URLCredential(user: "alice", password: "wrong", persistence: .none))
            .validate().serializingData().response
        #expect(response.error?.responseCode == 401)
        #expect(server.hits(for: path) == 2)
    }

    @Test func withoutCredentialThe401IsDeliveredAtOnce() async throws {
        let server = try await testServer()
        let path = "/basic-auth/bob-\(UUID().uuidString.prefix(8))/pw"
        let response = await AF.request(server.url(path)).serializingData(emptyResponseCodes: [401]).response
        #expect(response.response?.statusCode == 401)
        #expect(response.response?.value(forHTTPHeaderField: "WWW-Authenticate")?.hasPrefix("Basic") == true)
        #expect(server.hits(for: path) == 1)
    }

    @Test func credentialStorageAnswersWhenTheRequestHasNone() async throws {
        // A server of its own: the shared storage's protection space is this host and port only.
        let server = try await LupineTestServer.start()
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.port, protocol: "http",
                                       realm: "Fake Realm", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let storage = try #require(URLSessionConfiguration.af.default.urlCredentialStorage)
        storage.setDefaultCredential(URLCredential(user: "carol", password: "pw", persistence: .forSession), for: space)
        defer { storage.remove(URLCredential(user: "carol", password: "pw", persistence: .forSession), for: space) }
        let value = try await AF.request(server.url("/basic-auth/carol/pw")).validate()
            .serializingDecodable(Authenticated.self).value
        #expect(value.user == "carol")
        try await server.shutdown()
    }

    @Test func aRetriedAttemptMayAnswerTheChallengeAgain() async throws {
        let server = try await testServer()
        let path = "/basic-auth/dave-\(UUID().uuidString.prefix(8))/pw"
        let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
        let request = AF.request(server.url(path), interceptor: retrier)
            .authenticate(username: "dave", password: "nope")
        let response = await request.validate().serializingData().response
        #expect(response.error?.responseCode == 401)
        #expect(request.retryCount == 1)
        #expect(server.hits(for: path) == 4)
    }
}
