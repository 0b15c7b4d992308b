import Foundation
import Lupine

/// Lupine, as an Alamofire user writes it.
public struct LupineClient: ScenarioClient {
    public init() {}
    public let name = "Lupine"
    let session = Session()

    public func get(_ url: String) async throws {
        _ = try await session.request(url).validate().serializingData().value
    }

    public func bodyByteCount(_ url: String) async throws -> Int {
        try await session.request(url).validate().serializingData().value.count
    }

    public func downloadByteCount(_ url: String) async throws -> Int {
        let destination = temporaryDownloadURL()
        let fileURL = try await session.download(url, to: { _, _ in (destination, []) })
            .validate().serializingDownloadedFileURL().value
        return try sizeOfFileThenRemove(fileURL)
    }

    public func post(_ body: Data, to url: String) async throws {
        _ = try await session.upload(body, to: url).validate().serializingData().value
    }
}
