import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// The Server-Sent Events of `url`, reconnecting as a browser's `EventSource` does.
    ///
    /// Each connection is a GET `DataStreamRequest` with `Accept: text/event-stream` and, once an
    /// event ID is known (from `lastEventID` or the stream), `Last-Event-ID`, so that the server
    /// resumes after the last event received. When the connection ends (the server closes it or
    /// it drops), the stream waits for the reconnection time (the latest `retry` field, else
    /// `reconnectionTime`) and connects again.
    ///
    /// The sequence ends normally when the server answers 204 No Content, or when the iteration
    /// stops (breaking out of the loop, or cancelling the task, cancels the request). It throws:
    /// - `AFError.responseValidationFailed(reason: .unacceptableStatusCode(code:))` for a status
    ///   other than 200, and `.unacceptableContentType` for a type other than `text/event-stream`
    ///   (no reconnection then, as in `EventSource`);
    /// - the last connection's error after `maximumReconnections` reconnections in a row that
    ///   brought no event;
    /// - any other error of a request (adaptation, for example).
    ///
    /// - Parameters:
    ///   - url: The event stream's URL.
    ///   - headers: Added to every connection's request.
    ///   - lastEventID: Resumes a stream read earlier: sent as `Last-Event-ID` from the start.
    ///   - reconnectionTime: Seconds to wait before reconnecting, until the stream sets `retry`.
    ///   - maximumReconnections: Reconnections in a row without an event before giving up.
    ///   - interceptor: Adapts and retries each connection's request, as for any request.
    public func serverSentEvents(from url: any URLConvertible,
                                 headers: HTTPHeaders? = nil,
                                 lastEventID: String? = nil,
                                 reconnectionTime: TimeInterval = 3,
                                 maximumReconnections: Int = 5,
                                 interceptor: (any RequestInterceptor)? = nil) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let reader = ServerSentEventReader(session: self, url: url, headers: headers, lastEventID: lastEventID,
                                           reconnectionTime: reconnectionTime, maximumReconnections: maximumReconnections,
                                           interceptor: interceptor)
        return AsyncThrowingStream { continuation in
            let task = Task { await reader.run(into: continuation) }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// The connect, read, wait and reconnect loop behind `Session.serverSentEvents(from:...)`.
struct ServerSentEventReader: Sendable {
    let session: Session
    let url: any URLConvertible
    let headers: HTTPHeaders?
    let lastEventID: String?
    let reconnectionTime: TimeInterval
    let maximumReconnections: Int
    let interceptor: (any RequestInterceptor)?

    /// Why a connection's response was refused before its body was read.
    private enum Refusal: Sendable {
        case noMoreEvents
        case failure(AFError)
    }

    func run(into continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation) async {
        var lastID = lastEventID
        var retryMilliseconds: Int?
        var fruitlessReconnections = 0
        while !Task.isCancelled {
            var requestHeaders = headers ?? HTTPHeaders()
            requestHeaders.update(name: "Accept", value: "text/event-stream")
            requestHeaders.update(name: "Cache-Control", value: "no-cache")
            if let lastID { requestHeaders.update(name: "Last-Event-ID", value: lastID) }
            let request = session.streamRequest(url, headers: requestHeaders, interceptor: interceptor)
            // The response is judged when its first event or its end arrives, without pausing the
            // body (a connection that drops while paused could lose what it had delivered).
            var refusal: Refusal?
            var isJudged = false
            var receivedEvent = false
            var completion: DataStreamRequest.Completion?
            for await stream in request.streamTask().streamingServerSentEvents() {
                switch stream.event {
                case let .stream(.success(event)):
                    if !isJudged, let response = request.response {
                        isJudged = true
                        refusal = Self.refusal(of: response)
                    }
                    guard refusal == nil else {
                        request.cancel()
                        continue
                    }
                    var event = event
                    // The last event ID outlives a connection, as in `EventSource`.
                    if event.id == nil { event.id = lastID }
                    lastID = event.id
                    retryMilliseconds = event.retry ?? retryMilliseconds
                    receivedEvent = true
                    continuation.yield(event)
                case let .complete(ending):
                    completion = ending
                }
            }
            if !isJudged, let response = completion?.response { refusal = Self.refusal(of: response) }
            switch refusal {
            case .noMoreEvents?:
                continuation.finish()
                return
            case let .failure(error)?:
                continuation.finish(throwing: error)
                return
            case nil:
                break
            }
            let error = completion?.error
            if let error, !Self.isConnectionFailure(error) {
                continuation.finish(throwing: error)
                return
            }
            fruitlessReconnections = receivedEvent ? 0 : fruitlessReconnections + 1
            guard fruitlessReconnections <= maximumReconnections else {
                continuation.finish(throwing: error ?? AFError.sessionTaskFailed(error: URLError(.networkConnectionLost)))
                return
            }
            let delay = retryMilliseconds.map { Double($0) / 1000 } ?? reconnectionTime
            try? await Task.sleep(nanoseconds: UInt64(max(0, delay) * 1_000_000_000))
        }
        continuation.finish()
    }

    /// Whether a response is refused: 204 ends the stream, other statuses and types fail it.
    private static func refusal(of response: HTTPURLResponse) -> Refusal? {
        if response.statusCode == 204 { return .noMoreEvents }
        guard response.statusCode == 200 else {
            return .failure(.responseValidationFailed(reason: .unacceptableStatusCode(code: response.statusCode)))
        }
        let contentType = response.value(forHTTPHeaderField: "Content-Type") ?? ""
        guard contentType.lowercased().hasPrefix("text/event-stream") else {
            return .failure(.responseValidationFailed(reason: .unacceptableContentType(acceptableContentTypes: ["text/event-stream"],
                                                                                       responseContentType: contentType)))
        }
        return nil
    }

    /// A failure of the connection itself, after which `EventSource` reconnects.
    private static func isConnectionFailure(_ error: AFError) -> Bool {
        if case .sessionTaskFailed = error { return true }
        return false
    }
}
