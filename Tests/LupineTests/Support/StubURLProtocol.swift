import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine

/// A URLProtocol stub written as Alamofire users write theirs: it answers the requests of the
/// hosts a test registered (each test takes a host of its own, so tests in parallel never see
/// each other's stubs) and records what it was asked.
class StubURLProtocol: URLProtocol {
    /// What a stubbed URL answers.
    enum Answer: Sendable {
        /// A response, its body in chunks, then finish.
        case respond(status: Int, headers: [String: String] = [:], chunks: [Data] = [])
        /// A failure.
        case fail(any Error)
        /// A redirect to `location`, with a response of `status`.
        case redirect(to: String, status: Int = 302)
        /// `cachedResponseIsValid` with the cached response when there is one, else this response.
        case cachedOr(status: Int, headers: [String: String], body: Data)
        /// An authentication challenge.
        case challenge
        /// A plain (non-HTTP) URLResponse with a MIME type and a body.
        case plain(mimeType: String, body: Data)
        /// A 200, then `chunks` one by one, `interval` seconds apart, then finish.
        case trickle(chunks: [Data], interval: TimeInterval)
        /// Nothing, ever (until stopped).
        case silence
    }

    /// One test's stubs.
    final class Host: @unchecked Sendable {
        let name: String
        init(prefix: String) { name = "\(prefix)\(UUID().uuidString.lowercased()).stub.lupine.test" }
        private let lock = NSLock()
        /// Per path, the answers still to give: each request takes the first, the last one stays.
        private var answers: [String: [Answer]] = [:]
        private var seen: [URLRequest] = []
        private var cached: [CachedURLResponse?] = []
        private var tasks: [URLSessionTask?] = []
        private var stopped = 0

        /// `https://<host><path>` (the scheme is what the test chooses).
        func url(_ path: String, scheme: String = "https") -> String { "\(scheme)://\(name)\(path)" }

        /// `path` answers `answer` from now on.
        func stub(_ path: String, _ answer: Answer) { stub(path, [answer]) }

        /// `path` answers `sequence` in order, then its last answer from then on.
        func stub(_ path: String, _ sequence: [Answer]) { lock.withLock { answers[path] = sequence } }

        func answer(for path: String) -> Answer? {
            lock.withLock {
                guard var queue = answers[path], let first = queue.first else { return nil }
                if queue.count > 1 {
                    queue.removeFirst()
                    answers[path] = queue
                }
                return first
            }
        }

        /// How many requests for `path` the stub answered.
        func hits(_ path: String) -> Int { requests.filter { $0.url?.path == path }.count }

        func record(_ request: URLRequest, cached response: CachedURLResponse?, task: URLSessionTask?) {
            lock.withLock {
                seen.append(request)
                cached.append(response)
                tasks.append(task)
            }
        }

        func recordStop() { lock.withLock { stopped += 1 } }

        var requests: [URLRequest] { lock.withLock { seen } }
        var cachedResponses: [CachedURLResponse?] { lock.withLock { cached } }
        var protocolTasks: [URLSessionTask?] { lock.withLock { tasks } }
        var stopCount: Int { lock.withLock { stopped } }
    }

    private static let hosts = Locked<[String: Host]>([:])

    /// The prefix of the host names this class answers.
    class var hostPrefix: String { "" }

    /// A new host whose requests this class answers.
    static func host() -> Host {
        let host = Host(prefix: hostPrefix)
        hosts.withValue { $0[host.name] = host }
        return host
    }

    private static func host(of request: URLRequest) -> Host? {
        guard let name = request.url?.host else { return nil }
        return hosts.current[name]
    }

    override class func canInit(with request: URLRequest) -> Bool {
        guard let name = request.url?.host, name.hasPrefix(hostPrefix) else { return false }
        return host(of: request) != nil
    }

    /// Adds a header, to show that the canonical request is the one loaded.
    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        var request = request
        request.setValue("yes", forHTTPHeaderField: "X-Canonical")
        return request
    }

    override func startLoading() {
        guard let host = Self.host(of: request), let url = request.url else { return }
        host.record(request, cached: cachedResponse, task: task)
        let client = self.client
        switch host.answer(for: url.path) ?? .respond(status: 404) {
        case let .respond(status, headers, chunks):
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            for chunk in chunks { client?.urlProtocol(self, didLoad: chunk) }
            client?.urlProtocolDidFinishLoading(self)
        case let .fail(error):
            client?.urlProtocol(self, didFailWithError: error)
        case let .redirect(location, status):
            let target = URL(string: location, relativeTo: url)!.absoluteURL
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1",
                                           headerFields: ["Location": target.absoluteString])!
            client?.urlProtocol(self, wasRedirectedTo: URLRequest(url: target), redirectResponse: response)
        case let .cachedOr(status, headers, body):
            if let cachedResponse {
                client?.urlProtocol(self, cachedResponseIsValid: cachedResponse)
            } else {
                let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
                client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .allowed)
                client?.urlProtocol(self, didLoad: body)
                client?.urlProtocolDidFinishLoading(self)
            }
        case .challenge:
            let space = URLProtectionSpace(host: url.host ?? "", port: 443, protocol: "https", realm: "stub",
                                           authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
            let challenge = URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0,
                                                       failureResponse: nil, error: nil, sender: ChallengeSender())
            client?.urlProtocol(self, didReceive: challenge)
        case let .plain(mimeType, body):
            let response = URLResponse(url: url, mimeType: mimeType, expectedContentLength: body.count, textEncodingName: "utf-8")
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocol(self, didLoad: body)
            client?.urlProtocolDidFinishLoading(self)
        case let .trickle(chunks, interval):
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            nonisolated(unsafe) let loader = self
            DispatchQueue.global().async {
                for chunk in chunks {
                    Thread.sleep(forTimeInterval: interval)
                    loader.client?.urlProtocol(loader, didLoad: chunk)
                }
                loader.client?.urlProtocolDidFinishLoading(loader)
            }
        case .silence:
            break
        }
    }

    override func stopLoading() {
        Self.host(of: request)?.recordStop()
    }
}

/// A stub that is only ever registered with `URLProtocol.registerClass`, never in a configuration.
final class RegisteredStubURLProtocol: StubURLProtocol {
    override class var hostPrefix: String { "registered-" }
}

/// The sender of the stub's challenges: it is told that the challenge was cancelled.
private final class ChallengeSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}

extension URLSessionConfiguration {
    /// The default configuration with `protocolClass` first in its protocol classes, as Alamofire
    /// users stub their Sessions.
    static func stubbed(with protocolClass: AnyClass = StubURLProtocol.self) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [protocolClass] + (configuration.protocolClasses ?? [])
        return configuration
    }
}
