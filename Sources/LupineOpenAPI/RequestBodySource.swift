import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import Synchronization
import OpenAPIRuntime

/// The request body of one operation, streamed from its `HTTPBody` by each hop that sends it.
///
/// Each hop gets its own pass over the body, read part by part as the connection takes them
/// (Lupine's engine asks for the next part only when fewer than two are on their way to the
/// socket and the socket accepts more), with the body's length when it is known. A body that can
/// be iterated only once (`IterationBehavior.single`) is read by the first hop that starts
/// reading it; any later hop (a retry, a 307 or 308 redirect) fails before sending anything
/// with `AFError.createUploadableFailed(error: LupineClientTransport.TransportError.requestBodyNotReplayable)`.
/// A hop that changed the method (a 303, or a 301 or 302 turning a POST into a GET) sends no body.
final class RequestBodySource: Sendable {
    private let body: HTTPBody
    private let method: String
    /// Whether a hop began reading a body that can be read only once.
    private let isClaimed = Mutex(false)

    init(body: HTTPBody, method: String) {
        self.body = body
        self.method = method
    }

    /// The body `hopRequest` sends.
    func transportBody(for hopRequest: URLRequest) throws -> TransportRequestBody? {
        guard (hopRequest.httpMethod ?? "GET") == method else { return nil }
        let length: Int64? = switch body.length {
        case let .known(count): count
        case .unknown: nil
        }
        if body.iterationBehavior == .single, isClaimed.withLock({ $0 }) { throw Self.notReplayable }
        let reader = RequestBodyReader(source: self)
        return .stream(length: length) { try await reader.next() }
    }

    /// The iterator of a new pass over the body; fails when a single-pass body was read already.
    fileprivate func makeIterator() throws -> HTTPBody.AsyncIterator {
        if body.iterationBehavior == .single {
            let wasClaimed = isClaimed.withLock { claimed in
                defer { claimed = true }
                return claimed
            }
            if wasClaimed { throw Self.notReplayable }
        }
        return body.makeAsyncIterator()
    }

    private static var notReplayable: AFError {
        .createUploadableFailed(error: LupineClientTransport.TransportError.requestBodyNotReplayable)
    }
}

/// One hop's pass over a request body, begun when the engine asks for the first part.
///
/// The engine asks for one part at a time from a single task (`TransportRequestBody.stream`), so
/// the iterator is never used by two callers at once.
private final class RequestBodyReader: @unchecked Sendable {
    private let source: RequestBodySource
    private var iterator: HTTPBody.AsyncIterator?

    init(source: RequestBodySource) {
        self.source = source
    }

    func next() async throws -> Data? {
        if iterator == nil { iterator = try source.makeIterator() }
        guard let chunk = try await iterator?.next() else { return nil }
        return Data(chunk)
    }
}
