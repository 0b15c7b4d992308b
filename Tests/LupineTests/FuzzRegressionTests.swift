import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
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
