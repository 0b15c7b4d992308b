import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// One cell of the fault matrix, set up: the faulty server (or proxy), the proxy in between if any,
/// and a Session with short timeouts.
struct CellRun {
    /// The request timeout (longest quiet period), also bounding the connect and TLS handshake.
    static let requestTimeout: TimeInterval = 2
    /// The resource timeout: what ends a transfer that trickles forever.
    static let resourceTimeout: TimeInterval = 4
    /// The timeouts of a waiter that must outlast the occupant of its connection (the pool-wait
    /// cells where the occupant's connection ends): the waiter waits through the occupant's
    /// connect and exchange, then makes its own, which a loaded machine stretched past 2 s.
    static let outlastingRequestTimeout: TimeInterval = 8
    static let outlastingResourceTimeout: TimeInterval = 10
    /// The size of the file uploaded in the request-body phase: more than the socket buffers hold
    /// while the server reads nothing.
    static let uploadBytes = 8 << 20

    let cell: FaultMatrixTests.Cell
    let server: LupineFaultServer
    let proxy: LupineTestProxy?
    /// The origin's port on a proxied path whose proxy fails at connect: never reached, and held
    /// refusing until the cell ends so that nothing else answers there meanwhile.
    let refusingOrigin: RefusingLoopbackPort?
    let session: Session
    let url: String
    /// The port the client connects to (the proxy's, on proxied paths).
    let clientPort: Int
    /// Sockets towards `clientPort` open before the request.
    let baseline: Set<Int>
    /// The local ports of the sockets that fill a never-accepting listener's queue: they stay open
    /// until the server shuts down, and are never the client's. (The socket table is read only in
    /// part, so the baseline alone may miss them and see them later.)
    let queuedClientPorts: Set<Int>

    struct Observed {
        var outcome: FaultMatrixTests.Outcome
        var hung = false
    }

