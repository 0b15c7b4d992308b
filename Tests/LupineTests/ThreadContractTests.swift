import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import NIOCore
import NIOPosix
import Testing

/// The thread contract (DESIGN.md, "Threads"): user code never runs on an event loop. For each
/// kind of user code, while it blocks (2 s, and until the checks are done), every event loop of
/// the engine's group runs a task submitted to it within a second, and a request on another
/// Session completes: with the closure API while the Session's queues are idle and while they
/// are busy, and with the async API.
///
/// Each case runs its Sessions on an event-loop group of its own, so that what the probes measure
/// is these requests' loops, not the rest of the suite's traffic on the singleton group.
/// Serialized: each case blocks threads for 2 s.
@Suite(.serialized) struct ThreadContractTests {
    /// The event loops these tests' Sessions run on, watched by `EventLoopProbe`: a group of the
    /// suite's, never shut down (as the singleton the engine uses by default is not). A group shut
    /// down at the end of each test left Sessions still alive on it, whose deinit then closed
    /// their connections through a loop that no longer ran tasks: NIO dropped the task, and its
    /// promise's leak stopped a debug run of the suite once.
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)

    enum UserCode: String, CaseIterable, Sendable {
        case adapter, retrier, validator, serializer, eventMonitor, notificationObserver, redirectHandler
        case cachedResponseHandler, responseHeadHandler, downloadProgress, streamHandler, downloadDestination
    }

    @Test(arguments: UserCode.allCases)
    func userCodeBlockingForTwoSecondsLeavesEveryEventLoopFree(_ kind: UserCode) async throws {
        let server = try await testServer()
        let group = Self.group
        let runs = [Run(api: .closure, busyRootQueue: false, group: group), Run(api: .closure, busyRootQueue: true, group: group),
                    Run(api: .async, busyRootQueue: false, group: group)]
        // The three run at once, each on a Session of its own, each blocking once for 2 s.
        let gates = runs.map { _ in BlockingGate(seconds: 2) }
        var requests: [Task<Void, Never>] = []
        for (run, gate) in zip(runs, gates) {
            // The async API's user code runs on the awaiting task: that task runs on a thread of
            // its own, so that the 2 s it blocks are not taken from the cooperative pool the rest
            // of the suite (and the test server) runs on.
            let executor = ThreadOfItsOwn()
            requests.append(Task(executorPreference: executor) {
                await Self.perform(kind, run: run, gate: gate, server: server)
            })
        }
        for (run, gate) in zip(runs, gates) {
            #expect(await gate.waitUntilBlocking(timeout: 20), "\(kind) never ran (\(run))")
        }
        // Every run is blocked in the user's code now.
        let latencies = await EventLoopProbe.latencies(of: group)
        let worst = latencies.max() ?? .zero
        #expect(worst < .seconds(1), "\(kind): an event loop ran a task \(worst) after it was submitted")
        // It completes while the user's code still blocks: it waits for nothing of it (its time
        // is the machine's, which a loaded one stretches, so it is bounded loosely).
        let other = await Self.elapsedForAGETOnAnotherSession(server, group: group)
        #expect(other < .seconds(10), "\(kind): a request on another Session took \(other)")
        #expect(gates.allSatisfy { $0.isStillBlocking }, "\(kind): the block ended before the checks")
        gates.forEach { $0.release() }
        for request in requests { await request.value }
    }

    /// A cache store on a slow disk delays no other request: the file is written on the disk
    /// store's own queue, with neither a Session's queue nor an event loop waiting for it.
    @Test func aCacheStoreBlockedOnItsDiskDelaysNoOtherRequest() async throws {
        let server = try await testServer()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-slow-disk-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let group = Self.group
        let configuration = URLSessionConfiguration.af.ephemeral
        configuration.urlCache = URLCache(memoryCapacity: 0, diskCapacity: 10 << 20, diskPath: directory.path)
        let session = Self.session(configuration, eventMonitors: [], on: group)
        let gate = BlockingGate(seconds: 2)
        let name = directory.lastPathComponent, block = gate.block
        HTTPCacheDiskStore.writeHookForTests.withLockedValue { $0 = { cacheDirectory in if cacheDirectory.path.contains(name) { block() } } }
        defer { HTTPCacheDiskStore.writeHookForTests.withLockedValue { $0 = nil } }
        let stored = Task(executorPreference: ThreadOfItsOwn()) { await session.request(server.url("/cache/60")).serializingData().response }
        #expect(await gate.waitUntilBlocking(timeout: 20))
        let clock = ContinuousClock()
        let start = clock.now
        let other = await session.request(server.url("/get")).serializingData().response
        let elapsed = clock.now - start
        #expect(other.response?.statusCode == 200)
        #expect(elapsed < .seconds(10), "a request beside the slow store took \(elapsed)")
        #expect((await EventLoopProbe.latencies(of: group).max() ?? .zero) < .seconds(1))
        #expect(gate.isStillBlocking)
        gate.release()
        // The stored request waited for its file, and then it is there.
        #expect(await stored.value.response?.statusCode == 200)
        let again = await session.request(server.url("/cache/60")).serializingData().response
        #expect(again.response?.statusCode == 200)
        withExtendedLifetime(session) {}
    }

    // MARK: The runs

    enum API: Sendable { case closure, async }

    struct Run: Sendable, CustomStringConvertible {
        let api: API
        let busyRootQueue: Bool
        let group: MultiThreadedEventLoopGroup
        var description: String { "\(api) API, \(busyRootQueue ? "busy" : "idle") root queue" }
    }

    /// A Session whose engine runs on `group`.
    static func session(_ configuration: URLSessionConfiguration, eventMonitors: [any EventMonitor],
                        on group: MultiThreadedEventLoopGroup) -> Session {
        var engineConfiguration = ConnectionEngine.Configuration(sessionConfiguration: configuration)
        engineConfiguration.eventLoopGroup = group
        return Session(transport: ConnectionEngine(configuration: engineConfiguration), configuration: configuration,
                       eventMonitors: eventMonitors)
    }

    /// Makes a request whose `kind` of user code calls `gate.block()`, and waits for its end.
    private static func perform(_ kind: UserCode, run: Run, gate: BlockingGate, server: LupineTestServer) async {
        let block = gate.block
        let monitor = BlockingMonitor(block: block)
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let configuration = URLSessionConfiguration.af.ephemeral
        if kind == .cachedResponseHandler { configuration.urlCache = cache }
        let session = Self.session(configuration, eventMonitors: kind == .eventMonitor ? [monitor] : [AlamofireNotifications()],
                              on: run.group)
        if run.busyRootQueue {
            // The root queue is taken when the response arrives: its end is queued behind this.
            session.rootQueue.async { Thread.sleep(forTimeInterval: 0.2) }
        }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-contract-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        let observer = NotificationObserver(block: block)
        defer { observer.stop() }

        switch kind {
        case .downloadProgress, .downloadDestination:
            var request = session.download(server.url("/bytes/1024"), to: { temporaryURL, _ in
                if kind == .downloadDestination { block() }
                return (destination, [.removePreviousFile])
            })
            if kind == .downloadProgress { request = request.downloadProgress { _ in block() } }
            await finish(request, api: run.api)
        case .streamHandler:
            let request = session.streamRequest(server.url("/stream/2"))
            switch run.api {
            case .closure:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    request.responseStream { stream in
                        if case .complete = stream.event { continuation.resume() } else { block() }
                    }
                }
            case .async:
                for await _ in request.streamTask().streamingData() { block() }
            }
        default:
            let path = switch kind {
            case .retrier: "/status/503"
            case .redirectHandler: "/redirect/1"
            case .cachedResponseHandler: "/cache/60"
            default: "/get"
            }
            let interceptor: BlockingInterceptor? = switch kind {
            case .adapter: BlockingInterceptor(blocksIn: .adapt, block: block)
            case .retrier: BlockingInterceptor(blocksIn: .retry, block: block)
            default: nil
            }
            var request = session.request(server.url(path), interceptor: interceptor)
            switch kind {
            case .retrier: request = request.validate()
            case .validator:
                request = request.validate { _, _, _ -> Request.ValidationResult in
                    block()
                    return .success(())
                }
            case .redirectHandler: request = request.redirect(using: Redirector(behavior: .modify { _, next, _ in block(); return next }))
            case .cachedResponseHandler:
                request = request.cacheResponse(using: ResponseCacher(behavior: .modify { _, response in block(); return response }))
            case .responseHeadHandler: request = request.onHTTPResponse { _ in block() }
            case .notificationObserver: observer.watch(request)
            default: break
            }
            if kind == .serializer {
                let serializer = BlockingSerializer(block: block)
                switch run.api {
                case .closure:
                    await withCheckedContinuation { continuation in request.response(responseSerializer: serializer) { _ in continuation.resume() } }
                case .async:
                    _ = await request.serializingResponse(using: serializer).response
                }
            } else {
                await finish(request, api: run.api)
            }
        }
        withExtendedLifetime(session) {}
    }

    private static func finish(_ request: DataRequest, api: API) async {
        switch api {
        case .closure: await withCheckedContinuation { continuation in request.response { _ in continuation.resume() } }
        case .async: _ = await request.serializingData().response
        }
    }

    private static func finish(_ request: DownloadRequest, api: API) async {
        switch api {
        case .closure: await withCheckedContinuation { continuation in request.response { _ in continuation.resume() } }
        case .async: _ = await request.serializingDownloadedFileURL().response
        }
    }

    /// A small GET on a Session of its own, timed where its handler runs (not where the test's
    /// task resumes: the cooperative pool may be the blocked one).
    static func elapsedForAGETOnAnotherSession(_ server: LupineTestServer, group: MultiThreadedEventLoopGroup) async -> Duration {
        let other = Self.session(.af.default, eventMonitors: [AlamofireNotifications()], on: group)
        let clock = ContinuousClock()
        let start = clock.now
        let elapsed = await withCheckedContinuation { continuation in
            other.request(server.url("/get")).response { _ in continuation.resume(returning: clock.now - start) }
        }
        withExtendedLifetime(other) {}
        return elapsed
    }
}

