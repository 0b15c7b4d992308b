import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import NIOCore
import NIOEmbedded
import Testing

/// One test per finding of the libFuzzer targets in Fuzz/ (run by Fuzz/run.sh): the input, cut
/// down to what triggers it, and the behaviour after the fix.
@Suite struct FuzzRegressionTests {
    // MARK: FuzzResumeData

    /// Resume data as Lupine writes it, with bytes that are not UTF-8 inside an `<integer>`:
    /// PropertyListDecoder traps on it (a crash of the whole process, from data a caller may have
    /// read back from disk). It must be refused like any other undecodable resume data.
    static let resumeDataWithNonUTF8Integer: Data = {
        var data = Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>bytesOnDisk</key>
            \t<integer>
            """.utf8)
        data.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF])
        data.append(contentsOf: Data("""
            1024</integer>
            \t<key>expectedLength</key>
            \t<integer>4096</integer>
            \t<key>headers</key>
            \t<dict/>
            \t<key>temporaryFile</key>
            \t<string>/tmp/LupineDownload_0000_1234.tmp</string>
            \t<key>url</key>
            \t<string>http://127.0.0.1:9/bytes/4096</string>
            \t<key>version</key>
            \t<integer>1</integer>
            </dict>
            </plist>

            """.utf8))
        return data
    }()

    @Test func resumeDataWithNonUTF8BytesIsRefusedInsteadOfCrashing() async throws {
        #expect(ResumeData(data: Self.resumeDataWithNonUTF8Integer) == nil)
        let response = await AF.download(resumingWith: Self.resumeDataWithNonUTF8Integer)
            .serializingDownloadedFileURL().response
        #expect(response.error?.sessionTaskURLErrorCode == .cannotDecodeRawData)
    }

    @Test func resumeDataLupineWroteStillDecodes() throws {
        let url = try #require(URL(string: "http://127.0.0.1:9/bytes/4096"))
        let written = ResumeData(url: url, headers: ["Accept": "*/*"], entityTag: "\"abc\"", lastModified: nil,
                                 bytesOnDisk: 1024, expectedLength: 4096,
                                 temporaryFile: DownloadFiles.newTemporaryURL(for: UUID()))
        let data = try #require(written.encoded())
        #expect(ResumeData(data: data) == written)
    }

    // MARK: FuzzMultipart

    /// A field name holding CR LF ended the part's header block early (and could add header lines);
    /// a `"` ended the quoted name. Both are percent-encoded as browsers do; so are CR and LF in a
    /// MIME type or a caller's part headers.
    @Test func lineBreaksAndQuotesInPartHeadersCannotBreakTheFraming() throws {
        let form = MultipartFormData(boundary: "b")
        form.append(Data("v".utf8), withName: "a\"\r\nX-Injected: 1\r\n\r\nbody", fileName: "f\r\n\"x",
                    mimeType: "text/plain\r\nX-Evil: 1")
        form.append(InputStream(data: Data("w".utf8)), withLength: 1,
                    headers: ["Content-Disposition": "form-data; name=\"s\"", "X-Custom\n": "a\r\nb"])

        let expected = "--b\r\n"
            + "Content-Disposition: form-data; name=\"a%22%0D%0AX-Injected: 1%0D%0A%0D%0Abody\"; filename=\"f%0D%0A%22x\"\r\n"
            + "Content-Type: text/plain%0D%0AX-Evil: 1\r\n\r\nv"
            + "\r\n--b\r\nContent-Disposition: form-data; name=\"s\"\r\nX-Custom%0A: a%0D%0Ab\r\n\r\nw"
            + "\r\n--b--\r\n"
        #expect(String(decoding: try form.encode(), as: UTF8.self) == expected)
    }

    // MARK: FuzzDigestChallenge

    /// A realm or nonce written with quoted-pairs (RFC 9110 section 5.6.4) was read with its
    /// backslashes, and white space inside the quotes was trimmed: the answer's hash then used
    /// another realm than the server's, and the credential was refused.
    @Test func quotedPairsAndSpacesInAChallengeAreReadAsTheServerMeantThem() throws {
        let field = "Digest realm=\"\\r\\e\\\"a\\\\l m \", nonce=\" n\\,1 \", qop=\"auth\", opaque=\"o\\\"\""
        let challenge = try #require(AuthenticationChallenge(field: field))
        #expect(challenge.realm == "re\"a\\l m ")
        #expect(challenge.parameters["nonce"] == " n,1 ")
        #expect(challenge.parameters["opaque"] == "o\"")
        #expect(challenge.parameters["qop"] == "auth")
        // Tokens are still trimmed.
        #expect(AuthenticationChallenge(field: "Digest algorithm = SHA-256 , nonce=x")?.parameters["algorithm"] == "SHA-256")
    }

    /// A realm holding a backslash followed by a combining mark (one Character in Swift) was echoed
    /// in the answer without escaping the backslash: a server then read another realm.
    @Test func answerEscapesABackslashFollowedByACombiningMark() throws {
        let realm = "a\\\u{05BF}b\"\u{0301}c"
        let field = "Digest realm=\"a\\\\\u{05BF}b\\\"\u{0301}c\", nonce=\"n\""
        let challenge = try #require(AuthenticationChallenge(field: field))
        #expect(challenge.realm == realm)
        let answer = try #require(DigestAnswer(challenge: challenge))
        let request = URLRequest(url: try #require(URL(string: "http://127.0.0.1/")))
        let authorization = answer.authorization(user: "u", password: "p", for: request)
        let echoed = try #require(AuthenticationChallenge(field: authorization))
        #expect(echoed.realm == realm)
    }

    // MARK: FuzzProxyEnvironment

    /// `http_proxy=http://proxy:99999` named a proxy on a port no connection can use; such a value
    /// now names no proxy, as an unknown scheme does.
    @Test func proxyValueWithAPortOutOfRangeNamesNoProxy() {
        #expect(ProxyEnvironment.proxy(from: "http://proxy:99999") == nil)
        #expect(ProxyEnvironment.proxy(from: "socks5://proxy:0") == nil)
        #expect(ProxyEnvironment.proxy(from: "proxy:65535")?.port == 65535)
        let settings = ProxyEnvironment.settings(from: ["https_proxy": "http://proxy:70000", "all_proxy": "http://fallback:3128"])
        #expect(settings.httpsProxy?.host == "fallback")
    }

    // MARK: FuzzURLProtocolClient

    /// A URLProtocol that sent a response and then reported a redirect (or a valid cached
    /// response) made the exchange deliver a second response head. It now fails the request.
    @Test func urlProtocolRedirectingAfterAResponseFailsTheRequest() async throws {
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [ResponseThenRedirectURLProtocol.self]
        let session = Session(configuration: configuration)
        let response = await session.request("https://response-then-redirect.lupine.test/a").serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .badServerResponse)
    }
}

/// Sends a 200, some data, then reports a redirect: a second response.
final class ResponseThenRedirectURLProtocol: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host == "response-then-redirect.lupine.test"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url, let target = URL(string: "https://response-then-redirect.lupine.test/b"),
              let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:]),
              let redirect = HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: [:])
        else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data("body".utf8))
        client?.urlProtocol(self, wasRedirectedTo: URLRequest(url: target), redirectResponse: redirect)
    }

    override func stopLoading() {}
}

/// Findings of FuzzCacheRules.
@Suite struct CachedAgeTests {
    /// A response stored with `Age: 1e20` (or `inf`) crashed the process at its next cache hit: the
    /// age, parsed as a Double, was converted to Int for the replayed `Age` field. Age is
    /// delta-seconds: such a value is no age and is ignored.
    @Test(arguments: ["1e20", "inf", "99999999999999999999"])
    func cacheHitOfAResponseWithAnAbsurdAgeIsServed(age: String) async throws {
        let server = try await LupineTestServer.start()
        let url = server.url("/response-headers?Cache-Control=max-age%3D600&Age=\(age)")
        let configuration = URLSessionConfiguration.af.ephemeral
        configuration.urlCache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: nil)
        let session = Session(configuration: configuration)
        let first = await session.request(url).serializingData().response
        // Whatever its age, the stored response answers: the replay writes its Age field.
        let hit = await session.request(url, requestModifier: { $0.cachePolicy = .returnCacheDataElseLoad })
            .serializingData().response
        try await server.shutdown()

        #expect(first.error == nil)
        #expect(hit.error == nil)
        #expect(server.hits(for: "/response-headers") == 1)
        let replayedAge = try #require(hit.response?.value(forHTTPHeaderField: "Age"))
        #expect(Int(replayedAge).map { $0 >= 0 } == true, "Age: \(replayedAge)")
    }
}

/// Findings of FuzzHTTP1Response.
@Suite struct ExchangeHandlerFuzzFindingsTests {
    /// SwiftNIO's parser takes a status line with a one- or two-digit code (`HTTP/1.1 2 OK`) and the
    /// engine passes it on; the request refuses it as a malformed response.
    @Test func statusCodeOfFewerThanThreeDigitsIsABadServerResponse() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/fault/short-status")).serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .badServerResponse)
    }

    /// The engine's exchange handler kept itself alive (it holds itself, bound to its event loop,
    /// for its timers and tasks): one handler leaked per HTTP/1.1 connection and per HTTP/2
    /// request. It lets go when it leaves the pipeline.
    @Test func exchangeHandlerIsFreedWhenItsConnectionCloses() throws {
        weak var released: ExchangeHandler?
        try {
            let channel = EmbeddedChannel()
            let handler = ExchangeHandler(clock: SystemEngineClock())
            released = handler
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
            try channel.close().wait()
            channel.embeddedEventLoop.run()
        }()
        #expect(released == nil)
    }
}
