import Foundation
import Testing
@testable import Lupine

@Suite struct HTTPHeadersTests {
    /// Found by FuzzHeaders after names started being compared in ASCII: Alamofire compares
    /// `lowercased()` names, so a non-ASCII name still matches across case.
    @Test func nonASCIINamesMatchAcrossCaseAsAlamofires() {
        var headers = HTTPHeaders()
        headers.update(name: "X-Ϳtest-É", value: "1")

        #expect(headers.value(for: "x-ϳtest-é") == "1")
        #expect(headers["X-ϳTEST-é"] == "1")
        headers.remove(name: "x-ϳtest-é")
        #expect(headers.isEmpty)
    }

    @Test func arrayInitReplacesLaterCaseInsensitiveDuplicatesInPlace() {
        let headers = HTTPHeaders([
            HTTPHeader(name: "Accept", value: "a"),
            HTTPHeader(name: "X-Trace", value: "1"),
            HTTPHeader(name: "accept", value: "b"),
        ])

        #expect(headers.count == 2)
        #expect(Array(headers) == [HTTPHeader(name: "accept", value: "b"), HTTPHeader(name: "X-Trace", value: "1")])
    }

    @Test func dictionaryInitAndLiteralsHoldEveryEntry() {
        let fromDictionary = HTTPHeaders(["A": "1", "B": "2"])
        let fromDictionaryLiteral: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        let fromArrayLiteral: HTTPHeaders = [.accept("x"), .contentType("y")]

        #expect(fromDictionary.dictionary == ["A": "1", "B": "2"])
        #expect(Array(fromDictionaryLiteral) == [HTTPHeader(name: "a", value: "3"), HTTPHeader(name: "B", value: "2")])
        #expect(Array(fromArrayLiteral) == [.accept("x"), .contentType("y")])
        #expect(HTTPHeaders().isEmpty)
    }

    @Test func updateReplacesAtSamePositionTakingTheNewCasing() {
        var headers: HTTPHeaders = [.accept("a"), .contentType("b"), .userAgent("c")]

        headers.update(name: "content-type", value: "z")
        headers.update(.authorization("t"))

        #expect(headers.map(\.name) == ["Accept", "content-type", "User-Agent", "Authorization"])
        #expect(headers.value(for: "CONTENT-TYPE") == "z")
    }

    @Test func addBehavesLikeUpdate() {
        var headers = HTTPHeaders()
        headers.add(name: "X-A", value: "1")
        headers.add(HTTPHeader(name: "x-a", value: "2"))
        headers.add(.accept("json"))

        #expect(Array(headers) == [HTTPHeader(name: "x-a", value: "2"), .accept("json")])
    }

    @Test func removeIsCaseInsensitiveAndIgnoresMissingNames() {
        var headers: HTTPHeaders = [.accept("a"), .contentType("b")]
        headers.remove(name: "ACCEPT")
        headers.remove(name: "Missing")

        #expect(Array(headers) == [.contentType("b")])
    }

    @Test func sortOrdersByLowercasedName() {
        var headers: HTTPHeaders = ["b": "1", "C": "2", "a": "3"]
        let sortedCopy = headers.sorted()
        headers.sort()

        #expect(headers.map(\.name) == ["a", "b", "C"])
        #expect(sortedCopy == headers)
    }

    @Test func subscriptGetsCaseInsensitivelySetsAndRemovesWithNil() {
        var headers: HTTPHeaders = [.accept("a")]

        #expect(headers["accept"] == "a")
        #expect(headers["Missing"] == nil)
        headers["X-New"] = "1"
        headers["ACCEPT"] = "b"
        #expect(Array(headers) == [HTTPHeader(name: "ACCEPT", value: "b"), HTTPHeader(name: "X-New", value: "1")])
        headers["accept"] = nil
        #expect(Array(headers) == [HTTPHeader(name: "X-New", value: "1")])
    }

