import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// `cancel()`, `suspend()` and `resume()` called from inside every monitor event and every kind
/// of handler, many times over: the request ends, its handler runs once, and its lifetime events
/// are those of Alamofire (a cancelled request reports its cancellation and finishes, once).
///
/// Alamofire's own suite cancels from `ClosureEventMonitor` callbacks: on Lupine that once ended
/// the exchange, entered the root queue synchronously from the transport's thread while the
/// callback held it, and the process died in `__DISPATCH_WAIT_FOR_QUEUE__`.
@Suite struct LifecycleFromCallbacksTests {
    enum Action: String, CaseIterable, Sendable {
        case cancel, suspendThenResume, resume
    }

    enum Place: String, CaseIterable, Sendable {
        // Monitor events of a successful GET, in the order they come.
        case didCreateInitialURLRequest, didCreateURLRequest, didCreateTask, didResume, didResumeTask
        case didResumeExchange, didSendURLRequest, didReceiveResponse, didValidate, didCompleteAttempt
        case didCompleteTask, didFinish, didParseResponse
        // Handlers.
        case validator, serializer, responseHeadHandler, downloadProgress, redirectHandler, adapter, retrier
    }

    static let rounds = 10

    @Test(arguments: Place.allCases, Action.allCases)
    func requestEndsOnceWhenTheCallbackActsOnIt(_ place: Place, _ action: Action) async throws {
        let server = try await testServer()
        for round in 0..<Self.rounds {
            let monitor = ActingMonitor(place: place, action: action)
            let session = Session(eventMonitors: [monitor])
            let act: @Sendable (Request) -> Void = { request in action.perform(on: request) }
            let path = switch place {
            case .redirectHandler: "/redirect/1"
            case .retrier: "/status/503"
            default: "/get"
            }
            let interceptor: ActingInterceptor? = switch place {
            case .adapter, .retrier: ActingInterceptor(place: place, act: act)
            default: nil
            }
            var request = session.request(server.url(path), interceptor: interceptor)
            monitor.watch(request)
            interceptor?.watch(request)
            request = request.validate { [weak acting = request] _, _, _ -> Request.ValidationResult in
                if place == .validator, let acting { act(acting) }
                return .success(())
            }
            if place == .retrier { request = request.validate(statusCode: [200]) }
            let acting = request
            if place == .responseHeadHandler { request = request.onHTTPResponse { [weak acting] _ in if let acting { act(acting) } } }
            if place == .downloadProgress { request = request.downloadProgress { [weak acting] _ in if let acting { act(acting) } } }
            if place == .redirectHandler {
                request = request.redirect(using: Redirector(behavior: .modify { [weak acting] _, next, _ in
                    if let acting { act(acting) }
                    return next
                }))
            }
            let calls = Locked(0)
            let serializerAct: @Sendable () -> Void
            if place == .serializer {
                serializerAct = { [weak request] in if let request { act(request) } }
            } else {
                serializerAct = {}
            }
            let serializer = ActingSerializer(act: serializerAct)
            let handled = request
            let response: AFDataResponse<Data> = await withCheckedContinuation { continuation in
                handled.response(responseSerializer: serializer) { response in
                    if calls.increment() == 1 { continuation.resume(returning: response) }
                }
            }
            // Every event, the handlers' included, has been delivered once the monitor saw the
            // parse: it is the last.
            #expect(await waitUntil { monitor.count(of: "didParseResponse") == 1 }, "round \(round)")
            try await Task.sleep(nanoseconds: 20_000_000)
            #expect(calls.current == 1, "\(place) \(action) round \(round): the handler ran \(calls.current) times")
            #expect(monitor.count(of: "didFinish") == 1, "\(place) \(action) round \(round)")
            let state = request.state
            if state == .cancelled {
                #expect(action == .cancel, "\(place) \(action) round \(round)")
                #expect(await waitUntil { monitor.count(of: "didCancel") == 1 }, "\(place) round \(round)")
                if place.cancelsBeforeTheOutcomeIsRead {
                    #expect(response.error != nil, "\(place) round \(round): a request cancelled before its end succeeded")
                }
            } else {
                // Cancelled once finished changes nothing, as in Alamofire.
                #expect(state == .finished, "\(place) \(action) round \(round): \(state)")
                #expect(monitor.count(of: "didCancel") == 0, "\(place) \(action) round \(round)")
            }
            withExtendedLifetime(session) {}
        }
    }
}

