import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Raw AsyncHTTPClient with its best API for each scenario: the async `execute` for bodies in
/// memory, `FileDownloadDelegate` for downloads.
///
/// S9's https URLs go through a second `HTTPClient` whose TLS configuration trusts the
/// benchmark's certificate (`BenchmarkCertificate`) as its only root, with full verification
/// (the certificate names 127.0.0.1), and whose `httpVersion` is `.automatic`: ALPN offers h2.
public struct AHCClient: ScenarioClient {
    public init() {}
    public let name = "AHC"
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    /// Nil when no certificate is named or it cannot be read: S9 then fails with
    /// `ScenarioError.noTrustedCertificate`.
    let pinnedClient: HTTPClient? = {
        guard let path = BenchmarkCertificate.path, let certificates = try? NIOSSLCertificate.fromPEMFile(path),
              !certificates.isEmpty else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(certificates)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    public func get(_ url: String) async throws {
        let response = try await client(for: url).execute(HTTPClientRequest(url: url), timeout: .seconds(60))
        guard response.status == .ok else { throw ScenarioError.badStatus(Int(response.status.code)) }
        _ = try await response.body.collect(upTo: 1 << 20)
    }

    public func bodyByteCount(_ url: String) async throws -> Int {
        let response = try await client(for: url).execute(HTTPClientRequest(url: url), timeout: .seconds(600))
        guard response.status == .ok else { throw ScenarioError.badStatus(Int(response.status.code)) }
        return try await response.body.collect(upTo: 1 << 30).readableBytes
    }

    public func downloadByteCount(_ url: String) async throws -> Int {
        let destination = temporaryDownloadURL()
        let delegate = try FileDownloadDelegate(path: destination.path)
        let request = try HTTPClient.Request(url: url)
        _ = try await client(for: url).execute(request: request, delegate: delegate).futureResult.get()
        return try sizeOfFileThenRemove(destination)
    }

    public func post(_ body: Data, to url: String) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client(for: url).execute(request, timeout: .seconds(60))
        guard response.status == .ok else { throw ScenarioError.badStatus(Int(response.status.code)) }
        _ = try await response.body.collect(upTo: 1 << 20)
    }

    /// The pinned client for https, the plain one for http.
    private func client(for url: String) throws -> HTTPClient {
        guard url.hasPrefix("https:") else { return client }
        guard let pinnedClient else { throw ScenarioError.noTrustedCertificate }
        return pinnedClient
    }
}
