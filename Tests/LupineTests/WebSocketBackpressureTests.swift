import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// Incoming WebSocket messages are read as the consumer takes them: a server flooding a slow
/// consumer meets TCP flow control, the messages waiting undelivered stay within the request's
/// backlog bound, and every message still arrives, in order, once the consumer catches up.
@Suite struct WebSocketBackpressureTests {
    /// 2,000 messages of 64 KiB (125 MiB): far more than the kernel's socket buffers on loopback
    /// can hold (at most 32 MiB received plus 4 MiB sent here), so a client that stops reading
    /// must make the server wait.
    static let messageCount = 2_000
    static let messageSize = 64 << 10
    /// Messages the consumer takes slowly after the stall, one every 2 ms, before catching up.
    static let slowMessages = 100

    /// The most a request holds undelivered: the bound, plus the one message that crossed it.
    static let backlogBytesBound = StreamDelivery.pauseAboveBytes + messageSize
    static let backlogMessagesBound = StreamDelivery.pauseAboveDeliveries + 1

    private static func floodURL(on server: LupineTestServer) -> String {
        server.webSocketURL("/websocket/echo?flood=\(messageCount)&flood-size=\(messageSize)&close-after=\(messageCount)")
    }

    /// The number a flood message carries in its first 8 bytes (big-endian), or -1.
    private static func number(of message: URLSessionWebSocketTask.Message) -> Int {
        guard case let .data(data) = message, data.count == messageSize else { return -1 }
        return data.prefix(8).reduce(0) { $0 << 8 | Int($1) }
    }

    /// What the consumer saw of the flood.
    private struct Observation: Sendable {
        var numbers: [Int] = []
        /// Messages the server had written when the consumer, stalled after the first message,
        /// saw it wait for the first time.
        var writtenAtStall = 0
        var completionError: AFError?
        var closeCode: URLSessionWebSocketTask.CloseCode?
    }

