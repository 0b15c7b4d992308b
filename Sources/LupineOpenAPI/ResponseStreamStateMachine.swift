import Foundation
import HTTPTypes
import Lupine

/// The pure bookkeeping of one streamed operation of `LupineClientTransport`: which attempt's
/// response goes to the caller, what the caller's body holds, and how that body ends.
///
/// It performs no I/O and calls nothing: events go in, `Effects` come out, and the driver
/// (`ResponseStream`) acts on them after leaving its lock. `ResponseWaiter` is what `send` waits
/// with, `BodyWaiter` what the body's iterator waits with.
///
/// The events of one request arrive in order: a response head per attempt, that attempt's body
/// parts, the end of the attempt, and after the last attempt the end of the request.
///
/// - An acceptable head goes to the caller at once, and the body parts after it flow to the
///   caller's body. Each part is released (counted as handled by the request, whose reading waits
///   for that) only when the caller takes it: the request's own backpressure paces the socket.
/// - An unacceptable head is held until the retriers decide, since they decide only once its
///   body is complete: its body is kept (at most `heldBodyLimit` bytes), a later head replaces it
///   (a retry), and the end of the request hands it to the caller. A held body that outgrows the
///   limit goes to the caller at once instead, and that response is no longer retried.
/// - Once a response went to the caller, no other attempt may follow it: a failed attempt cancels
///   the request (so that no retry starts), a later head is refused, and the caller's body ends
///   with the failed attempt's error.
/// - The caller's body ends with the end of the request, which comes after the request's last
///   body part (the end of an attempt may be reported before parts the request still held).
struct ResponseStreamStateMachine<ResponseWaiter, BodyWaiter> {
    typealias Release = @Sendable () -> Void

    /// What the driver does once out of the lock.
    struct Effects {
        /// Resume `send`.
        var response: (ResponseWaiter, Result<ResponseDelivery, any Error>)?
        /// Resume the body's iterator.
        var body: (BodyWaiter, ResponseBodyEvent)?
        /// Body parts now handled: the request may read on.
        var releases: [Release] = []
        /// Cancel the request.
        var cancelRequest = false
    }

    private enum Response {
        /// No head for the current attempt yet; `send` waits (nil before it registered).
        case waiting(ResponseWaiter?)
        /// An unacceptable response, held until the retriers decide.
        case holding(head: HTTPResponse, streamsBody: Bool, parts: [Data], byteCount: Int, waiter: ResponseWaiter?)
        /// A response went to the caller.
        case delivered
        /// `send` has thrown.
        case failed
    }

    private enum BodyEnd {
        case finished
        case failed(any Error)
        /// The caller let go of the body: nothing more is kept.
        case abandoned
    }

    private var response = Response.waiting(nil)
    /// The delivered response streams a body.
    private var streamsBody = false
    /// Parts for the caller, oldest first, each with its release (nil once released).
    private var parts: [(data: Data, release: Release?)] = []
    private var bodyEnd: BodyEnd?
    private var bodyWaiter: BodyWaiter?
    /// How the attempt whose response went to the caller ended, once it has.
    private var deliveredAttemptEnd: BodyEnd?

    /// The most body bytes held for an unacceptable response before it goes to the caller.
    let heldBodyLimit: Int

    init(heldBodyLimit: Int) {
        self.heldBodyLimit = heldBodyLimit
    }

    /// Whether a response went to the caller: from then on no status fails validation, since
    /// that response can no longer be replaced by a retry.
    var hasDeliveredResponse: Bool {
        if case .delivered = response { return true }
        return false
    }

    // MARK: send

    /// `send` waits for the response.
    mutating func responseRequested(by waiter: ResponseWaiter) -> Effects {
        switch response {
        case .waiting:
            response = .waiting(waiter)
        case let .holding(head, streamsBody, parts, byteCount, _):
            response = .holding(head: head, streamsBody: streamsBody, parts: parts, byteCount: byteCount, waiter: waiter)
        case .delivered, .failed:
            break
        }
        return Effects()
    }

    // MARK: Request events

    /// A final response head arrived; true lets its body flow, false cancels the request.
    mutating func headArrived(_ head: HTTPResponse, isAcceptable: Bool, streamsBody: Bool) -> (allow: Bool, effects: Effects) {
        let waiter: ResponseWaiter?
        switch response {
        case let .waiting(current):
            waiter = current
        case let .holding(_, _, _, _, current):
            // A retry: the held response is replaced by this attempt's.
            waiter = current
        case .delivered:
            // An attempt after the one the caller has: its bytes would follow the first one's.
            return (false, Effects())
        case .failed:
            return (false, Effects())
        }
        guard isAcceptable else {
            response = .holding(head: head, streamsBody: streamsBody, parts: [], byteCount: 0, waiter: waiter)
            return (true, Effects())
        }
        return (true, deliver(head, streamsBody: streamsBody, heldParts: [], waiter: waiter))
    }

    /// A part of the current attempt's body arrived; `release` tells the request it was handled.
    mutating func partArrived(_ data: Data, release: @escaping Release) -> Effects {
        switch response {
        case let .holding(head, streamsBody, held, byteCount, waiter):
            var effects = Effects()
            effects.releases.append(release)
            let held = held + [data]
            let byteCount = byteCount + data.count
            guard byteCount > heldBodyLimit else {
                response = .holding(head: head, streamsBody: streamsBody, parts: held, byteCount: byteCount, waiter: waiter)
                return effects
            }
            // Too large to hold until the retriers decide: the caller gets it as it is.
            let delivered = deliver(head, streamsBody: streamsBody, heldParts: held, waiter: waiter)
            effects.response = delivered.response
            return effects
        case .delivered where streamsBody && bodyEnd == nil:
            if let waiter = bodyWaiter, parts.isEmpty {
                bodyWaiter = nil
                var effects = Effects()
                effects.body = (waiter, .part(data))
                effects.releases.append(release)
                return effects
            }
            parts.append((data, release))
            return Effects()
        case .waiting, .delivered, .failed:
            var effects = Effects()
            effects.releases.append(release)
            return effects
        }
    }

