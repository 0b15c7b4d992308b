import Foundation

extension DataStreamRequest {
    /// Adds a handler that gets each chunk of the body as received, then the `.complete` event.
    ///
    /// Adding a handler resumes the request when the Session starts requests immediately. Only
    /// chunks arriving after the handler was added reach it.
    ///
    /// - Parameters:
    ///   - queue: Where `stream` is called; the Session's callback queue by default.
    ///   - stream: Called once per chunk, then once with `.complete`. Throwing cancels the request
    ///     and records the error (see `Handler`).
    @preconcurrency
    @discardableResult
    public func responseStream(on queue: DispatchQueue = .lupineDefault, stream: @escaping Handler<Data, Never>) -> Self {
        addStreamHandler(on: queue.resolvingLupineDefault(to: defaultQueue),
                         serialize: { data, emit in emit(.success(data)) },
                         handler: stream)
        return self
    }

    /// Adds a handler that gets each chunk passed through `serializer`, then the `.complete` event.
    ///
    /// Serialization runs on the Session's `serializationQueue`. A failure reaches `stream` as a
    /// `.failure` (a non-`AFError` becomes `.responseSerializationFailed(reason:
    /// .customSerializationFailed(error:))`) and, with `automaticallyCancelOnStreamError`, cancels
    /// the request. Each result is reported to the event monitors with `request(_:didParseStream:)`.
    ///
    /// - Parameters:
    ///   - serializer: Turns each chunk into a value.
    ///   - queue: Where `stream` is called; the Session's callback queue by default.
    ///   - stream: Called once per chunk, then once with `.complete`.
    @preconcurrency
    @discardableResult
    public func responseStream<Serializer: DataStreamSerializer>(using serializer: Serializer,
                                                                 on queue: DispatchQueue = .lupineDefault,
                                                                 stream: @escaping Handler<Serializer.SerializedObject, AFError>) -> Self {
        addStreamHandler(on: queue.resolvingLupineDefault(to: defaultQueue),
                         serialize: serializing(with: serializer),
                         handler: stream)
        return self
    }

    /// Adds a handler that gets each chunk decoded as UTF-8 (invalid sequences become U+FFFD; a
    /// character split across two chunks is not reassembled), then the `.complete` event. Each
    /// string is reported to the event monitors with `request(_:didParseStream:)`.
    ///
    /// - Parameters:
    ///   - queue: Where `stream` is called; the Session's callback queue by default.
    ///   - stream: Called once per chunk, then once with `.complete`.
    @preconcurrency
    @discardableResult
    public func responseStreamString(on queue: DispatchQueue = .lupineDefault,
                                     stream: @escaping Handler<String, Never>) -> Self {
        addStreamHandler(on: queue.resolvingLupineDefault(to: defaultQueue),
                         serialize: decodingStrings(),
                         handler: stream)
        return self
    }

    /// Adds a handler that gets each chunk, after `preprocessor`, decoded as `T`, then the
    /// `.complete` event. Each chunk must hold one whole value.
    ///
    /// - Parameters:
    ///   - type: The type decoded.
    ///   - queue: Where `stream` is called; the Session's callback queue by default.
    ///   - decoder: The decoder; a failure arrives as
    ///     `.failure(.responseSerializationFailed(reason: .decodingFailed(error:)))`.
    ///   - preprocessor: Runs on each chunk before decoding.
    ///   - stream: Called once per chunk, then once with `.complete`.
    @preconcurrency
    @discardableResult
    public func responseStreamDecodable<T: Decodable>(of type: T.Type = T.self,
                                                      on queue: DispatchQueue = .lupineDefault,
                                                      using decoder: any DataDecoder = JSONDecoder(),
                                                      preprocessor: any DataPreprocessor = PassthroughPreprocessor(),
                                                      stream: @escaping Handler<T, AFError>) -> Self where T: Sendable {
        responseStream(using: DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: preprocessor),
                       on: queue,
                       stream: stream)
    }

    /// The serialize step of a string handler. When a monitor may want `request(_:didParseStream:)`,
    /// it is the `StringStreamSerializer` step, so monitors see string chunks as they see serialized
    /// ones, as in Alamofire; otherwise each chunk is decoded and emitted at once, without the two
    /// queue hops per chunk.
    func decodingStrings() -> @Sendable (Data, _ emit: @escaping @Sendable (Result<String, Never>) -> Void) -> Void {
        let serialize = serializing(with: StringStreamSerializer())
        return { data, emit in
            guard self.monitorsWant(.didParseStream) else {
                emit(.success(String(decoding: data, as: UTF8.self)))
                return
            }
            // A string serializer never fails.
            serialize(data) { result in
                if case let .success(string) = result { emit(.success(string)) }
            }
        }
    }

    /// The serialize step of a `DataStreamSerializer` handler: serializes on `serializationQueue`,
    /// reports the result and applies `automaticallyCancelOnStreamError` on `underlyingQueue`,
    /// then emits. Both queues are serial, so chunks keep their order.
    func serializing<Serializer: DataStreamSerializer>(with serializer: Serializer)
        -> @Sendable (Data, _ emit: @escaping @Sendable (Result<Serializer.SerializedObject, AFError>) -> Void) -> Void {
        { data, emit in
            self.onSerializationQueue {
                let result = Result { try serializer.serialize(data) }.mapError { error -> AFError in
                    error.asAFError ?? .responseSerializationFailed(reason: .customSerializationFailed(error: error))
                }
                self.onUnderlyingQueue {
                    self.notify(.didParseStream) { $0.request(self, didParseStream: result) }
                    if case .failure = result, self.automaticallyCancelOnStreamError { self.cancel() }
                    emit(result)
                }
            }
        }
    }
}