    private static func expectWholeFloodInOrder(_ observation: Observation, request: WebSocketRequest, server: LupineTestServer) {
        let flood = server.webSocketFlood
        let peak = request.messageBacklogPeak
        #expect(observation.numbers.count == messageCount)
        #expect(observation.numbers == Array(1...messageCount), "messages arrived out of order or were lost")
        #expect(observation.completionError == nil)
        #expect(observation.closeCode == .normalClosure)
        #expect(flood.timesUnwritable >= 1, "the server's writes never met backpressure")
        #expect(flood.floodsFinished == 1)
        #expect(observation.writtenAtStall < messageCount,
                "the server had written \(observation.writtenAtStall) messages while the consumer had taken one")
        #expect(peak.bytes <= backlogBytesBound, "\(peak.bytes) bytes waited undelivered")
        #expect(peak.messages <= backlogMessagesBound, "\(peak.messages) messages waited undelivered")
        // The bound was reached: reading paused for the consumer, not for lack of data.
        #expect(peak.bytes > StreamDelivery.pauseAboveBytes)
    }

    /// Waits until, with the consumer stalled, the request's backlog has reached its bound and the
    /// server has had to wait for the client to read.
    private static func stalled(_ request: WebSocketRequest, _ server: LupineTestServer) async -> Bool {
        await waitUntil(timeout: 60) {
            request.messageBacklogPeak.bytes > StreamDelivery.pauseAboveBytes && server.webSocketFlood.timesUnwritable >= 1
        }
    }

    /// An async loop that stalls after the first message until the server has to wait, then
    /// takes messages slowly, then catches up.
    @Test func floodIntoASlowAsyncLoopStaysWithinTheBacklogBoundAndArrivesWhole() async throws {
        try await MemoryMeasurement.churning { try await self.floodIntoASlowAsyncLoopStaysWithinTheBacklogBoundAndArrivesWholeBody() }
    }

    private func floodIntoASlowAsyncLoopStaysWithinTheBacklogBoundAndArrivesWholeBody() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let request = session.webSocketRequest(to: Self.floodURL(on: server))
        var observation = Observation()
        for await event in request.webSocketTask().streamingMessageEvents() {
            switch event.kind {
            case let .receivedMessage(message):
                observation.numbers.append(Self.number(of: message))
                if observation.numbers.count == 1 {
                    #expect(await Self.stalled(request, server))
                    observation.writtenAtStall = server.webSocketFlood.messagesWritten
                } else if observation.numbers.count <= Self.slowMessages {
                    try await Task.sleep(nanoseconds: 2_000_000)
                }
            case let .disconnected(closeCode, _):
                observation.closeCode = closeCode
            case let .completed(completion):
                observation.completionError = completion.error
            default:
                break
            }
        }
        Self.expectWholeFloodInOrder(observation, request: request, server: server)
        try await server.shutdown()
    }

    /// The same with a closure handler: a message is taken once the handler has returned, so a
    /// handler that blocks its queue holds the socket.
    @Test func floodIntoASlowClosureHandlerStaysWithinTheBacklogBoundAndArrivesWhole() async throws {
        try await MemoryMeasurement.churning { try await self.floodIntoASlowClosureHandlerStaysWithinTheBacklogBoundAndArrivesWholeBody() }
    }

    private func floodIntoASlowClosureHandlerStaysWithinTheBacklogBoundAndArrivesWholeBody() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let request = session.webSocketRequest(to: Self.floodURL(on: server))
        let queue = DispatchQueue(label: "test.slowWebSocketHandler")
        let serverWaited = DispatchSemaphore(value: 0)
        let observation = Locked(Observation())
        let watcher = Task {
            let stalled = await Self.stalled(request, server)
            serverWaited.signal()
            return stalled
        }
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            request.streamMessageEvents(on: queue) { event in
                switch event.kind {
                case let .receivedMessage(message):
                    let taken = observation.withValue { value in
                        value.numbers.append(Self.number(of: message))
                        return value.numbers.count
                    }
                    if taken == 1 {
                        serverWaited.wait()
                        observation.withValue { $0.writtenAtStall = server.webSocketFlood.messagesWritten }
                    } else if taken <= Self.slowMessages {
                        Thread.sleep(forTimeInterval: 0.002)
                    }
                case let .disconnected(closeCode, _):
                    observation.withValue { $0.closeCode = closeCode }
                case let .completed(completion):
                    observation.withValue { $0.completionError = completion.error }
                    finished.resume()
                default:
                    break
                }
            }
        }
        #expect(await watcher.value)
        Self.expectWholeFloodInOrder(observation.current, request: request, server: server)
        try await server.shutdown()
    }

    /// Automatic pings go on while the consumer is behind; their pongs wait in the socket with the
    /// messages, which is no sign of a dead server: the connection is not failed for it.
    @Test func pongsHeldBehindAPausedReaderDoNotFailTheConnection() async throws {
        try await MemoryMeasurement.churning { try await self.pongsHeldBehindAPausedReaderDoNotFailTheConnectionBody() }
    }

    private func pongsHeldBehindAPausedReaderDoNotFailTheConnectionBody() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let request = session.webSocketRequest(to: Self.floodURL(on: server), configuration: .pingInterval(0.1))
        var numbers: [Int] = []
        var completionError: AFError?
        for await event in request.webSocketTask().streamingMessageEvents() {
            switch event.kind {
            case let .receivedMessage(message):
                numbers.append(Self.number(of: message))
                if numbers.count == 1 {
                    #expect(await waitUntil(timeout: 60) { server.webSocketFlood.timesUnwritable >= 1 })
                    // Longer than the shortest pong timeout (1 s), with reading paused throughout.
                    try await Task.sleep(nanoseconds: 1_500_000_000)
                }
            case let .completed(completion):
                completionError = completion.error
            default:
                break
            }
        }
        #expect(completionError == nil)
        #expect(numbers == Array(1...Self.messageCount))
        try await server.shutdown()
    }

    /// A suspended socket reads nothing more, however fast its consumer takes what it was handed;
    /// resumed, it delivers the rest.
    @Test func suspendingTheRequestPausesMessagesAndResumingDeliversTheRest() async throws {
        try await MemoryMeasurement.churning { try await self.suspendingTheRequestPausesMessagesAndResumingDeliversTheRestBody() }
    }

    private func suspendingTheRequestPausesMessagesAndResumingDeliversTheRestBody() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let request = session.webSocketRequest(to: Self.floodURL(on: server))
        let taken = Locked(0)
        let consumer = Task {
            var numbers: [Int] = []
            for await message in request.webSocketTask().streamingMessages() {
                numbers.append(Self.number(of: message))
                if taken.increment() == 1 { request.suspend() }
            }
            return numbers
        }
        #expect(await waitUntil(timeout: 60) { taken.current >= 1 && server.webSocketFlood.timesUnwritable >= 1 })
        let takenWhileSuspended = await valueOnceStill { Int64(taken.current) }
        request.resume()
        let numbers = await consumer.value
        // Only messages handed on before the suspension (at most the backlog bound) were taken.
        #expect(takenWhileSuspended <= Int64(1 + Self.backlogMessagesBound))
        #expect(numbers == Array(1...Self.messageCount))
        try await server.shutdown()
    }
}

