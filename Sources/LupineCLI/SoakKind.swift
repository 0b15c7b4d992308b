import Foundation
import Lupine
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One kind of request in the soak mix, with the outcome it must have.
///
/// The mix repeats every 100 requests: mostly tiny GETs, then 64 KiB and 1 MiB bodies, small
/// uploads, downloads to a file (removed afterwards), streams, and failures: a validated 404, a
/// connection closed mid-body, a refused connection, a timeout, and cancellations.
enum SoakKind: String, CaseIterable, Sendable {
    case tinyGet = "tiny GET"
    case body64KiB = "64 KiB body"
    case body1MiB = "1 MiB body"
    case upload = "4 KiB upload"
    case downloadToFile = "download to file"
    case stream = "stream"
    case notFound = "404 validated"
    case closedMidBody = "closed mid-body"
    case refused = "connection refused"
    case timeout = "timeout"
    case cancelled = "cancelled"

    /// The kind of the request with this index: the share of each kind per 100 requests.
    static func kind(for index: Int) -> SoakKind {
        switch index % 100 {
        case 0..<50: .tinyGet
        case 50..<60: .body64KiB
        case 60: .body1MiB
        case 61..<69: .upload
        case 69..<73: .downloadToFile
        case 73..<78: .stream
        case 78..<86: .notFound
        case 86..<89: .closedMidBody
        case 89: .refused
        case 90: .timeout
        default: .cancelled
        }
    }

    /// Sends one request of this kind and names its outcome: "ok", or the error it ended with.
    /// - Returns: the outcome label and whether it is the outcome this kind must have.
    func run(index: Int, session: Session, baseURL: String) async -> (label: String, expected: Bool) {
        switch self {
        case .tinyGet:
            return Self.label(await session.request("\(baseURL)/bytes/64").validate().serializingData().response.error,
                              expecting: nil)
        case .body64KiB:
            return Self.label(await session.request("\(baseURL)/bytes/65536").validate().serializingData().response.error,
                              expecting: nil)
        case .body1MiB:
            return Self.label(await session.request("\(baseURL)/bytes/1048576").validate().serializingData().response.error,
                              expecting: nil)
        case .upload:
            let body = Data(repeating: UInt8(index & 0xFF), count: 4096)
            return Self.label(await session.upload(body, to: "\(baseURL)/anything", method: .post).validate()
                .serializingData().response.error, expecting: nil)
        case .downloadToFile:
            return await download(index: index, session: session, baseURL: baseURL)
        case .stream:
            return await stream(session: session, baseURL: baseURL)
        case .notFound:
            return Self.label(await session.request("\(baseURL)/status/404").validate().serializingData().response.error,
                              expecting: "responseValidationFailed")
        case .closedMidBody:
            return Self.label(await session.request("\(baseURL)/fault/close-mid-body").serializingData().response.error,
                              expecting: "URLError -1005")
        case .refused:
            // Port 1 (tcpmux) is closed on any ordinary machine: the connect is refused at once.
            return Self.label(await session.request("http://127.0.0.1:1/get").serializingData().response.error,
                              expecting: "URLError -1004")
        case .timeout:
            let request = session.request("\(baseURL)/delay/2", requestModifier: { $0.timeoutInterval = 0.05 })
            return Self.label(await request.serializingData().response.error, expecting: "URLError -1001")
        case .cancelled:
            let request = session.request("\(baseURL)/delay/1")
            if index % 2 == 0 {
                request.cancel()
            } else {
                try? await Task.sleep(nanoseconds: 2_000_000)
                request.cancel()
            }
            return Self.label(await request.serializingData().response.error, expecting: "explicitlyCancelled")
        }
    }

    private func download(index: Int, session: Session, baseURL: String) async -> (label: String, expected: Bool) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-soak-\(UUID().uuidString)")
        let cleanup = Termination.removeOnExit(file)
        let response = await session.download("\(baseURL)/bytes/32768", to: { _, _ in (file, [.removePreviousFile]) })
            .validate().serializingDownloadedFileURL().response
        try? FileManager.default.removeItem(at: file)
        Termination.unregister(cleanup)
        var result = Self.label(response.error, expecting: nil)
        if result.expected, response.fileURL == nil { result = ("no file", false) }
        return result
    }

    private func stream(session: Session, baseURL: String) async -> (label: String, expected: Bool) {
        var received = 0
        var failure: AFError?
        for await stream in session.streamRequest("\(baseURL)/stream-bytes/65536").validate().streamTask().streamingData() {
            switch stream.event {
            case let .stream(.success(chunk)): received += chunk.count
            case let .complete(completion): failure = completion.error
            }
        }
        if failure == nil, received != 65536 { return ("short stream", false) }
        return Self.label(failure, expecting: nil)
    }

    /// "ok" or a short name of `error`, and whether it is the one expected (nil: success).
    static func label(_ error: AFError?, expecting expected: String?) -> (label: String, expected: Bool) {
        guard let error else { return ("ok", expected == nil) }
        let name: String
        if let code = error.sessionTaskURLErrorCode {
            name = "URLError \(code.rawValue)"
        } else {
            // The case name: the label of the payload, or the case itself when it has none.
            name = Mirror(reflecting: error).children.first?.label ?? String(describing: error)
        }
        return (name, name == expected)
    }
}

extension AFError {
    /// The code of the URLError a transport failure wraps.
    fileprivate var sessionTaskURLErrorCode: URLError.Code? {
        guard case let .sessionTaskFailed(error) = self else { return nil }
        return (error as? URLError)?.code
    }
}