    /// An attempt's exchange ended; `error` is nil when its response came whole.
    mutating func attemptCompleted(error: (any Error)?) -> Effects {
        guard case .delivered = response, deliveredAttemptEnd == nil else { return Effects() }
        deliveredAttemptEnd = error.map { .failed($0) } ?? .finished
        var effects = Effects()
        // Stops a retry the retriers may be deciding: the caller already has this attempt's response.
        effects.cancelRequest = error != nil
        return effects
    }

    /// The request finished with `error` (nil: success).
    mutating func requestCompleted(error: AFError?) -> Effects {
        switch response {
        case let .waiting(waiter):
            response = .failed
            var effects = Effects()
            let failure: any Error = error ?? AFError.responseSerializationFailed(reason: .inputDataNilOrZeroLength)
            if let waiter { effects.response = (waiter, .failure(failure)) }
            return effects
        case let .holding(head, streamsBody, held, _, waiter):
            // The held response is the request's last one when the request failed by its status;
            // any other error came later (a retry that failed) and is what the caller gets.
            if let error, !Self.isUnacceptableStatus(error) {
                response = .failed
                var effects = Effects()
                if let waiter { effects.response = (waiter, .failure(error)) }
                return effects
            }
            var effects = deliver(head, streamsBody: streamsBody, heldParts: held, waiter: waiter)
            let ending = endBody(.finished)
            effects.body = ending.body
            return effects
        case .delivered:
            guard bodyEnd == nil else { return Effects() }
            // The delivered attempt's own end says how its body ended: the request's error may be
            // the cancellation that stopped a retry after it.
            if let deliveredAttemptEnd { return endBody(deliveredAttemptEnd) }
            return endBody(error.map { .failed($0) } ?? .finished)
        case .failed:
            return Effects()
        }
    }

    // MARK: Body events

    /// The caller's iterator asks for the next event; nil means it must wait (`waiter` is kept
    /// when given).
    mutating func nextBodyEvent(waiter: BodyWaiter?) -> (event: ResponseBodyEvent?, effects: Effects) {
        if !parts.isEmpty {
            let part = parts.removeFirst()
            var effects = Effects()
            if let release = part.release { effects.releases.append(release) }
            return (.part(part.data), effects)
        }
        switch bodyEnd {
        case .finished?, .abandoned?:
            return (.end, Effects())
        case let .failed(error)?:
            return (.failure(error), Effects())
        case nil:
            bodyWaiter = waiter
            return (nil, Effects())
        }
    }

    /// The caller's task was cancelled while its iterator waited.
    mutating func bodyIterationCancelled() -> Effects {
        guard bodyEnd == nil else { return Effects() }
        var effects = endBody(.failed(AFError.explicitlyCancelled), droppingParts: true)
        effects.cancelRequest = true
        return effects
    }

    /// The caller let go of the body. An unfinished body cancels the request.
    mutating func bodyAbandoned() -> Effects {
        let wasOpen = streamsBody && bodyEnd == nil
        var effects = endBody(.abandoned, droppingParts: true)
        effects.cancelRequest = wasOpen
        return effects
    }

    // MARK: Steps

    private mutating func deliver(_ head: HTTPResponse, streamsBody: Bool, heldParts: [Data], waiter: ResponseWaiter?) -> Effects {
        response = .delivered
        self.streamsBody = streamsBody
        if streamsBody, !heldParts.isEmpty {
            // Already released while held: the request counts them as handled.
            var held = Data()
            held.reserveCapacity(heldParts.reduce(0) { $0 + $1.count })
            heldParts.forEach { held.append($0) }
            parts = [(held, nil)]
        }
        var effects = Effects()
        if let waiter { effects.response = (waiter, .success(ResponseDelivery(head: head, streamsBody: streamsBody))) }
        return effects
    }

    /// Ends the body; the parts not yet taken are still given first unless dropped.
    private mutating func endBody(_ end: BodyEnd, droppingParts: Bool = false) -> Effects {
        var effects = Effects()
        if bodyEnd == nil { bodyEnd = end }
        if droppingParts {
            effects.releases = parts.compactMap(\.release)
            parts.removeAll()
        }
        if let waiter = bodyWaiter, parts.isEmpty {
            bodyWaiter = nil
            switch bodyEnd {
            case let .failed(error)?: effects.body = (waiter, .failure(error))
            default: effects.body = (waiter, .end)
            }
        }
        return effects
    }

    private static func isUnacceptableStatus(_ error: AFError) -> Bool {
        if case .responseValidationFailed(reason: .unacceptableStatusCode) = error { return true }
        return false
    }
}

/// What `send` gets from `ResponseStreamStateMachine`: the response head, and whether a body
/// streamed from the request comes with it.
struct ResponseDelivery: Sendable {
    var head: HTTPResponse
    var streamsBody: Bool
}

/// What the caller's body iterator gets from `ResponseStreamStateMachine`.
enum ResponseBodyEvent {
    case part(Data)
    case end
    case failure(any Error)
}