/// The pure state behind the frame handler's backpressure. (Mutating calls are made before the
/// expectations: `#expect` cannot call them.)
@Suite struct WebSocketReadGateTests {
    @Test func framesAndReadsPassWhileTheConsumerKeepsUp() {
        var gate = WebSocketReadGate<String>()
        let processed = gate.frameArrived("m1", order: .keepsItsPlace, paused: false)
        let reads = gate.readRequested(paused: false)
        #expect(processed)
        #expect(reads)
        #expect(!gate.isReadHeld)
        #expect(gate.heldFrameCount == 0)
    }

    @Test func whilePausedDataWaitsInOrderAndPingsAreAnsweredAtOnce() {
        var gate = WebSocketReadGate<String>()
        let arrivals = [
            gate.frameArrived("m1", order: .keepsItsPlace, paused: true),
            gate.frameArrived("ping", order: .answeredAtOnce, paused: true),
            // Once something is held, later frames queue behind it even if the pause has ended,
            // so the consumer sees the server's order.
            gate.frameArrived("m2", order: .keepsItsPlace, paused: false),
            gate.frameArrived("close", order: .keepsItsPlace, paused: false),
        ]
        let readsWhilePaused = gate.readRequested(paused: true)
        #expect(arrivals == [false, true, false, false])
        #expect(!readsWhilePaused)
        #expect(gate.heldFrameCount == 3)
        #expect(gate.isReadHeld)

        var steps: [String] = []
        steps.append(gate.nextHeldFrame(paused: true) ?? "nothing while paused")
        steps.append(gate.releasesHeldRead(paused: true) ? "read" : "no read while paused")
        steps.append(gate.nextHeldFrame(paused: false) ?? "nothing")
        // The message taken put the consumer over its bound again: the rest waits, and the read.
        steps.append(gate.nextHeldFrame(paused: true) ?? "nothing while paused")
        steps.append(gate.releasesHeldRead(paused: false) ? "read" : "no read while frames wait")
        steps.append(gate.nextHeldFrame(paused: false) ?? "nothing")
        steps.append(gate.nextHeldFrame(paused: false) ?? "nothing")
        steps.append(gate.nextHeldFrame(paused: false) ?? "nothing")
        steps.append(gate.releasesHeldRead(paused: false) ? "read" : "no read")
        // The held read went out once; new reads pass again.
        steps.append(gate.releasesHeldRead(paused: false) ? "read" : "no read")
        steps.append(gate.readRequested(paused: false) ? "read" : "no read")
        #expect(steps == ["nothing while paused", "no read while paused", "m1", "nothing while paused",
                          "no read while frames wait", "m2", "close", "nothing", "read", "no read", "read"])
    }

    @Test func aReadAskedForWhileFramesWaitIsHeldEvenWithoutAPause() {
        var gate = WebSocketReadGate<Int>()
        let processed = gate.frameArrived(1, order: .keepsItsPlace, paused: true)
        // Resumed, with the wake-up still on its way to the event loop.
        let reads = gate.readRequested(paused: false)
        let next = gate.nextHeldFrame(paused: false)
        let released = gate.releasesHeldRead(paused: false)
        #expect(!processed)
        #expect(!reads)
        #expect(next == 1)
        #expect(released)
    }
}

extension StreamDeliveryTests {
    @Test func recordsThePeakBacklogAcrossPausesAndHandlers() {
        var delivery = StreamDelivery()
        let first = delivery.addHandler()
        let second = delivery.addHandler()
        for _ in 1...3 { _ = delivery.partArrived(byteCount: 100) }
        for _ in 1...3 {
            _ = delivery.deliveryFinished(handler: first, byteCount: 100)
            _ = delivery.deliveryFinished(handler: second, byteCount: 100)
        }
        _ = delivery.partArrived(byteCount: 50)
        #expect(delivery.peakPendingBytes == 600)
        #expect(delivery.peakPendingDeliveries == 6)
        #expect(delivery.pendingBytes == 100)
    }
}
