import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// Which cookies the jar takes, over loopback with real host names: a forward proxy reaches every
/// name under the test's domains at 127.0.0.1, so a response from `a.example.invalid` can try to set
/// a cookie for `invalid`, and the test asks what a sibling host (`b.other.invalid`) then receives.
/// The public suffixes come from the system's Public Suffix List, as in use.
@Suite struct CookieDomainRulesTests {
    private struct CookieList: Decodable {
        let cookies: [String: String]
    }

    /// A server (and with `tls`, an https server too) reached through a proxy that routes
    /// `domains` to them, and a Session with a cookie storage of its own going through that proxy,
    /// trusting the test certificate for the `trustedHosts` of https requests. Cookies do not
    /// depend on the port: both servers share them, as two services of one host would.
    private struct Site {
        let server: LupineTestServer
        let tlsServer: LupineTestServer?
        let proxy: LupineTestProxy
        let session: Session

        var storedCookies: [HTTPCookie] {
            session.sessionConfiguration.httpCookieStorage?.cookies ?? []
        }

        func url(_ host: String, _ path: String, secure: Bool = false) -> String {
            let port = secure ? tlsServer?.port ?? 0 : server.port
            return "\(secure ? "https" : "http")://\(host):\(port)\(path)"
        }

        /// Asks `host` to set the cookie `name=1` with `attributes` (a query: `Path=/&Domain=x`).
        func set(_ name: String, from host: String, _ attributes: String = "Path=/", secure: Bool = false) async {
            let target = url(host, "/cookies/attributes?name=\(name)&value=1&\(attributes)", secure: secure)
            _ = await session.request(target).serializingData().response
        }

        /// The cookies `host` receives with the next request.
        func cookiesReceived(by host: String, secure: Bool = false) async throws -> [String: String] {
            let response = await session.request(url(host, "/cookies", secure: secure)).serializingDecodable(CookieList.self).response
            return try #require(response.value, "\(String(describing: response.error))").cookies
        }
    }

    /// Runs `body` with a `Site` for `domains`, then shuts down what it started.
    private static func withSite(routing domains: Set<String>,
                                 tls: Bool = false,
                                 trustedHosts: [String] = [],
                                 _ body: (Site) async throws -> Void) async throws {
        var servers = [try await LupineTestServer.start()]
        var proxy: LupineTestProxy?
        var failure: (any Error)?
        do {
            if tls { servers.append(try await TLSFixture.server()) }
            let started = try await LupineTestProxy.start(connectPorts: nil, loopbackDomains: domains)
            proxy = started
            let configuration = URLSessionConfiguration.af.ephemeral
            configuration.connectionProxyDictionary = [
                "HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": started.port,
                "HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": started.port,
            ]
            let evaluators = Dictionary(uniqueKeysWithValues: trustedHosts.map { ($0, DisabledTrustEvaluator() as any ServerTrustEvaluating) })
            let session = Session(configuration: configuration,
                                  serverTrustManager: evaluators.isEmpty ? nil : ServerTrustManager(evaluators: evaluators))
            try await body(Site(server: servers[0], tlsServer: servers.dropFirst().first, proxy: started, session: session))
        } catch {
            failure = error
        }
        try await proxy?.shutdown()
        for server in servers { try await server.shutdown() }
        if let failure { throw failure }
    }