    @Test func collectionExposesPositionsInInsertionOrder() {
        let headers: HTTPHeaders = [.accept("a"), .contentType("b")]

        #expect(headers.startIndex == 0)
        #expect(headers.endIndex == 2)
        #expect(headers.index(after: 0) == 1)
        #expect(headers[1] == .contentType("b"))
        #expect(headers.first == .accept("a"))
    }

    @Test func descriptionJoinsHeadersWithNewlines() {
        let headers: HTTPHeaders = [.accept("a"), .contentType("b")]

        #expect(HTTPHeader.accept("a").description == "Accept: a")
        #expect(headers.description == "Accept: a\nContent-Type: b")
        #expect(HTTPHeaders().description == "")
    }

    @Test func equalityDependsOnOrderAndNameCasing() {
        let ab: HTTPHeaders = ["A": "1", "B": "2"]
        let ba: HTTPHeaders = ["B": "2", "A": "1"]
        let lowercased: HTTPHeaders = ["a": "1", "B": "2"]

        #expect(ab == HTTPHeaders([HTTPHeader(name: "A", value: "1"), HTTPHeader(name: "B", value: "2")]))
        #expect(ab != ba)
        #expect(ab != lowercased)
        #expect(Set([ab, ab, ba]).count == 2)
    }

    @Test func factoriesUseTheStandardNames() {
        let expected: [(HTTPHeader, String, String)] = [
            (.accept("v"), "Accept", "v"),
            (.acceptCharset("v"), "Accept-Charset", "v"),
            (.acceptLanguage("v"), "Accept-Language", "v"),
            (.acceptEncoding("v"), "Accept-Encoding", "v"),
            (.authorization("v"), "Authorization", "v"),
            (.authorization(bearerToken: "tok"), "Authorization", "Bearer tok"),
            (.authorization(username: "user", password: "pass"), "Authorization", "Basic dXNlcjpwYXNz"),
            (.authorization(username: "ü", password: ":"), "Authorization", "Basic w7w6Og=="),
            (.contentDisposition("v"), "Content-Disposition", "v"),
            (.contentEncoding("v"), "Content-Encoding", "v"),
            (.contentType("v"), "Content-Type", "v"),
            (.userAgent("v"), "User-Agent", "v"),
            (.websocketProtocol("v"), "Sec-WebSocket-Protocol", "v"),
        ]
        for (header, name, value) in expected {
            #expect(header.name == name)
            #expect(header.value == value)
        }
    }

    @Test func defaultHeadersAreAcceptEncodingLanguageAndUserAgentInOrder() {
        #expect(HTTPHeaders.default.map(\.name) == ["Accept-Encoding", "Accept-Language", "User-Agent"])
        #expect(Array(HTTPHeaders.default) == [.defaultAcceptEncoding, .defaultAcceptLanguage, .defaultUserAgent])
    }

