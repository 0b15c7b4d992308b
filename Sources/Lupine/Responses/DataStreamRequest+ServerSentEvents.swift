import Foundation
import NIOConcurrencyHelpers

extension DataStreamRequest {
    /// Adds a handler receiving each Server-Sent Event of a `text/event-stream` response as it is
    /// completed (one `.stream` event per Server-Sent Event, however the body was chunked), then
    /// `.complete`. An event left unfinished when the response ends is discarded.
    ///
    /// This handler does not reconnect; see `Session.serverSentEvents(from:...)` for that.
    ///
    /// - Parameters:
    ///   - queue: Where `handler` runs (Lupine's default: the Session's callback queue on Linux).
    ///   - handler: Receives the events; throwing cancels the request, as for every stream handler.
    @preconcurrency
    @discardableResult
    public func responseServerSentEvents(on queue: DispatchQueue = .lupineDefault,
                                         handler: @escaping Handler<ServerSentEvent, Never>) -> Self {
        let serializer = ServerSentEventSerializer()
        addStreamHandler(on: queue.resolvingLupineDefault(to: defaultQueue),
                         serialize: Self.serializingEvents(with: serializer)) { (stream: Stream<[ServerSentEvent], Never>) in
            switch stream.event {
            case let .stream(.success(events)):
                for event in events {
                    try handler(Stream(event: .stream(.success(event)), token: stream.token))
                }
            case let .complete(completion):
                try handler(Stream(event: .complete(completion), token: stream.token))
            }
        }
        return self
    }

    /// Parses each chunk where it arrives: the parser needs the chunks in order, and they arrive
    /// in order.
    static func serializingEvents(with serializer: ServerSentEventSerializer)
        -> @Sendable (Data, _ emit: @escaping @Sendable (Result<[ServerSentEvent], Never>) -> Void) -> Void {
        { data, emit in emit(.success(serializer.parse(data))) }
    }
}

@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
extension DataStreamTask {
    /// Each Server-Sent Event of a `text/event-stream` response, then `.complete`. Backpressure
    /// reaches the socket as for the other streams: a chunk counts as handled once the iterator
    /// has taken every event it completed.
    public func streamingServerSentEvents(automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
                                          bufferingPolicy: Stream<ServerSentEvent, Never>.BufferingPolicy = .unbounded)
        -> Stream<ServerSentEvent, Never> {
        makeStream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { request, queue, handler in
            let serializer = ServerSentEventSerializer()
            request.addStreamHandler(on: queue, serialize: DataStreamRequest.serializingEvents(with: serializer)) {
                (stream: DataStreamRequest.Stream<[ServerSentEvent], Never>, done: @escaping @Sendable () -> Void) in
                switch stream.event {
                case let .stream(.success(events)):
                    guard !events.isEmpty else {
                        done()
                        return
                    }
                    // The chunk is handled once each of its events has been taken.
                    let remaining = NIOLockedValueBox(events.count)
                    let eventTaken: @Sendable () -> Void = {
                        if remaining.withLockedValue({ count -> Int in
                            count -= 1
                            return count
                        }) == 0 { done() }
                    }
                    for event in events {
                        try handler(DataStreamRequest.Stream(event: .stream(.success(event)), token: stream.token), eventTaken)
                    }
                case let .complete(completion):
                    try handler(DataStreamRequest.Stream(event: .complete(completion), token: stream.token), done)
                }
            }
        }
    }
}
