import Foundation
import Lupine
import Synchronization

/// Lupine's `ConnectionEngine` alone, through the public `Transport` interface: one
/// `TransportRequest` per request and a `TransportEvents` object that collects the body, with no
/// Session, Request, serializer or queue above it. What the engine costs by itself, beside raw
/// AsyncHTTPClient.
///
/// Its per-host connection limit is 8, AsyncHTTPClient's default (a Session takes
/// URLSessionConfiguration's 6).
///
/// S9's https requests carry a `TransportTLSPolicy` whose evaluator pins the benchmark's
/// certificate (`BenchmarkCertificate`); one evaluator instance for all of them, since the engine
/// shares a connection only between exchanges with the same evaluator.
public struct EngineClient: ScenarioClient {
    public init() {}
    public let name = "Engine"
    let engine = ConnectionEngine(configuration: .init(maximumConnectionsPerHost: 8))
    /// Nil when no certificate is named: S9 then fails with `ScenarioError.noTrustedCertificate`.
    let pinnedPolicy: TransportTLSPolicy? = {
        guard let path = BenchmarkCertificate.path else { return nil }
        let certificates = BenchmarkCertificate.derCertificates(atPath: path).compactMap { SecCertificateCreateWithData(nil, $0) }
        guard !certificates.isEmpty else { return nil }
        return TransportTLSPolicy(evaluator: PinnedCertificatesTrustEvaluator(certificates: certificates, acceptSelfSignedCertificates: true))
    }()

    public func get(_ url: String) async throws {
        _ = try await exchange(TransportRequest(url: try parsed(url), method: .get, headerFields: [], tlsPolicy: try policy(for: url)),
                               into: .memory)
    }

    public func bodyByteCount(_ url: String) async throws -> Int {
        try await exchange(TransportRequest(url: try parsed(url), method: .get, headerFields: [], idleTimeout: 600,
                                            tlsPolicy: try policy(for: url)),
                           into: .count)
    }

    public func downloadByteCount(_ url: String) async throws -> Int {
        let destination = temporaryDownloadURL()
        guard FileManager.default.createFile(atPath: destination.path, contents: nil) else { throw EngineClientError.cannotCreateFile }
        let handle = try FileHandle(forWritingTo: destination)
        _ = try await exchange(TransportRequest(url: try parsed(url), method: .get, headerFields: [], idleTimeout: 600,
                                                tlsPolicy: try policy(for: url)),
                               into: .file(handle))
        try handle.close()
        return try sizeOfFileThenRemove(destination)
    }

    public func post(_ body: Data, to url: String) async throws {
        let request = TransportRequest(url: try parsed(url), method: .post,
                                       headerFields: [HTTPHeader(name: "Content-Type", value: "application/octet-stream")],
                                       body: .data(body), tlsPolicy: try policy(for: url))
        _ = try await exchange(request, into: .memory)
    }

    /// The pinned policy for https, none (the engine's default) for http.
    private func policy(for url: String) throws -> TransportTLSPolicy? {
        guard url.hasPrefix("https:") else { return nil }
        guard let pinnedPolicy else { throw ScenarioError.noTrustedCertificate }
        return pinnedPolicy
    }

    private func parsed(_ url: String) throws -> URL {
        guard let parsed = URL(string: url) else { throw EngineClientError.badURL }
        return parsed
    }

    /// Runs one exchange and returns the body's length; a status other than 200 throws.
    private func exchange(_ request: TransportRequest, into sink: BodyCollector.Sink) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            _ = engine.execute(request, events: BodyCollector(sink: sink, continuation: continuation))
        }
    }
}

enum EngineClientError: Error {
    case badURL
    case cannotCreateFile
}

/// Collects one response body, then resumes its caller with the body's length.
final class BodyCollector: TransportEvents {
    enum Sink {
        /// Kept in memory, as a caller that wants the bytes does.
        case memory
        /// Only counted.
        case count
        /// Written to a file as it arrives.
        case file(FileHandle)
    }

    private struct State {
        var status = 0
        var body = Data()
        var length = 0
        var continuation: CheckedContinuation<Int, any Error>?
    }

    private let sink: Sink
    private let state: Mutex<State>

    init(sink: Sink, continuation: CheckedContinuation<Int, any Error>) {
        self.sink = sink
        state = Mutex(State(continuation: continuation))
    }

    func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) {
        state.withLock { $0.status = head.statusCode }
    }

    func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {
        switch sink {
        case .memory:
            state.withLock { state in
                state.body.append(bodyPart)
                state.length += bodyPart.count
            }
        case .count:
            state.withLock { $0.length += bodyPart.count }
        case let .file(handle):
            handle.write(bodyPart)
            state.withLock { $0.length += bodyPart.count }
        }
    }

    func transportDidComplete(_ task: any TransportTask, error: URLError?) {
        let (continuation, status, length) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.continuation, state.status, state.length)
        }
        if let error {
            continuation?.resume(throwing: error)
        } else if status != 200 {
            continuation?.resume(throwing: ScenarioError.badStatus(status))
        } else {
            continuation?.resume(returning: length)
        }
    }
}