    /// Alamofire's `br;q=1.0, gzip;q=0.9, deflate;q=0.8`, with zstd after br: every coding Lupine
    /// decodes, and only those (libbrotlidec and libzstd are in every Linux process that has
    /// FoundationNetworking, through libcurl).
    @Test func defaultAcceptEncodingListsTheDecodedCodingsWithQualityValues() {
        #expect(HTTPHeader.defaultAcceptEncoding
            == HTTPHeader(name: "Accept-Encoding", value: "br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7"))
    }

    @Test func defaultAcceptLanguageQualityEncodesTheFirstSixPreferredLanguages() {
        let languages = Locale.preferredLanguages.prefix(6)
        let expected = languages.enumerated().map { "\($1);q=\(1.0 - Double($0) * 0.1)" }.joined(separator: ", ")

        #expect(HTTPHeader.defaultAcceptLanguage.value == expected)
        #expect(["a", "b", "c", "d", "e", "f", "g"].prefix(6).qualityEncoded()
            == "a;q=1.0, b;q=0.9, c;q=0.8, d;q=0.7, e;q=0.6, f;q=0.5")
    }

    @Test func defaultUserAgentNamesExecutableOSAndLupineVersion() throws {
        let value = HTTPHeader.defaultUserAgent.value
        let version = ProcessInfo.processInfo.operatingSystemVersion
        let osVersion = "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"

        #expect(value.hasSuffix(" Lupine/\(AFInfo.version)"))
        #expect(value.contains("; \(HTTPHeader.operatingSystemName) \(osVersion))"))
        #if os(Linux)
            let executable = try #require(ProcessInfo.processInfo.arguments.first?.split(separator: "/").last)
            #expect(value == "\(executable)/Unknown (Unknown; build:Unknown; Linux \(osVersion)) Lupine/\(AFInfo.version)")
        #endif
    }

    @Test func userAgentPrefersBundleValuesAndFallsBackToUnknown() {
        let version = OperatingSystemVersion(majorVersion: 6, minorVersion: 8, patchVersion: 1)
        let fromBundle = HTTPHeader.makeDefaultUserAgent(
            infoDictionary: ["CFBundleExecutable": "App", "CFBundleIdentifier": "org.example.app",
                             "CFBundleShortVersionString": "2.1", "CFBundleVersion": "42"],
            arguments: ["/usr/bin/ignored"],
            operatingSystemVersion: version
        )
        let fromArguments = HTTPHeader.makeDefaultUserAgent(infoDictionary: [:], arguments: ["/opt/bin/server"],
                                                            operatingSystemVersion: version)
        let fromNothing = HTTPHeader.makeDefaultUserAgent(infoDictionary: nil, arguments: [],
                                                          operatingSystemVersion: version)
        let os = HTTPHeader.operatingSystemName

        #expect(fromBundle == "App/2.1 (org.example.app; build:42; \(os) 6.8.1) Lupine/\(AFInfo.version)")
        #expect(fromArguments == "server/Unknown (Unknown; build:Unknown; \(os) 6.8.1) Lupine/\(AFInfo.version)")
        #expect(fromNothing == "Unknown/Unknown (Unknown; build:Unknown; \(os) 6.8.1) Lupine/\(AFInfo.version)")
    }

    @Test func urlRequestHeadersViewReadsAndReplacesAllHeaderFields() throws {
        var request = URLRequest(url: try #require(URL(string: "https://example.com")))
        #expect(request.headers.isEmpty)

        request.headers = [.accept("a"), .contentType("b")]
        #expect(request.allHTTPHeaderFields == ["Accept": "a", "Content-Type": "b"])

        request.headers = [.userAgent("c")]
        #expect(request.allHTTPHeaderFields == ["User-Agent": "c"])
        #expect(request.headers == [.userAgent("c")])
    }

    @Test func httpURLResponseHeadersViewReadsAllHeaderFields() throws {
        let url = try #require(URL(string: "https://example.com"))
        let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                    headerFields: ["Content-Type": "text/plain"]))

        #expect(response.headers.value(for: "content-type") == "text/plain")
    }

    @Test func sessionConfigurationHeadersViewMapsAdditionalHeaders() {
        let configuration = URLSessionConfiguration.default
        configuration.headers = [.accept("a")]

        #expect(configuration.httpAdditionalHeaders?["Accept"] as? String == "a")
        #expect(configuration.headers == [.accept("a")])
    }

    @Test func afConfigurationsCarryTheDefaultHeaders() {
        #expect(URLSessionConfiguration.af.default.headers.sorted() == HTTPHeaders.default.sorted())
        #expect(URLSessionConfiguration.af.ephemeral.headers.sorted() == HTTPHeaders.default.sorted())
        #expect(URLSessionConfiguration.af.default !== URLSessionConfiguration.af.default)
    }

    @Test func alamofireExtensionWrapsTheValueAndIgnoresAssignment() {
        var configuration = URLSessionConfiguration.ephemeral
        var extended = configuration.af
        #expect(extended.type === configuration)

        extended = URLSessionConfiguration.default.af
        let original = configuration
        configuration.af = extended
        #expect(configuration === original)
        URLSessionConfiguration.af = AlamofireExtension<URLSessionConfiguration>.self
        #expect(configuration.af.type === configuration)
        #expect(AlamofireExtension(5).type == 5)
    }
}
