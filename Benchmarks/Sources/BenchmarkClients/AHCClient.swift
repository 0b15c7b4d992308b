import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

/// Raw AsyncHTTPClient with its best API for each scenario: the async `execute` for bodies in
/// memory, `FileDownloadDelegate` for downloads.
public struct AHCClient: ScenarioClient {
    public init() {}
    public let name = "AHC"
    let client = HTTPClient(eventLoopGroupProvider: .singleton)

    public func get(_ url: String) async throws {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
        guard response.status == .ok else { throw ScenarioError.badStatus(Int(response.status.code)) }
        _ = try await response.body.collect(upTo: 1 << 20)
    }

    public func bodyByteCount(_ url: String) async throws -> Int {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(600))
        guard response.status == .ok else { throw ScenarioError.badStatus(Int(response.status.code)) }
        return try await response.body.collect(upTo: 1 << 30).readableBytes
    }

    public func downloadByteCount(_ url: String) async throws -> Int {
        let destination = temporaryDownloadURL()
        let delegate = try FileDownloadDelegate(path: destination.path)
        let request = try HTTPClient.Request(url: url)
        _ = try await client.execute(request: request, delegate: delegate).futureResult.get()
        return try sizeOfFileThenRemove(destination)
    }

    public func post(_ body: Data, to url: String) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(60))
        guard response.status == .ok else { throw ScenarioError.badStatus(Int(response.status.code)) }
        _ = try await response.body.collect(upTo: 1 << 20)
    }
}
