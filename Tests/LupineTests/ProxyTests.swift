import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Requests through HTTP and SOCKS5 proxies named in the configuration's
/// `connectionProxyDictionary`, against LupineTestProxy, which records what it was asked. Like
/// squid by default, the HTTP proxy serves absolute-form requests and opens `CONNECT` tunnels to
/// port 443 only (or the ports a test allows).
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

    @Test func httpRequestGoesToTheProxyInAbsoluteForm() async throws {
        let server = try await testServer()
        // CONNECT is refused but to port 443, as by squid's default configuration.
        let proxy = try await LupineTestProxy.start()
        let session = Self.session(through: proxy)
        let response = await session.request(server.url("/get?q=1")).serializingDecodable(HTTPBinResponse.self).response
        try await proxy.shutdown()

        #expect(response.error == nil)
        #expect(response.response?.statusCode == 200)
        #expect(proxy.records.map(\.method) == ["GET"])
        #expect(proxy.records.first?.target == server.url("/get?q=1"))
        #expect(proxy.records.first?.header("Host") == "127.0.0.1:\(server.port)")
        #expect(proxy.records.first?.header("Proxy-Authorization") == nil)
    }

    @Test func httpRequestsOfEveryMethodGoThroughAProxyThatRefusesConnect() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start()
        let session = Self.session(through: proxy)
        let get = await session.request(server.url("/get")).serializingData().response
        let post = await session.request(server.url("/post"), method: .post, parameters: ["a": "1"]).serializingDecodable(HTTPBinResponse.self).response
        let put = await session.upload(Data("body".utf8), to: server.url("/put"), method: .put).serializingDecodable(HTTPBinResponse.self).response
        let head = await session.request(server.url("/get"), method: .head).serializingData(emptyRequestMethods: [.head]).response
        let redirected = await session.request(server.url("/redirect/1")).serializingData().response
        let gzip = await session.request(server.url("/gzip")).serializingData().response
        try await proxy.shutdown()

        #expect([get, head, redirected, gzip].map { $0.response?.statusCode } == [200, 200, 200, 200])
        #expect(post.value?.form["a"] == .string("1"))
        #expect(put.value?.data == "body")
        #expect(!proxy.records.contains { $0.method == "CONNECT" })
        #expect(proxy.records.allSatisfy { $0.status == 200 })
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

    @Test func socksProxyThatCannotReachTheOriginFailsWithCannotConnectToHost() async throws {
        let closed = try await LupineTestServer.start()
        let closedURL = closed.url("/get")
        try await closed.shutdown()
        let proxy = try await LupineTestProxy.start(kind: .socks5)
        let session = Self.session(through: proxy)
        let response = await session.request(closedURL).serializingData().response
        try await proxy.shutdown()

        #expect(response.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        #expect(proxy.records.count == 1)
    }

    /// Through an absolute-form request the proxy's answer is the response, as with URLSession.
    @Test func httpProxyThatCannotReachTheOriginAnswersBadGateway() async throws {
        let closed = try await LupineTestServer.start()
        let closedURL = closed.url("/get")
        try await closed.shutdown()
        let proxy = try await LupineTestProxy.start()
        let session = Self.session(through: proxy)
        let response = await session.request(closedURL).serializingData(emptyResponseCodes: [502]).response
        try await proxy.shutdown()

        #expect(response.response?.statusCode == 502)
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
        // One 407, then a request to each origin, both with the proxy's credential.
        #expect(proxy.records.map(\.status) == [407, 200, 200])
        #expect(proxy.records.dropFirst().map { $0.target.hasPrefix(server.url("/redirect-to")) } == [true, false])
        #expect(proxy.records.last?.target == otherOrigin.url("/anything"))
        #expect(proxy.records.dropFirst().allSatisfy { $0.header("Proxy-Authorization") == Self.basicProxyUser })
        #expect(response.value?.header("Proxy-Authorization") == nil)
    }
}
