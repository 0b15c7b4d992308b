import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import NIOConcurrencyHelpers

/// A `RequestEnvironment` with no Session and no socket: requests made by it run their real
/// pipeline (state machine, exchange events, redirects, challenges, the 304 replay, cancellation),
/// while each hop's exchange is a script (`ScriptedTransportTask`), the retry decisions are
/// scripted answers, and everything it was asked is recorded for the test to read.
///
/// Like a Session, it runs the request's work on a serial root queue of its own, and adds no
/// header fields, cookies or cache of its own. Keep it alive while its requests run: a request
/// holds its environment weakly, as it holds its Session.
final class ScriptedEnvironment: RequestEnvironment {
    /// What the environment was asked, in order.
    struct Record {
        /// Attempts prepared (the first and each retry).
        var attempts = 0
        /// The transport requests of the hops executed, in order.
        var sent: [TransportRequest] = []
        /// The request bodies of the hops executed as the transport sent them, in order (nil for
        /// none).
        var sentBodies: [Data?] = []
        /// The status codes of the heads recorded.
        var recordedHeads: [Int] = []
        /// The errors retry decisions were asked about.
        var retryQuestions: [AFError] = []
        /// Requests that finished and were let go.
        var finished = 0
        /// The requirements called off the root queue, which the protocol forbids for all but
        /// `recordHead`.
        var callsOffTheRootQueue: [String] = []
    }

    private struct Script {
        var exchanges: [[ScriptedStep]]
        var retryAnswers: [RetryResult]
        var cacheActions: [HTTPCacheAction]
    }

    /// The root queue: setup, hop planning and retries run here.
    let rootQueue = DispatchQueue(label: "lupine.tests.scriptedEnvironment")
    let defaults: RequestDefaults
    /// Runs on the root queue before each hop is planned: a test may cancel the request there.
    let beforeHop: (@Sendable (Request) -> Void)?
    private let script: NIOLockedValueBox<Script>
    private let record = NIOLockedValueBox(Record())

    /// - Parameters:
    ///   - exchanges: One script per hop, played in order; a hop beyond them fails to connect.
    ///   - retryAnswers: The answers to retry questions, in order; `.doNotRetry` beyond them.
    ///   - cacheActions: What the cache does for the hops of requests that use it, in order;
    ///     `.load` beyond them.
    ///   - beforeHop: Runs on the root queue before each hop is planned.
    init(exchanges: [[ScriptedStep]],
         retryAnswers: [RetryResult] = [],
         cacheActions: [HTTPCacheAction] = [],
         beforeHop: (@Sendable (Request) -> Void)? = nil) {
        script = NIOLockedValueBox(Script(exchanges: exchanges, retryAnswers: retryAnswers, cacheActions: cacheActions))
        self.beforeHop = beforeHop
        defaults = RequestDefaults(rootQueueRunner: RootQueueRunner(queue: rootQueue), serializesOnRootQueue: true,
                                   setsUpLazily: true, startsImmediately: true)
    }

    /// What the environment was asked so far.
    var recorded: Record { record.withLockedValue { $0 } }

    /// A data request for `url`, made as a Session makes one.
    func dataRequest(_ url: URL) -> DataRequest {
        let context = RequestContext(underlyingQueue: rootQueue,
                                     serializationQueue: DispatchQueue(label: "lupine.tests.serialization", target: rootQueue),
                                     eventMonitor: nil, interceptor: nil, environment: self, shouldAutomaticallyResume: nil,
                                     defaultQueue: rootQueue, defaults: defaults)
        return DataRequest(convertible: URLRequest(url: url), context: context)
    }

    /// Returns once the work queued on the root queue so far (monitor events included) has run.
    func drain() async {
        await withCheckedContinuation { continuation in rootQueue.async { continuation.resume() } }
    }

    // MARK: RequestEnvironment

    var requestDelegate: (any RequestDelegate)? { nil }

    func prepareAttempt(of request: Request) {
        noteQueue(of: "prepareAttempt")
        record.withLockedValue { $0.attempts += 1 }
        guard let convertible = request.urlRequestConvertible else {
            request.finish(error: .createURLRequestFailed(error: URLError(.unsupportedURL)))
            return
        }
        do {
            let urlRequest = try convertible.asURLRequest()
            request.didCreateInitialURLRequest(urlRequest)
            guard request.createsBodyBeforeSending else {
                request.didCreateURLRequest(urlRequest)
                return
            }
            createBody(thenSend: urlRequest, for: request)
        } catch {
            request.didFailToCreateURLRequest(with: error.asAFError ?? .createURLRequestFailed(error: error))
        }
    }

