import Foundation
import Lupine

/// Lupine, as an Alamofire user writes it with the async API (`serializingData().value`).
public struct LupineClient: ScenarioClient {
    public init() {}
    public let name = "Lupine"
    let sessions = LupineSessions()

    public func get(_ url: String) async throws {
        _ = try await sessions.session(for: url).request(url).validate().serializingData().value
    }

    public func bodyByteCount(_ url: String) async throws -> Int {
        try await sessions.session(for: url).request(url).validate().serializingData().value.count
    }

    public func downloadByteCount(_ url: String) async throws -> Int {
        let destination = temporaryDownloadURL()
        let fileURL = try await sessions.session(for: url).download(url, to: { _, _ in (destination, []) })
            .validate().serializingDownloadedFileURL().value
        return try sizeOfFileThenRemove(fileURL)
    }

    public func post(_ body: Data, to url: String) async throws {
        _ = try await sessions.session(for: url).upload(body, to: url).validate().serializingData().value
    }
}
