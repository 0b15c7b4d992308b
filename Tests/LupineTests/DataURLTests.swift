import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// `data:` URLs (RFC 2397), which Lupine decodes itself. corelibs' loader, which answered them
/// before, reports a malformed URL only to a URLSessionTask's delegate, which a Lupine exchange
/// has not: `AF.request("data:foo")` waited for its timeout. Every request here sets a 30 s
/// timeout, so a timed-out request fails with `.timedOut`, never with the `.badURL` asserted.
@Suite struct DataURLTests {
    private static let timeout: Session.RequestModifier = { $0.timeoutInterval = 30 }

    /// No comma; none at all; base64 without its padding, or not base64; an escape in the media
    /// type; escapes that make base64 text not ASCII.
    static let malformed = ["data:foo", "data:", "data:;base64,aGk", "data:;base64,!!!!", "data:text%2Fplain,x",
                            "data:;base64,%FF%FF", "DATA:nocomma"]

    static func failsAsABadURL(_ error: AFError?) -> Bool {
        guard case let .sessionTaskFailed(underlying)? = error else { return false }
        return (underlying as? URLError)?.code == .badURL
    }

    @Test(arguments: malformed)
    func aMalformedDataURLFailsAtOnceAsABadURLOnTheAsyncAPI(string: String) async throws {
        async let data = AF.request(string, requestModifier: Self.timeout).serializingData().response
        async let download = AF.download(string, requestModifier: Self.timeout).serializingData().response
        async let stream = Self.streamCompletion(AF.streamRequest(string, requestModifier: Self.timeout))
        let (dataResponse, downloadResponse, streamCompletion) = await (data, download, stream)
        #expect(Self.failsAsABadURL(dataResponse.error), "data: \(String(describing: dataResponse.error))")
        #expect(Self.failsAsABadURL(downloadResponse.error), "download: \(String(describing: downloadResponse.error))")
        #expect(Self.failsAsABadURL(streamCompletion?.error), "stream: \(String(describing: streamCompletion?.error))")
        #expect(dataResponse.response == nil)
    }

    @Test(arguments: malformed)
    func aMalformedDataURLFailsAtOnceAsABadURLOnTheClosureAPI(string: String) async throws {
        async let data = withCheckedContinuation { continuation in
            AF.request(string, requestModifier: Self.timeout).responseData { continuation.resume(returning: $0.error) }
        }
        async let download = withCheckedContinuation { continuation in
            AF.download(string, requestModifier: Self.timeout).responseData { continuation.resume(returning: $0.error) }
        }
        async let stream = withCheckedContinuation { continuation in
            AF.streamRequest(string, requestModifier: Self.timeout).responseStream { stream in
                if let completion = stream.completion { continuation.resume(returning: completion.error) }
            }
        }
        let (dataError, downloadError, streamError) = await (data, download, stream)
        #expect(Self.failsAsABadURL(dataError), "data: \(String(describing: dataError))")
        #expect(Self.failsAsABadURL(downloadError), "download: \(String(describing: downloadError))")
        #expect(Self.failsAsABadURL(streamError), "stream: \(String(describing: streamError))")
    }

    @Test func theErrorSaysWhatIsWrongWithTheURL() async throws {
        let response = await AF.request("data:foo", requestModifier: Self.timeout).serializingData().response
        guard case let .sessionTaskFailed(underlying)? = response.error, let urlError = underlying as? URLError else {
            Issue.record("not a session task failure: \(String(describing: response.error))")
            return
        }
        #expect(urlError.localizedDescription.contains("no comma"))
        #expect(urlError.failingURL?.absoluteString == "data:foo")
    }

    // MARK: Valid URLs

    struct Valid: Sendable, CustomTestStringConvertible {
        let url: String
        let bytes: Data
        let mimeType: String
        let textEncodingName: String?
        var testDescription: String { url }
    }