    /// Makes an upload's body for the attempt as a Session makes it: a multipart form that reads or
    /// writes files on the disk's threads, then back on the root queue; any other on the root queue.
    private func createBody(thenSend urlRequest: URLRequest, for request: Request) {
        let finish: @Sendable (AFError?) -> Void = { failure in
            if let failure {
                request.didFailToCreateBody(with: failure)
            } else {
                request.didCreateURLRequest(urlRequest)
            }
        }
        guard request.createsBodyOnDisk else {
            finish(request.createBody())
            return
        }
        DiskIO.run {
            let failure = request.createBody()
            self.defaults.rootQueueRunner.async { finish(failure) }
        }
    }

    func planHop(sending urlRequest: URLRequest, for request: Request, isRedirectHop: Bool) {
        noteQueue(of: "planHop")
        beforeHop?(request)
        let cacheAction: HTTPCacheAction? = request.usesHTTPCache ? script.withLockedValue { $0.cacheActions.popFirst() ?? .load } : nil
        let outgoing = OutgoingRequest(base: urlRequest, sessionFields: SessionHeaderFields(nil))
        request.sendHop(HopPlan(outgoing: outgoing, cacheAction: cacheAction, attemptDuration: nil), isRedirectHop: isRedirectHop)
    }

    func prepareHop(_ plan: HopPlan, for request: Request, start: StartedHop) throws -> PreparedHop {
        noteQueue(of: "prepareHop")
        guard plan.cacheAction?.replayed == nil else { return PreparedHop(plan: plan, urlProtocolClass: nil) }
        let base = plan.outgoing.base
        guard let url = base.url else { throw AFError.sessionTaskFailed(error: URLError(.badURL)) }
        let headerFields = plan.outgoing.headerFields.map { HTTPHeader(name: $0.key, value: $0.value) }
            + (plan.cacheAction?.conditionalHeaders ?? [])
        let body = try request.transportBody(for: base)
        let transportRequest = TransportRequest(url: url, method: HTTPMethod(rawValue: base.httpMethod ?? "GET"),
                                                headerFields: headerFields, body: body, deadline: start.deadline)
        return PreparedHop(plan: plan, urlProtocolClass: nil, transportRequest: transportRequest)
    }

    func execute(_ transportRequest: TransportRequest, of hop: PreparedHop, for request: Request,
                 events: any TransportEvents) -> any TransportTask {
        noteQueue(of: "execute")
        record.withLockedValue { $0.sent.append(transportRequest) }
        let steps = script.withLockedValue { $0.exchanges.popFirst() } ?? [.complete(URLError(.cannotConnectToHost))]
        let task = ScriptedTransportTask(steps: steps, events: events, request: request, body: transportRequest.body) { sent in
            self.record.withLockedValue { $0.sentBodies.append(sent) }
        }
        task.start()
        return task
    }

    func recordHead(_ head: TransportResponseHead, sentAs urlRequest: URLRequest) -> (@Sendable () -> Void)? {
        record.withLockedValue { $0.recordedHeads.append(head.statusCode) }
        return nil
    }

    /// Answers with the next scripted answer; a retry is scheduled as a Session schedules it,
    /// without its delay.
    func decideRetry(of request: Request, dueTo error: AFError, ifNotRetried: @escaping @Sendable (RetryResult) -> Void) {
        noteQueue(of: "decideRetry")
        record.withLockedValue { $0.retryQuestions.append(error) }
        let answer = script.withLockedValue { $0.retryAnswers.popFirst() } ?? .doNotRetry
        rootQueue.async {
            switch answer {
            case .retry, .retryWithDelay:
                guard request.scheduleRetry() else {
                    request.finish()
                    return
                }
                request.beginRetry()
            case .doNotRetry, .doNotRetryWithError:
                ifNotRetried(answer)
            }
        }
    }

    func requestDidFinish(_ request: Request) {
        noteQueue(of: "requestDidFinish")
        record.withLockedValue { $0.finished += 1 }
    }
}

extension ScriptedEnvironment {
    /// Records `requirement` when it was called off the root queue.
    private func noteQueue(of requirement: String) {
        guard !defaults.rootQueueRunner.isCurrent else { return }
        record.withLockedValue { $0.callsOffTheRootQueue.append(requirement) }
    }
}

private extension Array {
    /// Removes and returns the first element, if any.
    mutating func popFirst() -> Element? {
        isEmpty ? nil : removeFirst()
    }
}