/// A task executor with a serial queue of its own: a task that blocks on it blocks that thread
/// only.
final class ThreadOfItsOwn: TaskExecutor {
    private let queue = DispatchQueue(label: "lupine.test.threadOfItsOwn")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// Measures how late every event loop of the engine's group runs a task submitted to it, as
/// read on the loop itself.
enum EventLoopProbe {
    static func latencies(of group: MultiThreadedEventLoopGroup) async -> [Duration] {
        let loops = Array(group.makeIterator())
        return await withTaskGroup(of: Duration.self) { tasks in
            for loop in loops {
                tasks.addTask {
                    let clock = ContinuousClock()
                    let submitted = clock.now
                    return await withCheckedContinuation { continuation in
                        loop.execute { continuation.resume(returning: clock.now - submitted) }
                    }
                }
            }
            var all: [Duration] = []
            for await latency in tasks { all.append(latency) }
            return all
        }
    }
}

/// User code that blocks once, the first time it is called: for `seconds` at least, and until
/// the test has made its checks and `release()`s it (30 s at most); later calls return at once.
final class BlockingGate: Sendable {
    private let seconds: TimeInterval
    private let began = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let state = Locked<(calls: Int, ended: Bool)>((0, false))

    init(seconds: TimeInterval) { self.seconds = seconds }

