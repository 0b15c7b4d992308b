import Foundation
import Lupine

/// Lupine, as an Alamofire user writes it with the closure API: `responseData { }` and
/// `response { }` on the Session's default queue, each bridged to async by a checked continuation.
/// The same work as `LupineClient`, reported separately (issue #41).
public struct LupineClosureClient: ScenarioClient {
    public init() {}
    public let name = "LupineClosure"
    let sessions = LupineSessions()

    public func get(_ url: String) async throws {
        _ = try await data(of: url)
    }

    public func bodyByteCount(_ url: String) async throws -> Int {
        try await data(of: url).count
    }

    public func downloadByteCount(_ url: String) async throws -> Int {
        let session = try sessions.session(for: url)
        let destination = temporaryDownloadURL()
        let fileURL: URL? = try await withCheckedThrowingContinuation { continuation in
            session.download(url, to: { _, _ in (destination, []) }).validate().response { response in
                continuation.resume(with: response.result)
            }
        }
        guard let fileURL else { throw ScenarioError.wrongSize(-1) }
        return try sizeOfFileThenRemove(fileURL)
    }

    public func post(_ body: Data, to url: String) async throws {
        let session = try sessions.session(for: url)
        _ = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            session.upload(body, to: url).validate().responseData { continuation.resume(with: $0.result) }
        }
    }

    private func data(of url: String) async throws -> Data {
        let session = try sessions.session(for: url)
        return try await withCheckedThrowingContinuation { continuation in
            session.request(url).validate().responseData { continuation.resume(with: $0.result) }
        }
    }
}
