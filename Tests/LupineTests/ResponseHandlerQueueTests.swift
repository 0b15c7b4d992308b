import Foundation
@testable import Lupine
import Testing

/// The queue of a request's response handlers and the hand-over of its exchange's end, alone:
/// every event in every state (a table), then the orders a request relies on.
@Suite struct ResponseHandlerQueueTests {
    // MARK: The table

    /// The states a request's queue passes through, each reached by the events a request sends.
    static let fixtures: [(name: String, make: @Sendable () -> ResponseHandlerQueue)] = [
        ("empty", { ResponseHandlerQueue() }),
        ("a queued", { var queue = ResponseHandlerQueue(); queue.handlerAdded(awaited("a")); return queue }),
        ("a running, b queued", { running() }),
        ("a completed, b running", { var queue = running(); _ = queue.handlerCompleted(awaited("a'")); return queue }),
        ("a running, a finish handler", { var queue = running(); queue.finishHandlerAdded {}; return queue }),
        ("a queued, taker a", { offered() }),
        ("a and b (on a queue) queued, taker a", { var queue = offered(); queue.handlerAdded(onQueue("b")); return queue }),
        ("end #1 handed over", { var queue = offered(); _ = queue.transferEnded(completion(1), answeredAtOnce: false); return queue }),
    ]

    /// Every event, applied to a copy of the state; each returns what the queue answered.
    static let events: [(name: String, apply: @Sendable (inout ResponseHandlerQueue) -> String)] = [
        ("handlerAdded(x)", { $0.handlerAdded(awaited("x")); return "-" }),
        ("nextHandler", { describe($0.nextHandler()) }),
        ("handlerCompleted(x')", { describe($0.handlerCompleted(awaited("x'"))) }),
        ("finishHandlerAdded", { $0.finishHandlerAdded {}; return "-" }),
        ("retryBegins", { $0.retryBegins(); return "-" }),
        ("offerToTakeCompletion(t)", { $0.offerToTakeCompletion(step("t", awaited: true)); return "-" }),
        ("transferEnded(#2)", { describe($0.transferEnded(completion(2), answeredAtOnce: false)) }),
        ("transferEnded(#2, at once)", { describe($0.transferEnded(completion(2), answeredAtOnce: true)) }),
        ("takeHandedOverCompletion", { $0.takeHandedOverCompletion().map { "#\($0.attempt ?? 0)" } ?? "nil" }),
        ("finishingBegins", { $0.finishingBegins(); return "-" }),
    ]