    var block: @Sendable () -> Void {
        { [self] in
            let isFirst = state.withValue { state -> Bool in
                state.calls += 1
                return state.calls == 1
            }
            guard isFirst else { return }
            let start = Date()
            began.signal()
            _ = released.wait(timeout: .now() + 30)
            let left = seconds - Date().timeIntervalSince(start)
            if left > 0 { Thread.sleep(forTimeInterval: left) }
            state.withValue { $0.ended = true }
        }
    }

    /// Whether the block began within `timeout` seconds (waited for off the cooperative pool).
    func waitUntilBlocking(timeout: TimeInterval) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let began = self.began.wait(timeout: .now() + timeout) == .success
                if began { self.began.signal() }
                continuation.resume(returning: began)
            }
        }
    }

    /// Lets the block end (once its `seconds` are over).
    func release() { released.signal() }

    var isStillBlocking: Bool { state.withValue { $0.calls > 0 && !$0.ended } }
}

private struct BlockingSerializer: ResponseSerializer {
    let block: @Sendable () -> Void
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Data {
        block()
        return data ?? Data()
    }
}

private struct BlockingInterceptor: RequestInterceptor {
    enum Step { case adapt, retry }
    let blocksIn: Step
    let block: @Sendable () -> Void

    func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        if blocksIn == .adapt { block() }
        completion(.success(urlRequest))
    }

    func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void) {
        if blocksIn == .retry { block() }
        completion(.doNotRetry)
    }
}

private final class BlockingMonitor: EventMonitor, Sendable {
    let block: @Sendable () -> Void
    init(block: @escaping @Sendable () -> Void) { self.block = block }
    func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) { block() }
}

/// Blocks in a `NotificationCenter` observer of one request's `didCompleteTaskNotification`.
private final class NotificationObserver: @unchecked Sendable {
    private let block: @Sendable () -> Void
    private let watched = Locked<UUID?>(nil)
    private var token: NSObjectProtocol?

    init(block: @escaping @Sendable () -> Void) { self.block = block }

    func watch(_ request: Request) {
        watched.withValue { $0 = request.id }
        token = NotificationCenter.default.addObserver(forName: Request.didCompleteTaskNotification, object: nil, queue: nil) {
            [watched, block] notification in
            guard let id = watched.current, notification.request?.id == id else { return }
            block()
        }
    }

    func stop() {
        token.map(NotificationCenter.default.removeObserver)
    }
}
