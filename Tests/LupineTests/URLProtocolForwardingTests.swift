import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Alamofire's `URLProtocolTests`: a protocol class that forwards each request to the real
/// server through a URLSession of its own, after its `canonicalRequest(for:)` has moved the
/// request's header fields into the query.
@Suite struct URLProtocolForwardingTests {
    @Test func theForwardingProtocolSeesTheRequestsAndTheConfigurationsHeaders() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [ForwardingURLProtocol.self]
        configuration.headers["Session-Configuration-Header"] = "foo"
        let session = Session(configuration: configuration)

        let response = await session.request(server.url("/response-headers"), headers: ["Request-Header": "foobar"])
            .serializingData().response

        #expect(response.error == nil)
        #expect(response.request != nil)
        #expect(response.data != nil)
        #expect(response.response?.headers["Request-Header"] == "foobar")
        #expect(response.response?.headers["Session-Configuration-Header"] == "foo")
    }
}

/// Forwards every request it is given through a corelibs URLSession, once (the forwarded
/// request carries a property that makes the class decline it).
final class ForwardingURLProtocol: URLProtocol {
    private static let handledKey = "ForwardingURLProtocolHandled"
    private var forwardedTask: URLSessionDataTask?

    override class func canInit(with request: URLRequest) -> Bool {
        URLProtocol.property(forKey: handledKey, in: request) == nil
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        guard let headers = request.allHTTPHeaderFields else { return request }
        return (try? URLEncoding.default.encode(request, with: headers)) ?? request
    }

    override func startLoading() {
        guard let mutable = (request as NSURLRequest).mutableCopy() as? NSMutableURLRequest else { return }
        URLProtocol.setProperty(true, forKey: Self.handledKey, in: mutable)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = []
        let session = URLSession(configuration: configuration)
        nonisolated(unsafe) let loader = self
        let task = session.dataTask(with: mutable as URLRequest) { data, response, error in
            if let response { loader.client?.urlProtocol(loader, didReceive: response, cacheStoragePolicy: .notAllowed) }
            if let data { loader.client?.urlProtocol(loader, didLoad: data) }
            if let error {
                loader.client?.urlProtocol(loader, didFailWithError: error)
            } else {
                loader.client?.urlProtocolDidFinishLoading(loader)
            }
            session.finishTasksAndInvalidate()
        }
        self.forwardedTask = task
        task.resume()
    }

    override func stopLoading() {
        forwardedTask?.cancel()
    }
}