    /// What each event answers in each state, and the state it leaves: "answer -> state".
    static let expected: [String: [String]] = [
        "empty": [
            "- -> queued x",
            "drained [] + 0 finish handler(s) -> empty",
            "drained [x'] + 0 finish handler(s) -> empty",
            "- -> 1 finish handler(s)",
            "- -> empty",
            "- -> taker t",
            "runOnRootQueue(#2, answeredAtOnce: false) -> empty",
            "runOnRootQueue(#2, answeredAtOnce: true) -> empty",
            "nil -> empty",
            "- -> empty",
        ],
        "a queued": [
            "- -> queued a x",
            "run a -> queued a | running",
            "drained [x'] + 0 finish handler(s) -> empty",
            "- -> queued a | 1 finish handler(s)",
            "- -> queued a",
            "- -> queued a | taker t",
            "runOnRootQueue(#2, answeredAtOnce: false) -> queued a",
            "runOnRootQueue(#2, answeredAtOnce: true) -> queued a",
            "nil -> queued a",
            "- -> queued a",
        ],
        "a running, b queued": [
            "- -> queued a b x | running",
            "wait -> queued a b | running",
            "run b -> queued a b | ran x' | running",
            "- -> queued a b | running | 1 finish handler(s)",
            "- -> queued a b",
            "- -> queued a b | running | taker t",
            "runOnRootQueue(#2, answeredAtOnce: false) -> queued a b | running",
            "runOnRootQueue(#2, answeredAtOnce: true) -> queued a b | running",
            "nil -> queued a b | running",
            "- -> queued a b | running",
        ],
        "a completed, b running": [
            "- -> queued a b x | ran a' | running",
            "wait -> queued a b | ran a' | running",
            "drained [a' x'] + 0 finish handler(s) -> empty",
            "- -> queued a b | ran a' | running | 1 finish handler(s)",
            "- -> queued a b",
            "- -> queued a b | ran a' | running | taker t",
            "runOnRootQueue(#2, answeredAtOnce: false) -> queued a b | ran a' | running",
            "runOnRootQueue(#2, answeredAtOnce: true) -> queued a b | ran a' | running",
            "nil -> queued a b | ran a' | running",
            "- -> queued a b | ran a' | running",
        ],
        "a running, a finish handler": [
            "- -> queued a b x | running | 1 finish handler(s)",
            "wait -> queued a b | running | 1 finish handler(s)",
            "run b -> queued a b | ran x' | running | 1 finish handler(s)",
            "- -> queued a b | running | 2 finish handler(s)",
            "- -> queued a b | 1 finish handler(s)",
            "- -> queued a b | running | 1 finish handler(s) | taker t",
            "runOnRootQueue(#2, answeredAtOnce: false) -> queued a b | running | 1 finish handler(s)",
            "runOnRootQueue(#2, answeredAtOnce: true) -> queued a b | running | 1 finish handler(s)",
            "nil -> queued a b | running | 1 finish handler(s)",
            "- -> queued a b | running | 1 finish handler(s)",
        ],
        "a queued, taker a": [
            "- -> queued a x | taker a",
            "run a -> queued a | running | taker a",
            "drained [x'] + 0 finish handler(s) -> taker a",
            "- -> queued a | 1 finish handler(s) | taker a",
            "- -> queued a | taker a",
            "- -> queued a | taker a",
            "wake a -> queued a | handed #2",
            "runOnRootQueue(#2, answeredAtOnce: true) -> queued a | taker a",
            "nil -> queued a | taker a",
            "- -> queued a",
        ],
        "a and b (on a queue) queued, taker a": [
            "- -> queued a b x | taker a",
            "run a -> queued a b | running | taker a",
            "run b -> queued a b | ran x' | running | taker a",
            "- -> queued a b | 1 finish handler(s) | taker a",
            "- -> queued a b | taker a",
            "- -> queued a b | taker a",
            "runOnRootQueue(#2, answeredAtOnce: false) -> queued a b | taker a",
            "runOnRootQueue(#2, answeredAtOnce: true) -> queued a b | taker a",
            "nil -> queued a b | taker a",
            "- -> queued a b",
        ],
        "end #1 handed over": [
            "- -> queued a x | handed #1",
            "run a -> queued a | running | handed #1",
            "drained [x'] + 0 finish handler(s) -> handed #1",
            "- -> queued a | 1 finish handler(s) | handed #1",
            "- -> queued a | handed #1",
            "- -> queued a | taker t | handed #1",
            "runOnRootQueue(#2, answeredAtOnce: false) -> queued a | handed #1",
            "runOnRootQueue(#2, answeredAtOnce: true) -> queued a | handed #1",
            "#1 -> queued a",
            "- -> queued a | handed #1",
        ],
    ]

    @Test(arguments: fixtures.map(\.name))
    func everyEventInState(_ name: String) throws {
        let make = try #require(Self.fixtures.first { $0.name == name }?.make)
        let rows = Self.expected[name] ?? []
        for (index, event) in Self.events.enumerated() {
            var queue = make()
            let answer = event.apply(&queue)
            let seen = "\(answer) -> \(Self.describe(queue))"
            #expect(seen == rows[safe: index], "\(name), event \(event.name)")
        }
    }

    @Test func everyFixtureHasARowPerEvent() {
        #expect(Set(Self.expected.keys) == Set(Self.fixtures.map(\.name)))
        #expect(Self.expected.values.allSatisfy { $0.count == Self.events.count })
    }

    // MARK: Orders a request relies on

    @Test func handlersRunOneAtATimeInOrderAndCompleteTogetherAfterTheLast() {
        var queue = ResponseHandlerQueue()
        queue.handlerAdded(Self.awaited("a"))
        queue.handlerAdded(Self.onQueue("b"))
        queue.finishHandlerAdded {}
        var answers = [Self.describe(queue.nextHandler()), Self.describe(queue.nextHandler())]
        answers.append(Self.describe(queue.handlerCompleted(Self.awaited("a'"))))
        queue.handlerAdded(Self.awaited("c"))
        answers.append(Self.describe(queue.handlerCompleted(Self.awaited("b'"))))
        answers.append(Self.describe(queue.handlerCompleted(Self.awaited("c'"))))
        #expect(answers == ["run a", "wait", "run b", "run c", "drained [a' b' c'] + 1 finish handler(s)"])
        #expect(Self.describe(queue) == "empty")
    }

    @Test func aRetryRunsEveryHandlerAgainAndDropsTheCompletionsOfTheRound() {
        var queue = ResponseHandlerQueue()
        queue.handlerAdded(Self.awaited("a"))
        queue.handlerAdded(Self.onQueue("b"))
        var answers = [Self.describe(queue.nextHandler()), Self.describe(queue.handlerCompleted(Self.awaited("a'")))]
        // b asked for a retry: it hands back nothing; the retry begins, then the new attempt finishes.
        queue.retryBegins()
        answers.append(Self.describe(queue.nextHandler()))
        answers.append(Self.describe(queue.handlerCompleted(Self.awaited("a''"))))
        answers.append(Self.describe(queue.handlerCompleted(Self.awaited("b''"))))
        #expect(answers == ["run a", "run b", "run a", "run b", "drained [a'' b''] + 0 finish handler(s)"])
    }

