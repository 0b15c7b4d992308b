import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// Cookies over loopback: `Set-Cookie` of every response (redirect hops included) lands in the
/// configuration's `httpCookieStorage`, and matching cookies go out with later requests. Every
/// test uses an ephemeral configuration, whose storage belongs to its Session alone.
@Suite struct CookieTests {
    private struct CookieList: Decodable {
        let cookies: [String: String]
    }

    private static func session(_ configure: (URLSessionConfiguration) -> Void = { _ in }) -> Session {
        let configuration = URLSessionConfiguration.af.ephemeral
        configure(configuration)
        return Session(configuration: configuration)
    }

    /// The cookies `/cookies` received from `session`.
    private static func cookiesSent(by session: Session, to url: String,
                                    modifier: Session.RequestModifier? = nil) async throws -> [String: String] {
        let response = await session.request(url, requestModifier: modifier).serializingDecodable(CookieList.self).response
        return try #require(response.value).cookies
    }

    private static func attributes(_ server: LupineTestServer, _ query: String) -> String {
        server.url("/cookies/attributes?\(query)")
    }

    @Test func cookiesSetOnARedirectHopAreSentToItsTarget() async throws {
        let server = try await testServer()
        let session = Self.session()
        let cookies = try await Self.cookiesSent(by: session, to: server.url("/cookies/set?a=1&b=2"))

        #expect(cookies == ["a": "1", "b": "2"])
        #expect(Set(session.sessionConfiguration.httpCookieStorage?.cookies?.map(\.name) ?? []) == ["a", "b"])
    }

    @Test func pathAttributeLimitsWhereACookieIsSent() async throws {
        let server = try await testServer()
        let session = Self.session()
        _ = await session.request(Self.attributes(server, "name=scoped&value=1&Path=/cookies/attributes")).serializingData().response

        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies")).isEmpty)
        #expect(try await Self.cookiesSent(by: session, to: Self.attributes(server, "name=probe&Max-Age=0")) == ["scoped": "1"])
    }

    @Test func maxAgeZeroDeletesAStoredCookie() async throws {
        let server = try await testServer()
        let session = Self.session()
        _ = await session.request(Self.attributes(server, "name=a&value=1&Path=/&Max-Age=3600")).serializingData().response
        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies")) == ["a": "1"])

        _ = await session.request(Self.attributes(server, "name=a&value=&Path=/&Max-Age=0")).serializingData().response
        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies")).isEmpty)
        #expect(session.sessionConfiguration.httpCookieStorage?.cookies?.isEmpty == true)
    }

    @Test func expiredCookieIsNotSent() async throws {
        let server = try await testServer()
        let session = Self.session()
        let expired = "Thu, 01 Jan 1970 00:00:01 GMT".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        _ = await session.request(Self.attributes(server, "name=old&value=1&Path=/&Expires=\(expired)")).serializingData().response
        _ = await session.request(Self.attributes(server, "name=kept&value=1&Path=/&HttpOnly=&SameSite=Lax")).serializingData().response

        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies")) == ["kept": "1"])
    }

    @Test func secureCookieIsNotSentOverPlainHTTP() async throws {
        let server = try await testServer()
        let session = Self.session()
        _ = await session.request(Self.attributes(server, "name=s&value=1&Path=/&Secure=")).serializingData().response

        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies")).isEmpty)
        #expect(session.sessionConfiguration.httpCookieStorage?.cookies?.first?.isSecure == true)
    }

    @Test func cookieForAnotherDomainIsNeitherStoredNorSent() async throws {
        let server = try await testServer()
        let session = Self.session()
        _ = await session.request(Self.attributes(server, "name=x&value=1&Domain=example.com")).serializingData().response

        #expect(session.sessionConfiguration.httpCookieStorage?.cookies?.isEmpty == true)
        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies")).isEmpty)
    }

