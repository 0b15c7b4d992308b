import Foundation

/// What each client under comparison does in the scenarios.
public protocol ScenarioClient: Sendable {
    var name: String { get }
    /// GETs a small body into memory.
    func get(_ url: String) async throws
    /// GETs a body into memory and returns its length.
    func bodyByteCount(_ url: String) async throws -> Int
    /// GETs a body into a file and returns the file's length (the file is removed).
    func downloadByteCount(_ url: String) async throws -> Int
    /// POSTs `body` and reads the response.
    func post(_ body: Data, to url: String) async throws
    /// Whether the client can trust the benchmark's own certificate (`BenchmarkCertificate`)
    /// without turning verification off, as S9 needs.
    var trustsBenchmarkCertificate: Bool { get }
}

extension ScenarioClient {
    public var trustsBenchmarkCertificate: Bool { true }
}

public enum ScenarioError: Error {
    case wrongSize(Int)
    case badStatus(Int)
    /// An https URL, and no certificate to trust in LUPINE_BENCH_TLS_CERTIFICATE.
    case noTrustedCertificate
    /// S9, and no HTTP/2 server in LUPINE_BENCH_H2_URL.
    case noHTTP2Server
}

/// A file name in the temporary directory for one download.
public func temporaryDownloadURL() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("lupine-bench-\(UUID().uuidString)")
}

/// The length of a file, which is then removed.
public func sizeOfFileThenRemove(_ url: URL) throws -> Int {
    defer { try? FileManager.default.removeItem(at: url) }
    let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber
    return size?.intValue ?? -1
}
