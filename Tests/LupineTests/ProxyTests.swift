import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Requests through HTTP (`CONNECT` tunnel) and SOCKS5 proxies named in the configuration's
/// `connectionProxyDictionary`, against LupineTestProxy, which records what it was asked.
@Suite struct ProxyTests {
    private static func session(through proxy: LupineTestProxy, extra: [String: Any] = [:],
                                storage: URLCredentialStorage? = nil) -> Session {
        let configuration = URLSessionConfiguration.af.default
        var dictionary: [AnyHashable: Any] = proxy.kind == .socks5
            ? ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": proxy.port]
            : ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port]
        for (key, value) in extra { dictionary[key] = value }
        configuration.connectionProxyDictionary = dictionary
        if let storage { configuration.urlCredentialStorage = storage }
        return Session(configuration: configuration)
    }

    private static let basicProxyUser = "Basic " + Data("proxyuser:proxypass".utf8).base64EncodedString()

    @Test func httpRequestGoesThroughTheProxysConnectTunnel() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start()
        let session = Self.session(through: proxy)
        let response = await session.request(server.url("/get")).serializingDecodable(HTTPBinResponse.self).response
        try await proxy.shutdown()

        #expect(response.error == nil)
        #expect(response.response?.statusCode == 200)
        #expect(proxy.records.map(\.method) == ["CONNECT"])
        #expect(proxy.records.first?.target == "127.0.0.1:\(server.port)")
        #expect(proxy.records.first?.header("Proxy-Authorization") == nil)
    }

    @Test func exceptionsListHostIsReachedDirectly() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start()
        let session = Self.session(through: proxy, extra: ["ExceptionsList": ["127.0.0.1"]])
        let response = await session.request(server.url("/get")).serializingData().response
        try await proxy.shutdown()

        #expect(response.error == nil)
        #expect(proxy.records.isEmpty)
    }

    @Test func unansweredProxyChallengeFailsWithUserAuthenticationRequired() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start(user: "proxyuser", password: "proxypass")
        let session = Self.session(through: proxy)
        let response = await session.request(server.url("/get")).serializingData().response
        try await proxy.shutdown()

        #expect(response.error?.sessionTaskURLErrorCode == .userAuthenticationRequired)
        #expect(response.response == nil)
        #expect(proxy.records.map(\.status) == [407])
    }

    @Test func proxyChallengeIsAnsweredWithTheRequestsCredential() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start(user: "proxyuser", password: "proxypass")
        let session = Self.session(through: proxy)
        let response = await session.request(server.url("/get"))
            .authenticate(username: "proxyuser", password: "proxypass")
            .serializingDecodable(HTTPBinResponse.self).response
        try await proxy.shutdown()

        #expect(response.error == nil)
        #expect(proxy.records.map(\.status) == [407, 200])
        #expect(proxy.records.last?.header("Proxy-Authorization") == Self.basicProxyUser)
        // The proxy's credential went to the proxy only.
        #expect(response.value?.header("Proxy-Authorization") == nil)
        #expect(response.value?.header("Authorization") == nil)
    }

    @Test func proxyChallengeIsAnsweredFromTheCredentialStorage() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start(user: "proxyuser", password: "proxypass")
        let storage = try #require(URLSessionConfiguration.af.default.urlCredentialStorage)
        let space = URLProtectionSpace(proxyHost: "127.0.0.1", port: proxy.port, type: NSURLProtectionSpaceHTTPProxy,
                                       realm: "LupineTestProxy", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let credential = URLCredential(user: "proxyuser", password: "proxypass", persistence: .forSession)
        storage.setDefaultCredential(credential, for: space)
        defer { storage.remove(credential, for: space) }
        let session = Self.session(through: proxy, storage: storage)
        let response = await session.request(server.url("/get")).serializingData().response
        try await proxy.shutdown()

        #expect(response.error == nil)
        #expect(proxy.records.map(\.status) == [407, 200])
    }

    @Test func wrongProxyCredentialIsTriedOnceThenTheRequestFails() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start(user: "proxyuser", password: "proxypass")
        let session = Self.session(through: proxy)
        let response = await session.request(server.url("/get"))
            .authenticate(username: "proxyuser", password: "wrong")
            .serializingData().response
        try await proxy.shutdown()

        #expect(response.error?.sessionTaskURLErrorCode == .userAuthenticationRequired)
        #expect(proxy.records.map(\.status) == [407, 407])
    }

    @Test func proxyAuthorizationHeaderGoesToTheProxyNotTheOrigin() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start(user: "proxyuser", password: "proxypass")
        let session = Self.session(through: proxy)
        let response = await session.request(server.url("/get"),
                                             headers: [HTTPHeader(name: "Proxy-Authorization", value: Self.basicProxyUser)])
            .serializingDecodable(HTTPBinResponse.self).response
        try await proxy.shutdown()

        #expect(response.error == nil)
        #expect(proxy.records.map(\.status) == [200])
        #expect(proxy.records.first?.header("Proxy-Authorization") == Self.basicProxyUser)
        #expect(response.value?.header("Proxy-Authorization") == nil)
    }

    @Test func requestGoesThroughSOCKS5Proxy() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start(kind: .socks5)
        let session = Self.session(through: proxy)
        let response = await session.request(server.url("/get")).serializingDecodable(HTTPBinResponse.self).response
        try await proxy.shutdown()

        #expect(response.error == nil)
        #expect(proxy.records.map(\.method) == ["SOCKS5"])
        #expect(proxy.records.first?.target == "127.0.0.1:\(server.port)")
    }

    @Test func proxyThatCannotBeReachedFailsWithCannotConnectToHost() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start()
        try await proxy.shutdown()
        let session = Self.session(through: proxy)
        let response = await session.request(server.url("/get")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
    }

    @Test(arguments: [LupineTestProxy.Kind.http, .socks5])
    func proxyThatCannotReachTheOriginFailsWithCannotConnectToHost(kind: LupineTestProxy.Kind) async throws {
        let closed = try await LupineTestServer.start()
        let closedURL = closed.url("/get")
        try await closed.shutdown()
        let proxy = try await LupineTestProxy.start(kind: kind)
        let session = Self.session(through: proxy)
        let response = await session.request(closedURL).serializingData().response
        try await proxy.shutdown()

        #expect(response.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        #expect(proxy.records.count == 1)
    }

    @Test func answeredProxyCredentialStaysWithTheProxyAcrossACrossOriginRedirect() async throws {
        let server = try await testServer()
        let otherOrigin = try await LupineTestServer.start()
        let proxy = try await LupineTestProxy.start(user: "proxyuser", password: "proxypass")
        let session = Self.session(through: proxy)
        let target = otherOrigin.url("/anything").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let response = await session.request(server.url("/redirect-to?url=\(target)&status_code=302"))
            .authenticate(username: "proxyuser", password: "proxypass")
            .serializingDecodable(HTTPBinResponse.self).response
        try await proxy.shutdown()
        try await otherOrigin.shutdown()

        #expect(response.error == nil)
        #expect(response.response?.url?.absoluteString == otherOrigin.url("/anything"))
        // One 407, then a tunnel to each origin, both opened with the proxy's credential.
        #expect(proxy.records.map(\.status) == [407, 200, 200])
        #expect(proxy.records.dropFirst().map(\.target) == ["127.0.0.1:\(server.port)", "127.0.0.1:\(otherOrigin.port)"])
        #expect(proxy.records.dropFirst().allSatisfy { $0.header("Proxy-Authorization") == Self.basicProxyUser })
        #expect(response.value?.header("Proxy-Authorization") == nil)
    }
}