    @Test func aHandlerAddedAfterTheQueueDrainedRunsAlone() {
        var queue = ResponseHandlerQueue()
        queue.handlerAdded(Self.awaited("a"))
        _ = queue.nextHandler()
        _ = queue.handlerCompleted(Self.awaited("a'"))
        queue.handlerAdded(Self.awaited("late"))
        let answers = [Self.describe(queue.nextHandler()), Self.describe(queue.handlerCompleted(Self.awaited("late'")))]
        #expect(answers == ["run late", "drained [late'] + 0 finish handler(s)"])
    }

    @Test func theEndHandedOverIsTakenOnce() {
        var queue = Self.offered()
        let action = Self.describe(queue.transferEnded(Self.completion(1), answeredAtOnce: false))
        let first = queue.takeHandedOverCompletion()?.attempt
        let second = queue.takeHandedOverCompletion()?.attempt
        #expect(action == "wake a")
        #expect(first == 1)
        #expect(second == nil)
        // The offer went with the hand-over: the next attempt's end goes to the root queue.
        #expect(Self.describe(queue.transferEnded(Self.completion(2), answeredAtOnce: false))
            == "runOnRootQueue(#2, answeredAtOnce: false)")
    }

    // MARK: Fixtures

    static func step(_ name: String, awaited: Bool) -> NamedStep {
        NamedStep(name: name, isAwaited: awaited)
    }

    static func awaited(_ name: String) -> QueuedResponseHandler { .step(step(name, awaited: true)) }

    /// A handler with a completion handler on a queue (not awaited).
    static func onQueue(_ name: String) -> QueuedResponseHandler { .step(step(name, awaited: false)) }

    static func completion(_ attempt: Int) -> Request.TransferCompletion {
        Request.TransferCompletion(transportError: nil, error: nil, timeline: Timeline(), attempt: attempt, cacheOffer: nil)
    }

    /// Two handlers added, the request finished: the first runs.
    static func running() -> ResponseHandlerQueue {
        var queue = ResponseHandlerQueue()
        queue.handlerAdded(awaited("a"))
        queue.handlerAdded(onQueue("b"))
        _ = queue.nextHandler()
        return queue
    }

    /// An awaited handler whose task offered to run the end of the exchange.
    static func offered() -> ResponseHandlerQueue {
        var queue = ResponseHandlerQueue()
        let a = step("a", awaited: true)
        queue.handlerAdded(.step(a))
        queue.offerToTakeCompletion(a)
        return queue
    }

    // MARK: Describing

    static func name(_ handler: QueuedResponseHandler) -> String {
        if case let .step(step) = handler, let named = step as? NamedStep { return named.name }
        return "closure"
    }

    static func names(_ handlers: SmallList<QueuedResponseHandler>) -> String {
        handlers.array.map(name).joined(separator: " ")
    }

    static func describe(_ queue: ResponseHandlerQueue) -> String {
        var parts: [String] = []
        if !queue.handlers.isEmpty { parts.append("queued \(names(queue.handlers))") }
        if !queue.completions.isEmpty { parts.append("ran \(names(queue.completions))") }
        if queue.isRunningHandler { parts.append("running") }
        if !queue.finishHandlers.isEmpty { parts.append("\(queue.finishHandlers.count) finish handler(s)") }
        if let taker = queue.completionTaker { parts.append("taker \((taker as? NamedStep)?.name ?? "?")") }
        if let handed = queue.handedOverCompletion { parts.append("handed #\(handed.attempt ?? 0)") }
        return parts.isEmpty ? "empty" : parts.joined(separator: " | ")
    }

    static func describe(_ next: ResponseHandlerQueue.NextHandler) -> String {
        switch next {
        case let .run(handler): "run \(name(handler))"
        case .wait: "wait"
        case let .drained(completions, finishHandlers): "drained [\(names(completions))] + \(finishHandlers.count) finish handler(s)"
        }
    }

    static func describe(_ action: ResponseHandlerQueue.TransferEndAction) -> String {
        switch action {
        case let .wake(taker): "wake \((taker as? NamedStep)?.name ?? "?")"
        case let .runOnRootQueue(completion, answeredAtOnce): "runOnRootQueue(#\(completion.attempt ?? 0), answeredAtOnce: \(answeredAtOnce))"
        }
    }
}

/// A response handler that only has a name: the queue keeps it and hands it back.
final class NamedStep: ResponseHandlerStep {
    let name: String
    let isAwaited: Bool

    init(name: String, isAwaited: Bool) {
        self.name = name
        self.isAwaited = isAwaited
    }

    func run() {}
    func deliver() {}
    func wakeOneAwaiter() -> Bool { isAwaited }
}

private extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
