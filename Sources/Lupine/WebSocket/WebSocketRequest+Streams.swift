import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Stream handlers: each gets every event from the moment it is added (a handler added after the
// connection opened misses `.connected`), then `.completed` once the request has finished. Events
// go through the serialization queue, then to the handler's queue, in the order they happened.
// A message counts as taken (for the backpressure of incoming messages) once the handler has
// returned from it. Adding a handler resumes the request when the Session starts requests
// immediately.
extension WebSocketRequest {
    /// Adds a handler receiving each message serialized by `serializer`, and the connection events.
    ///
    /// - Parameters:
    ///   - serializer: Turns each message into a value; its failures arrive as `.serializerFailed`.
    ///   - queue: Where `handler` runs (Lupine's default: the Session's callback queue on Linux).
    ///   - handler: Receives the events.
    @preconcurrency
    @discardableResult
    public func streamSerializer<Serializer>(_ serializer: Serializer,
                                             on queue: DispatchQueue = .lupineDefault,
                                             handler: @escaping @Sendable (_ event: Event<Serializer.Output, Serializer.Failure>) -> Void) -> Self
        where Serializer: WebSocketMessageSerializer, Serializer.Failure == any Error {
        addSerializedEventHandler(serializer, on: queue.resolvingLupineDefault(to: defaultQueue)) { event, taken in
            handler(event)
            taken()
        }
    }

    /// Adds a handler like `streamSerializer(_:on:handler:)` that says when it has taken each
    /// message: it calls `taken` once per event, for a message once its consumer has it.
    @discardableResult
    func addSerializedEventHandler<Serializer>(_ serializer: Serializer,
                                               on queue: DispatchQueue,
                                               handler: @escaping @Sendable (_ event: Event<Serializer.Output, Serializer.Failure>,
                                                                             _ taken: @escaping @Sendable () -> Void) -> Void) -> Self
        where Serializer: WebSocketMessageSerializer, Serializer.Failure == any Error {
        forIncomingEvent { incoming, taken in
            let kind: Event<Serializer.Output, Serializer.Failure>.Kind
            switch incoming {
            case let .connected(`protocol`): kind = .connected(protocol: `protocol`)
            case let .receivedMessage(message):
                do {
                    kind = try .receivedMessage(serializer.decode(message))
                } catch {
                    kind = .serializerFailed(error)
                }
            case let .disconnected(closeCode, reason): kind = .disconnected(closeCode: closeCode, reason: reason)
            case let .completed(completion): kind = .completed(completion)
            }
            let event = Event<Serializer.Output, Serializer.Failure>(socket: self, kind: kind)
            queue.async { handler(event, taken) }
        }
    }

    /// Adds a handler receiving each message decoded as JSON of type `Value`, and the connection
    /// events; a message that does not decode arrives as `.serializerFailed` with a
    /// `DecodableWebSocketMessageDecoder<Value>.Error`.
    @preconcurrency
    @discardableResult
    public func streamDecodableEvents<Value>(_ type: Value.Type = Value.self,
                                             on queue: DispatchQueue = .lupineDefault,
                                             using decoder: any DataDecoder = JSONDecoder(),
                                             handler: @escaping @Sendable (_ event: Event<Value, any Error>) -> Void) -> Self
        where Value: Decodable & Sendable {
        streamSerializer(DecodableWebSocketMessageDecoder<Value>(decoder: decoder), on: queue, handler: handler)
    }

    /// Adds a handler receiving only the messages that decode as JSON of type `Value`.
    @preconcurrency
    @discardableResult
    public func streamDecodable<Value>(_ type: Value.Type = Value.self,
                                       on queue: DispatchQueue = .lupineDefault,
                                       using decoder: any DataDecoder = JSONDecoder(),
                                       handler: @escaping @Sendable (_ value: Value) -> Void) -> Self
        where Value: Decodable & Sendable {
        streamDecodableEvents(Value.self, on: queue, using: decoder) { event in
            event.message.map(handler)
        }
    }

    /// Adds a handler receiving each message as it arrived, and the connection events.
    @preconcurrency
    @discardableResult
    public func streamMessageEvents(on queue: DispatchQueue = .lupineDefault,
                                    handler: @escaping @Sendable (_ event: Event<URLSessionWebSocketTask.Message, Never>) -> Void) -> Self {
        addMessageEventHandler(on: queue.resolvingLupineDefault(to: defaultQueue)) { event, taken in
            handler(event)
            taken()
        }
    }

    /// Adds a handler like `streamMessageEvents(on:handler:)` that says when it has taken each
    /// message: it calls `taken` once per event, for a message once its consumer has it.
    @discardableResult
    func addMessageEventHandler(on queue: DispatchQueue,
                                handler: @escaping @Sendable (_ event: Event<URLSessionWebSocketTask.Message, Never>,
                                                              _ taken: @escaping @Sendable () -> Void) -> Void) -> Self {
        forIncomingEvent { incoming, taken in
            let kind: Event<URLSessionWebSocketTask.Message, Never>.Kind
            switch incoming {
            case let .connected(`protocol`): kind = .connected(protocol: `protocol`)
            case let .receivedMessage(message): kind = .receivedMessage(message)
            case let .disconnected(closeCode, reason): kind = .disconnected(closeCode: closeCode, reason: reason)
            case let .completed(completion): kind = .completed(completion)
            }
            let event = Event<URLSessionWebSocketTask.Message, Never>(socket: self, kind: kind)
            queue.async { handler(event, taken) }
        }
    }

    /// Adds a handler receiving only the messages.
    @preconcurrency
    @discardableResult
    public func streamMessages(on queue: DispatchQueue = .lupineDefault,
                               handler: @escaping @Sendable (_ message: URLSessionWebSocketTask.Message) -> Void) -> Self {
        streamMessageEvents(on: queue) { event in
            event.message.map(handler)
        }
    }

    /// Registers `handler` for the socket events (on the serialization queue), counted in the
    /// backlog of incoming messages from now on, and queues the response serializer that sends
    /// `.completed` once the request has finished.
    private func forIncomingEvent(_ handler: @escaping EventConsumer) -> Self {
        let serializationQueue = serializationQueue
        socketState.withLockedValue { state in
            let id = state.delivery.addHandler()
            state.handlers.append((id, { event, taken in serializationQueue.async { handler(event, taken) } }))
        }
        appendResponseSerializer {
            self.responseSerializerDidComplete {
                let completion = Completion(request: self.request, response: self.response, metrics: nil, error: self.error)
                serializationQueue.async { handler(.completed(completion)) {} }
            }
        }
        return self
    }
}