    static let valid = [
        Valid(url: "data:,hi%20there", bytes: Data("hi there".utf8), mimeType: "text/plain", textEncodingName: nil),
        Valid(url: "data:;base64,aGk=", bytes: Data("hi".utf8), mimeType: "text/plain", textEncodingName: nil),
        Valid(url: "data:text/plain;charset=utf-8,h%C3%A9llo", bytes: Data("héllo".utf8), mimeType: "text/plain", textEncodingName: "utf-8"),
        Valid(url: "data:image/png;base64,iVBORw0KGgo=", bytes: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
              mimeType: "image/png", textEncodingName: nil),
        Valid(url: "data:,", bytes: Data(), mimeType: "text/plain", textEncodingName: nil),
        Valid(url: "DATA:;base64,aGk=", bytes: Data("hi".utf8), mimeType: "text/plain", textEncodingName: nil),
        // The HTTPURLResponse Lupine makes of the response reads its charset in lowercase.
        Valid(url: "Data:text/html;charset=US-ASCII,%3Cp%3E", bytes: Data("<p>".utf8), mimeType: "text/html", textEncodingName: "us-ascii"),
        // Foundation's URL(string:) writes a lone "%" as "%25": the data keeps it.
        Valid(url: "data:,100%", bytes: Data("100%".utf8), mimeType: "text/plain", textEncodingName: nil),
    ]

    @Test(arguments: valid)
    func aValidDataURLIsAnsweredByteForByte(_ valid: Valid) async throws {
        let response = await AF.request(valid.url).serializingData(emptyResponseCodes: [200]).response
        #expect(response.error == nil)
        #expect(response.data == valid.bytes)
        let http = try #require(response.response)
        #expect(http.statusCode == 200)
        #expect(http.mimeType == valid.mimeType)
        #expect(http.textEncodingName == valid.textEncodingName)
        #expect(http.expectedContentLength == Int64(valid.bytes.count))
        #expect(http.url == URL(string: valid.url))

        async let download = AF.download(valid.url).serializingData(emptyResponseCodes: [200]).response
        async let stream = Self.streamedBytes(AF.streamRequest(valid.url))
        let (downloadResponse, streamed) = await (download, stream)
        // A download without a destination keeps its file where Alamofire's does: the caller removes it.
        if let file = downloadResponse.fileURL { try? FileManager.default.removeItem(at: file) }
        #expect(downloadResponse.value == valid.bytes)
        #expect(streamed == valid.bytes)
    }

    @Test func aLargeDataURLIsAnsweredByteForByte() async throws {
        // Every byte value, in no simple order.
        let bytes = Data((0..<(1 << 20)).map { (index: Int) in UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> 11) })
        let base64 = "data:application/octet-stream;base64," + bytes.base64EncodedString()
        async let data = AF.request(base64, requestModifier: Self.timeout).serializingData().response
        async let download = AF.download(base64, requestModifier: Self.timeout).serializingData().response
        async let stream = Self.streamedBytes(AF.streamRequest(base64, requestModifier: Self.timeout))
        let (dataResponse, downloadResponse, streamed) = await (data, download, stream)
        if let file = downloadResponse.fileURL { try? FileManager.default.removeItem(at: file) }
        #expect(dataResponse.value == bytes)
        #expect(dataResponse.response?.mimeType == "application/octet-stream")
        #expect(downloadResponse.value == bytes)
        #expect(streamed == bytes)

