import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers `data:` URLs (RFC 2397) that no URLProtocol class of the user's accepts, as URLSession
/// answers them with its own loader: a `URLResponse` with the URL's MIME type, charset and the
/// decoded length, then the decoded bytes.
///
/// Lupine decodes them itself (`DataURL`) rather than handing them to corelibs'
/// `_DataURLProtocol`, which reports a malformed URL only to a URLSessionTask's delegate: an
/// exchange has none, so `AF.request("data:foo")` waited for its timeout. Here a malformed URL
/// fails at once with `URLError(.badURL)`, the error URLSession gives for it, saying why.
final class DataURLProtocol: URLProtocol {
    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.lupineHasScheme("data") == true
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    override func startLoading() {
        guard let client else { return }
        guard let url = request.url else {
            client.urlProtocol(self, didFailWithError: URLError(.badURL))
            return
        }
        let decoded: DataURL
        do {
            decoded = try DataURL(url)
        } catch {
            client.urlProtocol(self, didFailWithError: URLError(.badURL, userInfo: [
                NSLocalizedDescriptionKey: error.description,
                NSURLErrorFailingURLErrorKey: url,
            ]))
            return
        }
        let response = URLResponse(url: url, mimeType: decoded.mimeType, expectedContentLength: decoded.data.count,
                                   textEncodingName: decoded.textEncodingName)
        client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .allowed)
        client.urlProtocol(self, didLoad: decoded.data)
        client.urlProtocolDidFinishLoading(self)
    }

    /// The URL is answered whole from `startLoading`: nothing to stop.
    override func stopLoading() {}
}