extension LifecycleFromCallbacksTests.Place {
    /// Code that runs before the request's outcome is read, on the request's own path: a
    /// cancellation there always reaches the response. (A monitor runs on its own queue, and a
    /// cancellation from it may come after the outcome was read, in Alamofire too.)
    var cancelsBeforeTheOutcomeIsRead: Bool {
        switch self {
        case .validator, .adapter, .retrier, .redirectHandler: true
        default: false
        }
    }
}

extension LifecycleFromCallbacksTests.Action {
    func perform(on request: Request) {
        switch self {
        case .cancel: request.cancel()
        case .suspendThenResume: request.suspend().resume()
        case .resume: request.resume()
        }
    }
}

/// Records every event of one request and acts on it from the event named by `place`.
private final class ActingMonitor: EventMonitor, @unchecked Sendable {
    private let place: LifecycleFromCallbacksTests.Place
    private let action: LifecycleFromCallbacksTests.Action
    private let events = Locked<[String]>([])
    private let watched = Locked<ObjectIdentifier?>(nil)
    private let didAct = Locked(false)

    init(place: LifecycleFromCallbacksTests.Place, action: LifecycleFromCallbacksTests.Action) {
        self.place = place
        self.action = action
    }

    func watch(_ request: Request) { watched.withValue { $0 = ObjectIdentifier(request) } }
    var acted: Bool { didAct.current }
    func count(of event: String) -> Int { events.current.filter { $0 == event }.count }

    private func saw(_ event: String, _ request: Request) {
        events.withValue { $0.append(event) }
        guard event == place.rawValue, watched.current == ObjectIdentifier(request) else { return }
        // Once: a resume from inside `didResume` would otherwise answer itself for ever.
        guard didAct.withValue({ acted in defer { acted = true }; return !acted }) else { return }
        action.perform(on: request)
    }

    func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) { saw("didCreateInitialURLRequest", request) }
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) { saw("didCreateURLRequest", request) }
    func request(_ request: Request, didCreateTask task: URLSessionTask) { saw("didCreateTask", request) }
    func requestDidResume(_ request: Request) { saw("didResume", request) }
    func request(_ request: Request, didResumeTask task: URLSessionTask) { saw("didResumeTask", request) }
    func requestDidResumeExchange(_ request: Request) { saw("didResumeExchange", request) }
    func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) { saw("didSendURLRequest", request) }
    func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) { saw("didReceiveResponse", request) }
    func request(_ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
                 withResult result: Request.ValidationResult) { saw("didValidate", request) }
    func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) { saw("didCompleteAttempt", request) }
    func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) { saw("didCompleteTask", request) }
    func requestDidFinish(_ request: Request) { saw("didFinish", request) }
    func requestDidCancel(_ request: Request) { saw("didCancel", request) }
    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
        saw("didParseResponse", request)
    }
}

private final class ActingInterceptor: RequestInterceptor, @unchecked Sendable {
    private let place: LifecycleFromCallbacksTests.Place
    private let act: @Sendable (Request) -> Void
    private let watched = Locked<Request?>(nil)
    private let didAct = Locked(false)

    init(place: LifecycleFromCallbacksTests.Place, act: @escaping @Sendable (Request) -> Void) {
        self.place = place
        self.act = act
    }

    func watch(_ request: Request) { watched.withValue { $0 = request } }
    var acted: Bool { didAct.current }

    func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
        if place == .adapter, let request = watched.withValue({ $0.take() }) {
            didAct.withValue { $0 = true }
            act(request)
        }
        completion(.success(urlRequest))
    }

    func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void) {
        if place == .retrier, watched.withValue({ $0.take() }) != nil {
            didAct.withValue { $0 = true }
            act(request)
        }
        completion(.doNotRetry)
    }
}

private struct ActingSerializer: ResponseSerializer {
    let act: @Sendable () -> Void
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Data {
        act()
        if let error { throw error }
        return data ?? Data()
    }
}