    static func start(_ cell: FaultMatrixTests.Cell) async throws -> CellRun {
        let path = cell.path
        let plan = FaultPlan(cell.phase.serverPhase, cell.kind, faultedConnections: cell.phase == .poolWait ? 1 : nil)
        let tls = path.usesTLS ? try LupineTestServerTLS(certificateChainFile: TLSFixture.path("chain.pem"),
                                                         privateKeyFile: TLSFixture.path("leaf-key.pem")) : nil
        // At connect on a proxied path, the proxy is what fails; the origin is never reached.
        let proxyFails = cell.phase == .connect && [.httpProxy, .connectTunnel, .socks, .webSocketThroughProxy].contains(path)
        let server = try await LupineFaultServer.start(plan, tls: proxyFails ? nil : tls, http2: path == .http2)
        var proxy: LupineTestProxy?
        var proxyPort: Int?
        switch path {
        case .httpProxy, .connectTunnel, .webSocketThroughProxy:
            if proxyFails {
                proxyPort = server.port
            } else {
                let started = try await LupineTestProxy.start(connectPorts: nil)
                proxy = started
                proxyPort = started.port
            }
        case .socks:
            if proxyFails {
                proxyPort = server.port
            } else {
                let started = try await LupineTestProxy.start(kind: .socks5)
                proxy = started
                proxyPort = started.port
            }
        default:
            break
        }

        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = requestTimeout
        configuration.timeoutIntervalForResource = resourceTimeout
        if cell.phase == .poolWait {
            configuration.httpMaximumConnectionsPerHost = 1
            // Only the waiter's request timeout may end a silence; nothing needs the resource one.
            configuration.timeoutIntervalForResource = outlastingResourceTimeout
        }
        if let proxyPort {
            configuration.connectionProxyDictionary = path == .socks
                ? ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": proxyPort]
                : ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": proxyPort,
                   "HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": proxyPort]
        }
        let trust: ServerTrustManager? = path.usesTLS && path != .httpsDefault
            ? ServerTrustManager(evaluators: ["127.0.0.1": SharedTrustEvaluator(TestCATrustEvaluator(anchors: [try TLSFixture.certificate("ca.der")]))])
            : nil
        let session = Session(configuration: configuration, serverTrustManager: trust)
        let refusingOrigin = proxyFails ? try RefusingLoopbackPort() : nil
        let originPort = refusingOrigin?.port ?? server.port
        let scheme = path.isWebSocket ? "ws" : (path.usesTLS ? "https" : "http")
        let url = "\(scheme)://127.0.0.1:\(originPort)/\(cell.phase.rawValue)/\(cell.kind.rawValue)"
        let clientPort = proxyPort ?? server.port
        let queued = server.queuedClientPorts
        return CellRun(cell: cell, server: server, proxy: proxy, refusingOrigin: refusingOrigin, session: session,
                       url: url, clientPort: clientPort,
                       baseline: ClientSockets.open(toPorts: [clientPort], excludingLocalPorts: queued) ?? [],
                       queuedClientPorts: queued)
    }

    // MARK: Performing

    /// Makes the cell's request(s) and reports what the caller saw; a watchdog cancels a request
    /// that has no outcome after 20 s and reports a hang.
    func perform() async -> Observed {
        await withTaskGroup(of: Observed?.self) { group in
            group.addTask { await performRequests() }
            group.addTask {
                try? await Task.sleep(for: .seconds(20))
                return Task.isCancelled ? nil : Observed(outcome: .other("hang"), hung: true)
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            if first?.hung == true { await session.shutdown(gracePeriod: .zero) }
            return first ?? Observed(outcome: .other("no outcome"))
        }
    }

    private func performRequests() async -> Observed {
        if cell.path.isWebSocket { return await performWebSocket() }
        switch cell.phase {
        case .poolWait:
            return await performPoolWait()
        case .requestBody:
            return await performUpload()
        case .responseBody:
            return await performDownload()
        default:
            let response = await session.request(url).validate().serializingData().response
            return Observed(outcome: .init(response.error))
        }
    }

    private func performPoolWait() async -> Observed {
        // The occupant's own timeout is long: only the waiter's may end the silence.
        let occupant = session.request(url + "?occupant", requestModifier: { $0.timeoutInterval = 30 })
        let occupantTask = occupant.serializingData()
        let waiterTimeout: TimeInterval
        if cell.kind == .silence {
            // Two requests made one after the other can reach the pool in either order (their
            // setups hop through other queues, slowly on a loaded machine). A waiter first took the
            // silent connection, and the occupant a healthy one left open after the cell. A silent
            // occupant holds its connection for good: the waiter goes once the server has its request.
            guard await waitUntil(timeout: 10, { server.requestsReceived >= 1 }) else {
                occupant.cancel()
                _ = await occupantTask.response
                return Observed(outcome: .other("the occupant's request never reached the server"))
            }
            waiterTimeout = Self.requestTimeout
        } else {
            // Made at once, so that the waiter waits while the occupant's connection ends.
            waiterTimeout = Self.outlastingRequestTimeout
        }
        let waiter = await session.request(url + "?waiter", requestModifier: { $0.timeoutInterval = waiterTimeout })
            .validate().serializingData().response
        occupant.cancel()
        let occupantResponse = await occupantTask.response
        // The occupant's connection is the faulted one: served, it was not the occupant.
        if occupantResponse.error == nil {
            return Observed(outcome: .other("the occupant was served: the waiter took the faulted connection (waiter: \(FaultMatrixTests.Outcome(waiter.error)))"))
        }
        return Observed(outcome: .init(waiter.error))
    }

    private func performUpload() async -> Observed {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fault-matrix-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: file) else { return Observed(outcome: .other("no upload file")) }
        try? handle.truncate(atOffset: UInt64(Self.uploadBytes))
        try? handle.close()
        let response = await session.upload(file, to: url).validate().serializingData().response
        return Observed(outcome: .init(response.error))
    }

    private func performDownload() async -> Observed {
        let request = session.download(url)
        let response = await request.validate().serializingDownloadedFileURL().response
        // A failed download keeps its partial file only for its resume data; nothing else may remain.
        let kept = response.resumeData.flatMap { ResumeData(data: $0)?.usablePartialFile }
        let prefix = DownloadFiles.prefix + request.id.uuidString
        let left = (try? FileManager.default.contentsOfDirectory(atPath: DownloadFiles.directory.path))?
            .filter { $0.hasPrefix(prefix) && $0 != kept?.lastPathComponent } ?? []
        #expect(left.isEmpty, "\(cell.testDescription): temporary files left: \(left)")
        if let kept { try? FileManager.default.removeItem(at: kept) }
        if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
        return Observed(outcome: .init(response.error))
    }

    private func performWebSocket() async -> Observed {
        // Pings only where nothing else can end a silent connection: a dripping server does not answer them.
        let configuration = WebSocketRequest.Configuration(maximumMessageSize: 1024, pingInterval: cell.kind == .silence ? 0.5 : nil)
        let request = session.webSocketRequest(to: url, configuration: configuration)
        let events = await webSocketEvents(of: request)
        // The event sequence must end with its completion: without one there is no outcome.
        guard let completion = events.last?.completion else {
            return Observed(outcome: .other("no completion event after \(events.map(\.summary))"))
        }
        let error = completion.error
        if cell.kind == .drip, cell.phase == .webSocketFrames {
            #expect(events.contains { $0.summary == "text:0123456789abcdef" }, "\(cell.testDescription): \(events.map(\.summary))")
        }
        return Observed(outcome: .init(error))
    }

    /// On a proxied path, whether the request reached the proxy (the faulty one at connect).
    var wentThroughProxy: Bool {
        switch cell.path {
        case .httpProxy, .connectTunnel, .socks, .webSocketThroughProxy:
            return proxy.map { !$0.records.isEmpty } ?? (server.acceptedConnections > 0 || cell.kind == .silence)
        default:
            return true
        }
    }

    // MARK: Ending

    /// Checks that no socket towards the server stays open (a failed exchange closes its
    /// connection at once; others are closed by shutting the Session down), then shuts everything down.
    func finish(expectingOpenConnections: Bool) async {
        if !expectingOpenConnections {
            let leaked = await ClientSockets.leaked(toPorts: [clientPort], beyond: baseline, excludingLocalPorts: queuedClientPorts)
            #expect(leaked.isEmpty, "\(cell.testDescription): \(leaked.count) socket(s) still open after the failure")
        }
        await session.shutdown(gracePeriod: .seconds(1))
        let leaked = await ClientSockets.leaked(toPorts: [clientPort], beyond: baseline, excludingLocalPorts: queuedClientPorts)
        #expect(leaked.isEmpty, "\(cell.testDescription): \(leaked.count) socket(s) still open after the Session shut down")
        try? await proxy?.shutdown()
        try? await server.shutdown()
        refusingOrigin?.close()
    }
}

/// An evaluator with an identity (a class), so that its requests share pooled connections: a
/// value-type evaluator gets a connection of its own for each request.
final class SharedTrustEvaluator: ServerTrustEvaluating {
    private let evaluator: TestCATrustEvaluator

    init(_ evaluator: TestCATrustEvaluator) {
        self.evaluator = evaluator
    }

    func evaluate(_ trust: SecTrust, forHost host: String) throws {
        try evaluator.evaluate(trust, forHost: host)
    }
}