    /// The public suffixes below come from the list the machine installs (the `publicsuffix`
    /// package); without it only the default rule holds and these tests cannot tell.
    private static func requireSystemList() throws {
        try #require(PublicSuffixList.shared.ruleCount > 0,
                     "no Public Suffix List at \(PublicSuffixList.systemListPath) (install the publicsuffix package)")
    }

    // MARK: Public suffixes

    @Test func cookieForASingleLabelDomainIsIgnored() async throws {
        try await Self.withSite(routing: ["invalid"]) { (site) async throws in
            await site.set("tldwide", from: "a.example.invalid", "Path=/&Domain=invalid")

            #expect(try await site.cookiesReceived(by: "b.other.invalid").isEmpty)
            #expect(try await site.cookiesReceived(by: "a.example.invalid").isEmpty)
            #expect(site.storedCookies.isEmpty)
            let request = site.session.request(site.url("b.other.invalid", "/get"))
            _ = await request.serializingData().response
            #expect(!request.cURLDescription().contains("-b "))
        }
    }

    @Test func cookieForTheParentDomainReachesSiblingHosts() async throws {
        try await Self.withSite(routing: ["invalid"]) { (site) async throws in
            await site.set("parent", from: "a.example.invalid", "Path=/&Domain=example.invalid")

            #expect(try await site.cookiesReceived(by: "b.example.invalid") == ["parent": "1"])
            #expect(try await site.cookiesReceived(by: "b.other.invalid").isEmpty)
            #expect(site.storedCookies.map(\.domain) == [".example.invalid"])
            let request = site.session.request(site.url("b.example.invalid", "/get"))
            _ = await request.serializingData().response
            #expect(request.cURLDescription().contains("-b \"parent=1\""))
        }
    }

    @Test func cookieForAPublicSuffixOfTheListIsIgnored() async throws {
        try Self.requireSystemList()
        try await Self.withSite(routing: ["co.uk", "github.io"]) { (site) async throws in
            await site.set("uk", from: "shop.example.co.uk", "Path=/&Domain=co.uk")
            await site.set("pages", from: "alice.github.io", "Path=/&Domain=github.io")
            await site.set("site", from: "shop.example.co.uk", "Path=/&Domain=example.co.uk")

            #expect(try await site.cookiesReceived(by: "bank.other.co.uk").isEmpty)
            #expect(try await site.cookiesReceived(by: "bob.github.io").isEmpty)
            #expect(try await site.cookiesReceived(by: "www.example.co.uk") == ["site": "1"])
            #expect(site.storedCookies.map(\.name) == ["site"])
        }
    }

    /// `*.ck` makes every name under "ck" a public suffix, and `!www.ck` takes "www.ck" back out.
    @Test func wildcardAndExceptionRulesOfTheListApply() async throws {
        try Self.requireSystemList()
        try await Self.withSite(routing: ["ck"]) { (site) async throws in
            await site.set("wild", from: "a.other.ck", "Path=/&Domain=other.ck")
            await site.set("excepted", from: "a.www.ck", "Path=/&Domain=www.ck")

            #expect(try await site.cookiesReceived(by: "b.other.ck").isEmpty)
            #expect(try await site.cookiesReceived(by: "b.www.ck") == ["excepted": "1"])
        }
    }

    /// RFC 6265, section 5.3, step 5: a Domain that is a public suffix and the host itself makes
    /// a host-only cookie.
    @Test func domainThatIsAPublicSuffixAndTheHostMakesAHostOnlyCookie() async throws {
        try Self.requireSystemList()
        try await Self.withSite(routing: ["co.uk", "invalid"]) { (site) async throws in
            await site.set("listed", from: "co.uk", "Path=/&Domain=co.uk")
            await site.set("single", from: "invalid", "Path=/&Domain=invalid")

            #expect(try await site.cookiesReceived(by: "co.uk") == ["listed": "1"])
            #expect(try await site.cookiesReceived(by: "invalid") == ["single": "1"])
            #expect(try await site.cookiesReceived(by: "www.co.uk").isEmpty)
            #expect(try await site.cookiesReceived(by: "a.invalid").isEmpty)
            #expect(Set(site.storedCookies.map(\.domain)) == ["co.uk", "invalid"])
        }
    }

    // MARK: IP addresses

    @Test func requestToAnIPAddressTakesOnlyThatAddressAsDomain() async throws {
        try await Self.withSite(routing: []) { (site) async throws in
            await site.set("same", from: "127.0.0.1", "Path=/&Domain=127.0.0.1")
            await site.set("parent", from: "127.0.0.1", "Path=/&Domain=0.0.1")
            await site.set("last", from: "127.0.0.1", "Path=/&Domain=1")

            #expect(try await site.cookiesReceived(by: "127.0.0.1") == ["same": "1"])
            #expect(try await site.cookiesReceived(by: "localhost").isEmpty)
            // Host-only: stored under the address itself, not as a domain.
            #expect(site.storedCookies.map(\.domain) == ["127.0.0.1"])
        }
    }

    // MARK: Prefixes

    private static let prefixHosts = ["a.example.invalid", "b.example.invalid"]

    @Test func prefixedCookiesFromAnInsecureOriginAreIgnored() async throws {
        try await Self.withSite(routing: ["invalid"], tls: true, trustedHosts: Self.prefixHosts) { (site) async throws in
            await site.set("__Secure-fromHTTP", from: "a.example.invalid", "Path=/&Domain=example.invalid&Secure=")
            await site.set("__Host-fromHTTP", from: "a.example.invalid", "Path=/&Secure=")
            // Without a prefix, a Secure cookie from http is still taken (as URLSession takes it).
            await site.set("unprefixed", from: "a.example.invalid", "Path=/&Domain=example.invalid&Secure=")

            #expect(try await site.cookiesReceived(by: "b.example.invalid", secure: true) == ["unprefixed": "1"])
            #expect(try await site.cookiesReceived(by: "a.example.invalid", secure: true) == ["unprefixed": "1"])
            #expect(site.storedCookies.map(\.name) == ["unprefixed"])
        }
    }

    @Test func securePrefixNeedsTheSecureAttribute() async throws {
        try await Self.withSite(routing: ["invalid"], tls: true, trustedHosts: Self.prefixHosts) { (site) async throws in
            await site.set("__Secure-flagged", from: "a.example.invalid", "Path=/&Domain=example.invalid&Secure=", secure: true)
            await site.set("__Secure-unflagged", from: "a.example.invalid", "Path=/&Domain=example.invalid", secure: true)
            await site.set("__secure-lowercase", from: "a.example.invalid", "Path=/&Domain=example.invalid", secure: true)

            #expect(try await site.cookiesReceived(by: "b.example.invalid", secure: true) == ["__Secure-flagged": "1"])
        }
    }

    @Test func hostPrefixNeedsSecureTheRootPathAndNoDomain() async throws {
        try await Self.withSite(routing: ["invalid"], tls: true, trustedHosts: Self.prefixHosts) { (site) async throws in
            await site.set("__Host-kept", from: "a.example.invalid", "Path=/&Secure=", secure: true)
            await site.set("__Host-withDomain", from: "a.example.invalid", "Path=/&Domain=example.invalid&Secure=", secure: true)
            await site.set("__HOST-hostAsDomain", from: "a.example.invalid", "Path=/&Domain=a.example.invalid&Secure=", secure: true)
            await site.set("__Host-otherPath", from: "a.example.invalid", "Path=/cookies&Secure=", secure: true)
            await site.set("__Host-noPath", from: "a.example.invalid", "Secure=", secure: true)
            await site.set("__Host-notSecure", from: "a.example.invalid", "Path=/", secure: true)

            #expect(try await site.cookiesReceived(by: "a.example.invalid", secure: true) == ["__Host-kept": "1"])
            #expect(try await site.cookiesReceived(by: "b.example.invalid", secure: true).isEmpty)
            #expect(site.storedCookies.map(\.domain) == ["a.example.invalid"])
        }
    }
}
