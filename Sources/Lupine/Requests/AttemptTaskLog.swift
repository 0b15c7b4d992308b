import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a request's `URLSessionTask` facades describe: one record per attempt, kept in the
/// request's mutable state (behind its lock).
///
/// A record costs no allocation: the first attempt's sits inline, later attempts (retries) go to
/// an array. The facade object itself (a `URLSessionTask` subclass, whose corelibs initializer
/// makes two dispatch queues, a lock and a `Progress`) is made only when something asks for it:
/// `request.task`, an `onURLSessionTaskCreation` handler, a monitor that implements a task event,
/// a redirect or cache handler, a URLProtocol. Until then an attempt is these few values.
struct AttemptTaskLog {
    /// One attempt: from its final URLRequest (`didCreateURLRequest`) to the end of its exchange.
    struct Record {
        /// 0 for the first attempt, then one more per retry.
        let number: Int
        /// The facade's `taskIdentifier`, unique in the process.
        let identifier: Int
        /// The attempt's URLRequest, as created and adapted.
        let originalRequest: URLRequest
        /// The request of the attempt's current hop as sent (redirects, challenge answers).
        var currentRequest: OutgoingRequest?
        /// The response of a redirect hop shown to a redirect handler; the final response is the
        /// request's own `response`.
        var hopResponse: HTTPURLResponse?
        /// Whether the request was cancelled while the attempt ran (the task is `.canceling`).
        var isCancelled = false
        /// Set when the attempt's exchange ended: what the facade reports from then on.
        var outcome: Outcome?
        /// The facade, once made.
        var facade: URLSessionTask?

        var isCompleted: Bool { outcome != nil }
    }

    /// A completed attempt's values, frozen when its exchange ended.
    struct Outcome {
        /// The last hop's request as sent; nil when none was sent (the original request then).
        var currentRequest: OutgoingRequest?
        /// The final response, made into an `HTTPURLResponse` only when the facade is read.
        var response: LazyHTTPResponse?
        /// The response of a redirect hop shown to a redirect handler, when there is no final one.
        var hopResponse: HTTPURLResponse?
        /// The task's own error (the transport's, or cancellation), nil for a complete response.
        var error: AFError?
        var bytesSent: Int64
        var bytesExpectedToSend: Int64
        var bytesReceived: Int64
        var bytesExpectedToReceive: Int64
    }

    private var first: Record?
    private var later: [Record] = []

    /// The records, oldest first.
    var records: [Record] {
        guard let first else { return [] }
        return [first] + later
    }

    /// The number of attempts recorded.
    var count: Int { first == nil ? 0 : 1 + later.count }

    /// The number of the last attempt, if it has not completed; read in place, without the copy
    /// of the record (its URLRequests, response and facade) that `live` makes.
    var liveNumber: Int? {
        if let index = later.indices.last {
            return later[index].outcome == nil ? later[index].number : nil
        }
        guard first?.outcome == nil else { return nil }
        return first?.number
    }

    /// The last attempt, if it has not completed.
    var live: Record? {
        guard let last = last, !last.isCompleted else { return nil }
        return last
    }

    var last: Record? { later.last ?? first }

    subscript(number: Int) -> Record? {
        get {
            if number == 0 { return first }
            return later.indices.contains(number - 1) ? later[number - 1] : nil
        }
        set {
            guard let newValue else { return }
            if number == 0 { first = newValue } else if later.indices.contains(number - 1) { later[number - 1] = newValue }
        }
    }

    /// Starts the record of a new attempt and returns its number.
    mutating func begin(with urlRequest: URLRequest, identifier: Int) -> Int {
        let record = Record(number: count, identifier: identifier, originalRequest: urlRequest)
        if first == nil { first = record } else { later.append(record) }
        return record.number
    }

    /// Changes the last attempt, if it is live.
    mutating func updateLive(_ change: (inout Record) -> Void) {
        guard let number = live?.number, var record = self[number] else { return }
        change(&record)
        self[number] = record
    }
}
