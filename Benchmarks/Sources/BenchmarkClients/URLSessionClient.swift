import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession (swift-corelibs-foundation's, on curl, on Linux): what Alamofire runs on there.
///
/// It sits S9 out: corelibs URLSession hands no server-trust challenge to its delegate and has no
/// setting for a root of one's own (curl's CA file is out of its reach), so it cannot trust S9's
/// self-signed certificate.
public struct URLSessionClient: ScenarioClient {
    public init() {}
    public let name = "URLSession"
    public var trustsBenchmarkCertificate: Bool { false }
    let session: URLSession = {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }()

    public func get(_ url: String) async throws {
        _ = try await data(for: URLRequest(url: try parsed(url)))
    }

    public func bodyByteCount(_ url: String) async throws -> Int {
        try await data(for: URLRequest(url: try parsed(url))).count
    }

    public func downloadByteCount(_ url: String) async throws -> Int {
        let request = URLRequest(url: try parsed(url))
        let destination = temporaryDownloadURL()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            session.downloadTask(with: request) { location, response, error in
                do {
                    if let error { throw error }
                    try Self.checkStatus(response)
                    guard let location else { throw ScenarioError.wrongSize(-1) }
                    try FileManager.default.moveItem(at: location, to: destination)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }.resume()
        }
        return try sizeOfFileThenRemove(destination)
    }

    public func post(_ body: Data, to url: String) async throws {
        var request = URLRequest(url: try parsed(url))
        request.httpMethod = "POST"
        request.httpBody = body
        _ = try await data(for: request)
    }

    private func parsed(_ url: String) throws -> URL {
        guard let parsed = URL(string: url) else { throw URLError(.badURL) }
        return parsed
    }

    private func data(for request: URLRequest) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                do {
                    if let error { throw error }
                    try Self.checkStatus(response)
                    continuation.resume(returning: data ?? Data())
                } catch {
                    continuation.resume(throwing: error)
                }
            }.resume()
        }
    }

    private static func checkStatus(_ response: URLResponse?) throws {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw ScenarioError.badStatus(status) }
    }
}
