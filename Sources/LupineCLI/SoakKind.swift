import Foundation
import Lupine
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One kind of operation in the soak mix, with the outcome it must have.
///
/// The mix repeats every 100 operations: plain requests (tiny GETs, 64 KiB and 1 MiB bodies,
/// uploads, downloads to a file, a download resumed after its connection closed mid-body,
/// streams), TLS with a pinned certificate, HTTP/2, requests through an HTTP proxy (absolute form
/// and CONNECT) and a SOCKS5 proxy, WebSocket messages, server-sent events, and failures: a
/// validated 404, connections closed mid-body or reset, a malformed response, a refused
/// connection, timeouts, and cancellations.
enum SoakKind: String, CaseIterable, Sendable {
    case tinyGet = "tiny GET"
    case body64KiB = "64 KiB body"
    case body1MiB = "1 MiB body"
    case upload = "4 KiB upload"
    case downloadToFile = "download to file"
    case resumedDownload = "resumed download"
    case stream = "stream"
    case notFound = "404 validated"
    case closedMidBody = "closed mid-body"
    case refused = "connection refused"
    case timeout = "timeout"
    case cancelled = "cancelled"
    case pinnedTLS = "TLS, pinned"
    case http2 = "HTTP/2"
    case httpProxy = "HTTP proxy"
    case connectTunnel = "CONNECT tunnel"
    case socksProxy = "SOCKS proxy"
    case webSocket = "WebSocket messages"
    case serverSentEvents = "server-sent events"
    case reset = "reset"
    case malformed = "malformed response"
    case stalledBody = "stalled body"
    case faultThroughProxy = "fault through proxy"

    /// The kind of the operation with this index: the share of each kind per 100 operations.
    static func kind(for index: Int) -> SoakKind {
        switch index % 100 {
        case 0..<30: .tinyGet
        case 30..<36: .body64KiB
        case 36: .body1MiB
        case 37..<42: .upload
        case 42..<44: .downloadToFile
        case 44: .resumedDownload
        case 45..<48: .stream
        case 48..<52: .notFound
        case 52..<54: .closedMidBody
        case 54: .refused
        case 55: .timeout
        case 56..<62: .cancelled
        case 62..<72: .pinnedTLS
        case 72..<80: .http2
        case 80..<85: .httpProxy
        case 85..<88: .connectTunnel
        case 88..<91: .socksProxy
        case 91..<94: .webSocket
        case 94..<96: .serverSentEvents
        case 96: .reset
        case 97: .malformed
        case 98: .stalledBody
        default: .faultThroughProxy
        }
    }

    /// Performs one operation of this kind and names its outcome: "ok", or the error it ended with.
    /// - Returns: the outcome label and whether it is the outcome this kind must have.
    func run(index: Int, endpoints: SoakEndpoints) async -> (label: String, expected: Bool) {
        let session = endpoints.plain
        let baseURL = endpoints.baseURL
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
        case .resumedDownload:
            return await resumedDownload(index: index, session: session, baseURL: baseURL)
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
        case .pinnedTLS:
            return await get(endpoints.tlsURL.map { "\($0)/bytes/1024" }, through: endpoints.pinned)
        case .http2:
            return await get(endpoints.http2URL.map { "\($0)/get" }, through: endpoints.pinned)
        case .httpProxy:
            return await get("\(baseURL)/bytes/1024", through: endpoints.httpProxied)
        case .connectTunnel:
            return await get(endpoints.tlsURL.map { "\($0)/bytes/1024" }, through: endpoints.httpProxied)
        case .socksProxy:
            return await get("\(baseURL)/bytes/1024", through: endpoints.socksProxied)
        case .webSocket:
            return await webSocket(session: session, baseURL: baseURL)
        case .serverSentEvents:
            return await serverSentEvents(session: session, baseURL: baseURL)
        case .reset:
            return Self.label(await session.request("\(baseURL)/fault/reset").serializingData().response.error,
                              expecting: "URLError -1005")
        case .malformed:
            return Self.label(await session.request("\(baseURL)/fault/malformed-status").serializingData().response.error,
                              expecting: "URLError -1011")
        case .stalledBody:
            let request = session.request("\(baseURL)/fault/stall-body?bytes=512", requestModifier: { $0.timeoutInterval = 0.1 })
            return Self.label(await request.serializingData().response.error, expecting: "URLError -1001")
        case .faultThroughProxy:
            guard let proxied = endpoints.httpProxied else { return ("no endpoint", false) }
            return Self.label(await proxied.request("\(baseURL)/fault/close-mid-body").serializingData().response.error,
                              expecting: "URLError -1005")
        }
    }

    private func get(_ url: String?, through session: Session?) async -> (label: String, expected: Bool) {
        guard let url, let session else { return ("no endpoint", false) }
        return Self.label(await session.request(url).validate().serializingData().response.error, expecting: nil)
    }

    /// A download whose connection closes mid-body, then resumed from its resume data to the end.
    private func resumedDownload(index: Int, session: Session, baseURL: String) async -> (label: String, expected: Bool) {
        let size = 65536
        let url = "\(baseURL)/bytes/\(size)?seed=\(index % 1000)&close-after=\(size / 2)"
        let first = await session.download(url).serializingDownloadedFileURL().response
        guard let resumeData = first.resumeData else { return Self.label(first.error, expecting: "resume data") }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-soak-\(UUID().uuidString)")
        let cleanup = Termination.removeOnExit(file)
        defer {
            try? FileManager.default.removeItem(at: file)
            Termination.unregister(cleanup)
        }
        let resumed = await session.download(resumingWith: resumeData, to: { _, _ in (file, [.removePreviousFile]) })
            .validate().serializingDownloadedFileURL().response
        let written = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue
        if resumed.error == nil, written != size { return ("resumed to \(written ?? -1) bytes", false) }
        return Self.label(resumed.error, expecting: nil)
    }

    /// Three messages from the echo server, then its close.
    private func webSocket(session: Session, baseURL: String) async -> (label: String, expected: Bool) {
        let url = baseURL.replacingOccurrences(of: "http://", with: "ws://") + "/websocket/echo?messages=3&close-after=3"
        var messages = 0
        var failure: AFError?
        for await event in session.webSocketRequest(to: url).webSocketTask().streamingMessageEvents() {
            switch event.kind {
            case .receivedMessage: messages += 1
            case let .completed(completion): failure = completion.error
            default: break
            }
        }
        if failure == nil, messages != 3 { return ("\(messages) messages", false) }
        return Self.label(failure, expecting: nil)
    }

    /// Three events of a stream, read to its end.
    private func serverSentEvents(session: Session, baseURL: String) async -> (label: String, expected: Bool) {
        var events = 0
        do {
            for try await _ in session.serverSentEvents(from: "\(baseURL)/sse?count=3", reconnectionTime: 0.01,
                                                                  maximumReconnections: 0) { events += 1 }
        } catch {
            return Self.label(error.asAFError, expecting: nil)
        }
        return events == 3 ? ("ok", true) : ("\(events) events", false)
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
