import Foundation
@testable import Lupine
import Testing

/// Which proxy a URL goes through, from a proxy dictionary or an injected environment (never the
/// real one of the machine running the tests).
@Suite struct ProxySettingsTests {
    private func url(_ string: String) throws -> URL {
        try #require(URL(string: string))
    }

    // MARK: connectionProxyDictionary

    @Test func dictionaryHTTPProxyCarriesHTTPURLsOnly() throws {
        let settings = ProxySettings(connectionProxyDictionary: ["HTTPEnable": 1, "HTTPProxy": "proxy.test", "HTTPPort": 3128])

        #expect(settings.proxy(for: try url("http://example.com/a")) == TransportProxy(kind: .http, host: "proxy.test", port: 3128))
        #expect(settings.proxy(for: try url("https://example.com/a")) == nil)
    }

    @Test func dictionaryHTTPSProxyCarriesHTTPSURLsAndSOCKSTheRest() throws {
        let settings = ProxySettings(connectionProxyDictionary: [
            "HTTPSEnable": true, "HTTPSProxy": "tls-proxy.test", "HTTPSPort": "8443",
            "SOCKSEnable": NSNumber(value: 1), "SOCKSProxy": "socks.test",
        ])

        #expect(settings.proxy(for: try url("https://example.com")) == TransportProxy(kind: .http, host: "tls-proxy.test", port: 8443))
        #expect(settings.proxy(for: try url("http://example.com")) == TransportProxy(kind: .socks, host: "socks.test", port: 1080))
    }

    @Test func webSocketURLsGoThroughTheProxyOfTheirHTTPScheme() throws {
        let settings = ProxySettings(connectionProxyDictionary: [
            "HTTPEnable": 1, "HTTPProxy": "proxy.test", "HTTPPort": 3128,
            "HTTPSEnable": 1, "HTTPSProxy": "tls-proxy.test", "HTTPSPort": 8443,
        ])

        #expect(settings.proxy(for: try url("ws://example.com/socket")) == TransportProxy(kind: .http, host: "proxy.test", port: 3128))
        #expect(settings.proxy(for: try url("wss://example.com/socket")) == TransportProxy(kind: .http, host: "tls-proxy.test", port: 8443))
    }

    @Test func disabledOrHostlessDictionaryEntriesAreIgnored() throws {
        let settings = ProxySettings(connectionProxyDictionary: [
            "HTTPEnable": 0, "HTTPProxy": "proxy.test", "HTTPSEnable": 1, "HTTPSProxy": " ",
        ])

        #expect(settings.proxy(for: try url("http://example.com")) == nil)
        #expect(settings.proxy(for: try url("https://example.com")) == nil)
    }

    @Test func dictionaryExceptionsListIsReachedDirectly() throws {
        let settings = ProxySettings(connectionProxyDictionary: [
            "HTTPEnable": 1, "HTTPProxy": "proxy.test", "ExceptionsList": ["*.internal.test", "10.1.2.3"],
        ])

        #expect(settings.proxy(for: try url("http://api.internal.test")) == nil)
        #expect(settings.proxy(for: try url("http://10.1.2.3:8080")) == nil)
        #expect(settings.proxy(for: try url("http://example.com"))?.host == "proxy.test")
    }

    @Test func dictionaryProxiesLoopbackHostsToo() throws {
        let settings = ProxySettings(connectionProxyDictionary: ["HTTPEnable": 1, "HTTPProxy": "proxy.test"])

        #expect(settings.proxy(for: try url("http://127.0.0.1:8080/")) == TransportProxy(kind: .http, host: "proxy.test", port: 80))
    }

    // MARK: Environment

    @Test func environmentProxyPerScheme() throws {
        let settings = ProxyEnvironment.settings(from: ["http_proxy": "http://proxy.test:3128", "https_proxy": "tunnel.test:8080"])

        #expect(settings.proxy(for: try url("http://example.com")) == TransportProxy(kind: .http, host: "proxy.test", port: 3128))
        #expect(settings.proxy(for: try url("https://example.com")) == TransportProxy(kind: .http, host: "tunnel.test", port: 8080))
    }

