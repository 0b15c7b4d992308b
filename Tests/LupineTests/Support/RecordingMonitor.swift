import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine

/// Records the name of each event it receives, with the request, the queue and the payloads that
/// tests look at.
final class RecordingMonitor: EventMonitor, @unchecked Sendable {
    struct Event: Sendable {
        let name: String
        let requestID: UUID
        let onMonitorQueue: Bool
        let onMainThread: Bool
        var urlRequest: URLRequest?
    }

    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    private let ownQueue: DispatchQueue?
    private let recorded = Locked<[Event]>([])
    private let recordedTimelines = Locked<[Timeline]>([])

    /// A monitor on `queue`; nil keeps the protocol's default queue.
    init(queue: DispatchQueue? = DispatchQueue(label: "test.monitor")) {
        ownQueue = queue
        queue?.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    var queue: DispatchQueue { ownQueue ?? defaultQueue }

    private var defaultQueue: DispatchQueue {
        struct Default: EventMonitor {}
        return Default().queue
    }

    var events: [Event] { recorded.current }
    var names: [String] { events.map(\.name) }
    var timelines: [Timeline] { recordedTimelines.current }

    private func record(_ name: String, _ request: Request, urlRequest: URLRequest? = nil) {
        let onQueue = DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self)
        let event = Event(name: name, requestID: request.id, onMonitorQueue: onQueue,
                          onMainThread: Thread.isMainThread, urlRequest: urlRequest)
        recorded.withValue { $0.append(event) }
    }

    func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        record("didCreateInitialURLRequest", request, urlRequest: urlRequest)
    }

    func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        record("didFailToCreateURLRequest", request)
    }

    func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        record("didAdaptInitialRequest", request, urlRequest: adaptedRequest)
    }

    func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        record("didFailToAdaptURLRequest", request)
    }

    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        record("didCreateURLRequest", request, urlRequest: urlRequest)
    }

    func requestIsRetrying(_ request: Request) { record("requestIsRetrying", request) }
    func requestDidFinish(_ request: Request) { record("requestDidFinish", request) }
    func requestDidResume(_ request: Request) { record("requestDidResume", request) }
    func requestDidSuspend(_ request: Request) { record("requestDidSuspend", request) }
    func requestDidCancel(_ request: Request) { record("requestDidCancel", request) }
    func requestDidResumeExchange(_ request: Request) { record("requestDidResumeExchange", request) }
    func requestDidSuspendExchange(_ request: Request) { record("requestDidSuspendExchange", request) }
    func requestDidCancelExchange(_ request: Request) { record("requestDidCancelExchange", request) }

    func request(_ request: DataRequest,
                 didValidateRequest urlRequest: URLRequest?,
                 response: HTTPURLResponse,
                 data: Data?,
                 withResult result: Request.ValidationResult) {
        let outcome = (try? result.get()) == nil ? "failure" : "success"
        record("didValidateRequest(\(outcome))", request, urlRequest: urlRequest)
    }

    func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        record("didParseResponse(Data?)", request)
    }

    func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
        record("didParseResponse<Value>", request)
    }

    func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) {
        record("didSendURLRequest", request, urlRequest: urlRequest)
    }

    func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) {
        record("didReceiveResponse(\(response.statusCode))", request)
    }

    func request(_ request: Request, didCompleteAttemptWithError error: AFError?, timeline: Timeline) {
        recordedTimelines.withValue { $0.append(timeline) }
        record("didCompleteAttempt(\(error == nil ? "nil" : "error"))", request)
    }

    func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        record("didCreateUploadable", request)
    }

    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        record("didFailToCreateUploadable", request)
    }

    func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {
        record("didProvideInputStream", request)
    }
}
