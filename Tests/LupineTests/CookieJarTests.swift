import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// RFC 6265 as `SetCookie` and `CookieJar` apply it, over a private storage: parsing, domain and
/// path scoping, `Secure`, expiry and `Max-Age`.
@Suite struct CookieJarTests {
    private static func jar(_ policy: HTTPCookie.AcceptPolicy = .always) -> CookieJar {
        // Each ephemeral configuration has its own in-memory storage.
        let storage = URLSessionConfiguration.ephemeral.httpCookieStorage ?? HTTPCookieStorage.shared
        return CookieJar(storage: storage, acceptPolicy: policy)
    }

    private static func url(_ text: String) -> URL {
        URL(string: text) ?? URL(fileURLWithPath: "/")
    }

    private static func names(_ jar: CookieJar, _ url: String) -> [String] {
        jar.cookies(for: Self.url(url)).map(\.name)
    }

    // MARK: Parsing

    @Test func setCookieReadsEveryAttribute() throws {
        let cookie = try #require(SetCookie(" id = a b ; Domain=.Example.COM; Path=/docs; Max-Age=60; "
            + "Expires=Wed, 21 Oct 2099 07:28:00 GMT; Secure; HttpOnly; SameSite=Lax"))
        #expect(cookie.name == "id")
        #expect(cookie.value == "a b")
        #expect(cookie.domain == "example.com")
        #expect(cookie.path == "/docs")
        #expect(cookie.maxAge == 60)
        #expect(cookie.expires == HTTPDate.parse("Wed, 21 Oct 2099 07:28:00 GMT"))
        #expect(cookie.isSecure)
        #expect(cookie.isHTTPOnly)
    }

    /// RFC 6265 trims spaces and tabs (WSP) around the name, the value and each attribute.
    @Test func setCookieTrimsTabsLikeSpaces() throws {
        let cookie = try #require(SetCookie("\tid\t=\tv 1\t;\tPath\t=\t/a\t;\tSecure\t"))
        #expect(cookie.name == "id")
        #expect(cookie.value == "v 1")
        #expect(cookie.path == "/a")
        #expect(cookie.isSecure)
    }

    @Test func malformedLinesAndAttributesAreIgnored() {
        #expect(SetCookie("novalue") == nil)
        #expect(SetCookie("=value") == nil)
        let cookie = SetCookie("a=1; Max-Age=soon; Path=relative; Expires=never; Domain=")
        #expect(cookie?.maxAge == nil)
        #expect(cookie?.path == nil)
        #expect(cookie?.expires == nil)
        #expect(cookie?.domain == nil)
    }

    // MARK: Domain

    @Test func hostOnlyCookieIsSentToItsHostAlone() {
        let jar = Self.jar()
        jar.store(["a=1"], from: Self.url("http://www.example.com/"), mainDocumentURL: nil)
        #expect(Self.names(jar, "http://www.example.com/x") == ["a"])
        #expect(Self.names(jar, "http://sub.www.example.com/x").isEmpty)
        #expect(Self.names(jar, "http://example.com/x").isEmpty)
    }

    @Test func domainCookieIsSentToSubdomainsButNeverToAnotherDomain() {
        let jar = Self.jar()
        jar.store(["a=1; Domain=example.com"], from: Self.url("http://www.example.com/"), mainDocumentURL: nil)
        #expect(Self.names(jar, "http://example.com/") == ["a"])
        #expect(Self.names(jar, "http://api.example.com/") == ["a"])
        #expect(Self.names(jar, "http://notexample.com/").isEmpty)
        #expect(Self.names(jar, "http://example.com.evil.org/").isEmpty)
    }

    @Test func cookieNamingAnotherDomainIsRejected() {
        let jar = Self.jar()
        jar.store(["a=1; Domain=other.org", "b=2; Domain=ww.example.com"], from: Self.url("http://www.example.com/"), mainDocumentURL: nil)
        jar.store(["c=3; Domain=0.0.1"], from: Self.url("http://127.0.0.1/"), mainDocumentURL: nil)
        #expect(jar.storage.cookies?.isEmpty == true)
    }

    // MARK: Path, Secure, expiry

    @Test func pathScopesCookiesAndDefaultsToTheRequestDirectory() {
        let jar = Self.jar()
        jar.store(["root=1; Path=/", "docs=2; Path=/docs", "implicit=3"], from: Self.url("http://h.test/api/v1/items"),
                  mainDocumentURL: nil)
        #expect(Self.names(jar, "http://h.test/docs/page") == ["docs", "root"])
        #expect(Self.names(jar, "http://h.test/docsearch") == ["root"])
        #expect(Self.names(jar, "http://h.test/api/v1/other") == ["implicit", "root"])
        #expect(Self.names(jar, "http://h.test/api/v2") == ["root"])
    }

    @Test func secureCookiesTravelOnlyOverHTTPS() {
        let jar = Self.jar()
        jar.store(["s=1; Secure", "p=2"], from: Self.url("https://h.test/"), mainDocumentURL: nil)
        #expect(Set(Self.names(jar, "https://h.test/")) == ["s", "p"])
        #expect(Self.names(jar, "http://h.test/") == ["p"])
    }

    @Test func maxAgeZeroDeletesAndMaxAgeWinsOverExpires() {
        let jar = Self.jar()
        let url = Self.url("http://h.test/")
        jar.store(["a=1", "b=2; Max-Age=3600; Expires=Thu, 01 Jan 1970 00:00:01 GMT"], from: url, mainDocumentURL: nil)
        #expect(Set(Self.names(jar, "http://h.test/")) == ["a", "b"])
        jar.store(["a=; Max-Age=0"], from: url, mainDocumentURL: nil)
        #expect(Self.names(jar, "http://h.test/") == ["b"])
    }

    @Test func expiredCookiesAreNeitherSentNorKept() {
        let jar = Self.jar()
        let url = Self.url("http://h.test/")
        let now = Date()
        jar.store(["a=1; Max-Age=10", "b=2; Expires=Thu, 01 Jan 1970 00:00:01 GMT"], from: url, mainDocumentURL: nil, now: now)
        #expect(jar.cookies(for: url, now: now).map(\.name) == ["a"])
        #expect(jar.cookies(for: url, now: now.addingTimeInterval(11)).isEmpty)
        #expect(jar.storage.cookies?.isEmpty == true)
    }

    @Test func acceptPolicyNeverStoresNothing() {
        let jar = Self.jar(.never)
        jar.store(["a=1"], from: Self.url("http://h.test/"), mainDocumentURL: nil)
        #expect(jar.storage.cookies?.isEmpty == true)
    }

    @Test func onlyFromMainDocumentDomainRejectsThirdPartyCookies() {
        let jar = Self.jar(.onlyFromMainDocumentDomain)
        jar.store(["a=1"], from: Self.url("http://tracker.test/"), mainDocumentURL: Self.url("http://site.test/"))
        jar.store(["b=2"], from: Self.url("http://site.test/"), mainDocumentURL: Self.url("http://site.test/"))
        #expect(jar.storage.cookies?.map(\.name) == ["b"])
    }

    @Test func cookieHeaderJoinsNameValuePairs() {
        let jar = Self.jar()
        jar.store(["a=1; Path=/", "b=2; Path=/x"], from: Self.url("http://h.test/"), mainDocumentURL: nil)
        #expect(jar.cookieHeaderValue(for: Self.url("http://h.test/x/y")) == "b=2; a=1")
        #expect(jar.cookieHeaderValue(for: Self.url("http://other.test/")) == nil)
    }
}
