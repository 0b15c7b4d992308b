import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one record of a request's attempts, owned by its state machine (behind the request's
/// lock): one `AttemptRecord` per attempt, oldest first. The state machine's times, response and
/// redirects, the requests sent (`performedRequests`) and the task facades all read it, so they
/// cannot disagree.
///
/// A record costs no allocation: the first attempt's sits inline, later attempts (retries) go to
/// an array. Records are read and changed in place (`withCurrent`, `updateCurrent`): a copy of
/// one costs the retains of its requests, response and facade.
struct AttemptLedger {
    /// The first attempt's record once `hasFirst`, a blank one before. Not optional: a record
    /// read out of an optional is copied first (its request, response and task retained and
    /// released), and the request reads its current attempt a dozen times per GET.
    private var first = AttemptRecord(number: 0)
    private var hasFirst = false
    private var later: [AttemptRecord] = []

    /// The number of attempts begun.
    var count: Int { hasFirst ? 1 + later.count : 0 }

    var isEmpty: Bool { !hasFirst }

    /// A new attempt begins: its record is appended, and becomes the current one. Returns its number.
    @discardableResult
    mutating func beginAttempt() -> Int {
        let record = AttemptRecord(number: count)
        if hasFirst {
            later.append(record)
        } else {
            first = record
            hasFirst = true
        }
        return record.number
    }

    // MARK: Reading and changing in place

    /// Reads the current (last) attempt in place; nil when none has begun.
    func withCurrent<Result>(_ body: (AttemptRecord) -> Result) -> Result? {
        if later.isEmpty { return hasFirst ? body(first) : nil }
        return body(later[later.count - 1])
    }

    /// Changes the current (last) attempt in place; nil when none has begun.
    mutating func updateCurrent<Result>(_ body: (inout AttemptRecord) -> Result) -> Result? {
        if later.isEmpty { return hasFirst ? body(&first) : nil }
        return later[later.count - 1].update(body)
    }

    /// Reads attempt `number` in place; nil when there is no such attempt.
    func withRecord<Result>(_ number: Int, _ body: (AttemptRecord) -> Result) -> Result? {
        if number == 0 { return hasFirst ? body(first) : nil }
        guard later.indices.contains(number - 1) else { return nil }
        return body(later[number - 1])
    }

    /// Changes attempt `number` in place; nil when there is no such attempt.
    mutating func updateRecord<Result>(_ number: Int, _ body: (inout AttemptRecord) -> Result) -> Result? {
        if number == 0 { return hasFirst ? body(&first) : nil }
        guard later.indices.contains(number - 1) else { return nil }
        return later[number - 1].update(body)
    }

    /// Calls `body` with each record, oldest first, in place.
    func forEach(_ body: (AttemptRecord) -> Void) {
        guard hasFirst else { return }
        body(first)
        for index in later.indices { body(later[index]) }
    }

    /// Copies of the records, oldest first (for tests and descriptions, not hot paths).
    var records: [AttemptRecord] {
        var records: [AttemptRecord] = []
        forEach { records.append($0) }
        return records
    }

    // MARK: Requests sent

    /// The current attempt's hop sends `outgoing`: it replaces the request of the attempt's
    /// previous hop, as a URLSession task's `currentRequest` follows redirects.
    mutating func hopWillSend(_ outgoing: OutgoingRequest) {
        updateCurrent { $0.currentRequest = outgoing }
    }

    /// The request each attempt sent last, oldest first; attempts that sent none are left out.
    var performedRequests: [OutgoingRequest] {
        var requests: [OutgoingRequest] = []
        forEach { if let sent = $0.currentRequest { requests.append(sent) } }
        return requests
    }

    /// The last of `performedRequests`.
    var lastPerformedRequest: OutgoingRequest? {
        if let sent = withCurrent({ $0.currentRequest }) ?? nil { return sent }
        var last: OutgoingRequest?
        forEach { if let sent = $0.currentRequest { last = sent } }
        return last
    }

    // MARK: Tasks

    /// The current attempt's URLRequest is final: its task begins. Returns the attempt's number,
    /// or nil when there is no attempt or it already has a task.
    mutating func beginTask(identifier: Int, originalRequest: URLRequest) -> Int? {
        updateCurrent { record -> Int? in
            guard record.task == nil else { return nil }
            record.task = AttemptTask(identifier: identifier, originalRequest: originalRequest)
            record.hasLiveTask = true
            return record.number
        } ?? nil
    }

    /// The number of the current attempt, if its task runs (begun, not completed).
    var liveTaskNumber: Int? {
        withCurrent { $0.hasLiveTask ? $0.number : nil } ?? nil
    }

    /// Changes the task of the current attempt, if it runs; returns the attempt's number.
    @discardableResult
    mutating func updateLiveTask(_ body: (inout AttemptTask) -> Void) -> Int? {
        updateCurrent { record -> Int? in
            guard record.hasLiveTask else { return nil }
            record.task?.update(body)
            return record.number
        } ?? nil
    }

    /// The task of the current attempt, if it runs, completes with `outcome` (its own values from
    /// then on); returns the attempt's number.
    mutating func endLiveTask(_ outcome: AttemptTaskOutcome) -> Int? {
        updateCurrent { record -> Int? in
            guard record.hasLiveTask else { return nil }
            record.task?.outcome = outcome
            record.hasLiveTask = false
            return record.number
        } ?? nil
    }

    /// The number of the first attempt that has a task.
    var firstTaskNumber: Int? {
        var first: Int?
        forEach { if first == nil, $0.task != nil { first = $0.number } }
        return first
    }

    /// The number of the last attempt that has a task.
    var lastTaskNumber: Int? {
        if let number = withCurrent({ $0.task == nil ? nil : $0.number }) ?? nil { return number }
        var last: Int?
        forEach { if $0.task != nil { last = $0.number } }
        return last
    }

    /// The numbers of the attempts that have a task, oldest first.
    var taskNumbers: [Int] {
        var numbers: [Int] = []
        forEach { if $0.task != nil { numbers.append($0.number) } }
        return numbers
    }
}

extension AttemptTask {
    /// Runs `body` on the task in place (through optional chaining).
    mutating func update(_ body: (inout AttemptTask) -> Void) {
        body(&self)
    }

    /// The facade: the one made before, or the one `make` makes now (kept).
    mutating func facade(making make: (AttemptTask) -> URLSessionTask) -> URLSessionTask {
        if let facade { return facade }
        let made = make(self)
        facade = made
        return made
    }
}