        let escaped = "data:," + bytes.prefix(256 << 10).map { String(format: "%%%02X", $0) }.joined()
        let escapedResponse = await AF.request(escaped, requestModifier: Self.timeout).serializingData().response
        #expect(escapedResponse.value == bytes.prefix(256 << 10))
    }

    /// A URLProtocol class of the user's that accepts `data:` URLs answers them, malformed or not.
    @Test func theUsersProtocolForDataURLsStillWins() async throws {
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [DataURLOverride.self]
        let session = Session(configuration: configuration)
        for string in ["data:,hi", "data:foo"] {
            let response = await session.request(string, requestModifier: Self.timeout).serializingString().response
            #expect(response.value == "overridden", "\(string): \(String(describing: response.error))")
        }
        withExtendedLifetime(session) {}
    }

    // MARK: The decoder

    @Test func anEscapeThatIsNotTwoHexDigitsIsMalformed() {
        // Foundation's URL(string:) repairs these, so they reach the decoder only as strings.
        for string in ["data:,hi%2", "data:,%zz", "data:,%", "data:;base64,aG%6"] {
            #expect(throws: DataURL.Malformation.badPercentEscape, "\(string)") { try DataURL(string) }
        }
        #expect(throws: DataURL.Malformation.notASCII) { try DataURL("data:,h\u{E9}") }
        #expect(throws: DataURL.Malformation.notDataScheme) { try DataURL("dat:,hi") }
    }

    /// The response and bytes of Lupine's loader are corelibs' for the URLs corelibs answers,
    /// however oddly it reads some of them (`=` signs are dropped from a charset), but for the
    /// departures from RFC 2397 below.
    @Test func validURLsDecodeAsCorelibsDecodesThem() throws {
        guard let corelibs = NSClassFromString("FoundationNetworking._DataURLProtocol") as? URLProtocol.Type else { return }
        let urls = ["data:,hi", "data:,", "data:text/html;charset=x,hi", "data:;charset=utf-8,x",
                    "data:charset=utf-8,x", "data:text/plain;foo=bar;base64,aGk=", "data:text/plain;base64;charset=utf-8,aGk=",
                    "data:;charset=a=b,x", "data:a/b/c;x=y,x", "data:/b;x=y,x",
                    "data:a/;x=y,x", "data:a=b/c;x=y,x", "data:,a,b;c=d", "data:,hi#frag", "data:,hi?q=1", "data:;base64,aGk==",
                    "data://host/path,x", "data:;base64,%61Gk=", "data:,%C3%A9%00"]
        for string in urls {
            let url = try #require(URL(string: string))
            let theirs = DataURLLoad(corelibs, url)
            let ours = DataURLLoad(DataURLProtocol.self, url)
            #expect(theirs.finished && ours.finished, "\(string)")
            #expect(ours.data == theirs.data, "\(string)")
            #expect(ours.response?.mimeType == theirs.response?.mimeType, "\(string)")
            #expect(ours.response?.textEncodingName == theirs.response?.textEncodingName, "\(string)")
            #expect(ours.response?.expectedContentLength == theirs.response?.expectedContentLength, "\(string)")
            #expect(ours.response?.url == theirs.response?.url, "\(string)")
        }
    }

    /// corelibs answered these as `text/plain`, or with their base64 text, or with no charset.
    @Test func mediaTypesWithoutParametersAndNamesInCapitalsAreReadAsRFC2397Says() async throws {
        let cases: [(url: String, bytes: Data, mimeType: String, textEncodingName: String?)] = [
            ("data:application/json,%7B%7D", Data("{}".utf8), "application/json", nil),
            ("data:text/html,hi", Data("hi".utf8), "text/html", nil),
            ("data:;BASE64,aGk=", Data("hi".utf8), "text/plain", nil),
            ("data:image/png;Base64,iVBORw0KGgo=", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "image/png", nil),
            ("data:text/plain;CHARSET=utf-8,h%C3%A9", Data("hé".utf8), "text/plain", "utf-8"),
        ]
        for (url, bytes, mimeType, textEncodingName) in cases {
            let response = await AF.request(url).serializingData().response
            #expect(response.value == bytes, "\(url)")
            #expect(response.response?.mimeType == mimeType, "\(url)")
            #expect(response.response?.textEncodingName == textEncodingName, "\(url)")
        }
    }

    // MARK: Helpers

    static func streamCompletion(_ request: DataStreamRequest) async -> DataStreamRequest.Completion? {
        for await stream in request.streamTask().streamingData() {
            if let completion = stream.completion { return completion }
        }
        return nil
    }

    static func streamedBytes(_ request: DataStreamRequest) async -> Data {
        var bytes = Data()
        for await stream in request.streamTask().streamingData() {
            if let chunk = stream.value { bytes.append(chunk) }
        }
        return bytes
    }
}

/// Answers every `data:` URL with "overridden".
private final class DataURLOverride: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.scheme?.lowercased() == "data"
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let url = request.url else { return }
        let body = Data("overridden".utf8)
        client?.urlProtocol(self, didReceive: URLResponse(url: url, mimeType: "text/plain", expectedContentLength: body.count,
                                                          textEncodingName: "utf-8"), cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: body)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}

/// One load of a URL by a loader of `data:` URLs, which answers from `startLoading` itself.
private final class DataURLLoad: NSObject, URLProtocolClient, @unchecked Sendable {
    private(set) var response: URLResponse?
    private(set) var data = Data()
    private(set) var finished = false

    init(_ protocolClass: URLProtocol.Type, _ url: URL) {
        super.init()
        protocolClass.init(request: URLRequest(url: url), cachedResponse: nil, client: self).startLoading()
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy) {
        self.response = response
    }

    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) { self.data.append(data) }
    func urlProtocolDidFinishLoading(_ protocol: URLProtocol) { finished = true }
    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error) {}
    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {}
    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {}
    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {}
    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}
}