    @Test func environmentUserAndPasswordBecomeBasicProxyAuthorization() throws {
        let settings = ProxyEnvironment.settings(from: ["http_proxy": "http://us%65r:p%40ss@proxy.test"])

        let proxy = try #require(settings.proxy(for: try url("http://example.com")))
        #expect(proxy.port == 80)
        #expect(proxy.authorization == "Basic " + Data("user:p@ss".utf8).base64EncodedString())
    }

    @Test func lowercaseVariableWinsAndUppercaseIsTheFallback() throws {
        let both = ProxyEnvironment.settings(from: ["https_proxy": "lower.test:1", "HTTPS_PROXY": "upper.test:2"])
        let upperOnly = ProxyEnvironment.settings(from: ["HTTPS_PROXY": "upper.test:2", "NO_PROXY": "skip.test"])

        #expect(both.proxy(for: try url("https://example.com"))?.host == "lower.test")
        #expect(upperOnly.proxy(for: try url("https://example.com"))?.host == "upper.test")
        #expect(upperOnly.proxy(for: try url("https://skip.test")) == nil)
    }

    @Test func uppercaseHTTPProxyIsIgnoredInCGIPrograms() throws {
        let settings = ProxyEnvironment.settings(from: ["HTTP_PROXY": "attacker.test:80", "REQUEST_METHOD": "GET"])

        #expect(settings.proxy(for: try url("http://example.com")) == nil)
    }

    @Test func socksSchemesAndAllProxy() throws {
        let socksForHTTP = ProxyEnvironment.settings(from: ["http_proxy": "socks5h://socks.test"])
        let all = ProxyEnvironment.settings(from: ["all_proxy": "socks5://all.test:9050", "https_proxy": "tunnel.test:8080"])

        #expect(socksForHTTP.proxy(for: try url("http://example.com")) == TransportProxy(kind: .socks, host: "socks.test", port: 1080))
        #expect(socksForHTTP.proxy(for: try url("https://example.com")) == nil)
        #expect(all.proxy(for: try url("http://example.com")) == TransportProxy(kind: .socks, host: "all.test", port: 9050))
        #expect(all.proxy(for: try url("https://example.com"))?.host == "tunnel.test")
    }

    @Test func unsupportedOrEmptyProxyValuesAreIgnored() throws {
        let settings = ProxyEnvironment.settings(from: ["http_proxy": "https://tls-proxy.test", "https_proxy": "  "])

        #expect(settings.proxy(for: try url("http://example.com")) == nil)
        #expect(settings.proxy(for: try url("https://example.com")) == nil)
    }

    @Test func noProxyMatchesDomainsSubdomainsPortsAndAddresses() throws {
        let settings = ProxyEnvironment.settings(from: [
            "http_proxy": "proxy.test:3128",
            "no_proxy": "example.com, .corp.test,10.0.0.7 intranet.test:8080,[fd00::1]",
        ])

        for direct in ["http://example.com", "http://www.example.com", "http://corp.test", "http://a.b.corp.test",
                       "http://10.0.0.7", "http://intranet.test:8080", "http://[fd00::1]/", "http://EXAMPLE.com./"] {
            #expect(settings.proxy(for: try url(direct)) == nil, "\(direct)")
        }
        for proxied in ["http://notexample.com", "http://example.com.evil.test", "http://10.0.0.70",
                        "http://intranet.test", "http://intranet.test:9090"] {
            #expect(settings.proxy(for: try url(proxied))?.host == "proxy.test", "\(proxied)")
        }
    }

    @Test func noProxyStarBypassesEverything() throws {
        let settings = ProxyEnvironment.settings(from: ["http_proxy": "proxy.test:3128", "no_proxy": "*"])

        #expect(settings.proxy(for: try url("http://example.com")) == nil)
    }

    @Test func environmentNeverProxiesLoopbackHosts() throws {
        let settings = ProxyEnvironment.settings(from: ["http_proxy": "proxy.test:3128", "https_proxy": "proxy.test:3128"])

        for loopback in ["http://127.0.0.1:8080", "http://127.1.2.3", "http://localhost:9000", "https://api.localhost", "http://[::1]:80"] {
            #expect(settings.proxy(for: try url(loopback)) == nil, "\(loopback)")
        }
        #expect(settings.proxy(for: try url("http://127.example.com")) != nil)
    }
}