    @Test func cookiesOfOneHostAreNotSentToAnother() async throws {
        let server = try await testServer()
        let session = Self.session()
        _ = try await Self.cookiesSent(by: session, to: server.url("/cookies/set?a=1"))
        let otherHost = server.url("/cookies").replacingOccurrences(of: "127.0.0.1", with: "localhost")

        #expect(try await Self.cookiesSent(by: session, to: otherHost).isEmpty)
        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies")) == ["a": "1"])
    }

    @Test func httpShouldHandleCookiesFalseOptsARequestOutOfSendingAndStoring() async throws {
        let server = try await testServer()
        let session = Self.session()
        let optOut: Session.RequestModifier = { $0.httpShouldHandleCookies = false }
        _ = try await Self.cookiesSent(by: session, to: server.url("/cookies/set?a=1"))
        _ = await session.request(Self.attributes(server, "name=b&value=2&Path=/"), requestModifier: optOut).serializingData().response

        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies"), modifier: optOut).isEmpty)
        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies")) == ["a": "1"])
    }

    @Test func httpShouldSetCookiesFalseStoresButSendsNothing() async throws {
        let server = try await testServer()
        let session = Self.session { $0.httpShouldSetCookies = false }
        _ = await session.request(Self.attributes(server, "name=a&value=1&Path=/")).serializingData().response

        #expect(try await Self.cookiesSent(by: session, to: server.url("/cookies")).isEmpty)
        #expect(session.sessionConfiguration.httpCookieStorage?.cookies?.map(\.name) == ["a"])
    }

    @Test func acceptPolicyNeverStoresNothing() async throws {
        let server = try await testServer()
        let session = Self.session { $0.httpCookieAcceptPolicy = .never }
        _ = await session.request(Self.attributes(server, "name=a&value=1&Path=/")).serializingData().response

        #expect(session.sessionConfiguration.httpCookieStorage?.cookies?.isEmpty == true)
    }

    @Test func requestsOwnCookieHeaderIsSentAlone() async throws {
        let server = try await testServer()
        let session = Self.session()
        _ = try await Self.cookiesSent(by: session, to: server.url("/cookies/set?stored=1"))
        let response = await session.request(server.url("/cookies"), headers: ["Cookie": "mine=2"])
            .serializingDecodable(CookieList.self).response

        #expect(response.value?.cookies == ["mine": "2"])
    }

    @Test func cURLDescriptionShowsTheCookiesTheRequestIsSentWith() async throws {
        let server = try await testServer()
        let session = Self.session()
        _ = await session.request(Self.attributes(server, "name=a&value=1&Path=/")).serializingData().response
        _ = await session.request(Self.attributes(server, "name=hidden&value=1&Path=/elsewhere")).serializingData().response
        let request = session.request(server.url("/get"))
        _ = await request.serializingData().response

        let description = request.cURLDescription()
        #expect(description.contains("-b \"a=1\""))
        #expect(!description.contains("hidden"))
    }

    @Test func downloadsAndStreamsStoreAndSendCookiesToo() async throws {
        let server = try await testServer()
        let session = Self.session()
        let setting = await session.download(server.url("/cookies/set?fromDownload=1")).serializingData().response
        let stream = session.streamRequest(Self.attributes(server, "name=fromStream&value=2&Path=/"))
        for await _ in stream.streamTask().streamingData() {}
        let sent = await session.download(server.url("/cookies")).serializingDecodable(CookieList.self).response
        for file in [setting.fileURL, sent.fileURL].compactMap(\.self) { try? FileManager.default.removeItem(at: file) }

        #expect(sent.value?.cookies == ["fromDownload": "1", "fromStream": "2"])
    }

    @Test func ephemeralSessionsKeepTheirCookiesApart() async throws {
        let server = try await testServer()
        let first = Self.session()
        let second = Self.session()
        _ = try await Self.cookiesSent(by: first, to: server.url("/cookies/set?mine=1"))

        #expect(try await Self.cookiesSent(by: second, to: server.url("/cookies")).isEmpty)
        #expect(try await Self.cookiesSent(by: first, to: server.url("/cookies")) == ["mine": "1"])
    }
}
