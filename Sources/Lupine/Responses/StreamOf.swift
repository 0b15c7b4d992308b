/// An `AsyncSequence` of the values a request reports over time (progress, URLRequests, responses...).
///
/// Each iteration gets its own stream; it ends when the request finishes.
public struct StreamOf<Element>: AsyncSequence {
    public typealias AsyncIterator = Iterator
    /// How many undelivered values are kept.
    public typealias BufferingPolicy = AsyncStream<Element>.Continuation.BufferingPolicy

    private let bufferingPolicy: BufferingPolicy
    private let onTermination: (@Sendable () -> Void)?
    /// Feeds the continuation; may return what the iterator calls after handing out each element.
    private let builder: (AsyncStream<Element>.Continuation) -> (@Sendable () -> Void)?

    init(bufferingPolicy: BufferingPolicy = .unbounded,
         onTermination: (@Sendable () -> Void)? = nil,
         builder: @escaping (AsyncStream<Element>.Continuation) -> Void) {
        self.init(bufferingPolicy: bufferingPolicy, onTermination: onTermination, observingBuilder: { continuation in
            builder(continuation)
            return nil
        })
    }

    /// A stream whose producer learns when each element is taken by the iterator (the callback
    /// `builder` returns): producers with backpressure count what is still buffered.
    static func observingConsumption(bufferingPolicy: BufferingPolicy,
                                     onTermination: (@Sendable () -> Void)?,
                                     builder: @escaping (AsyncStream<Element>.Continuation) -> (@Sendable () -> Void)?) -> StreamOf {
        StreamOf(bufferingPolicy: bufferingPolicy, onTermination: onTermination, observingBuilder: builder)
    }

    private init(bufferingPolicy: BufferingPolicy,
                 onTermination: (@Sendable () -> Void)?,
                 observingBuilder builder: @escaping (AsyncStream<Element>.Continuation) -> (@Sendable () -> Void)?) {
        self.bufferingPolicy = bufferingPolicy
        self.onTermination = onTermination
        self.builder = builder
    }

    public func makeAsyncIterator() -> Iterator {
        let onTermination = onTermination
        var didHandOut: (@Sendable () -> Void)?
        let stream = AsyncStream<Element>(bufferingPolicy: bufferingPolicy) { continuation in
            continuation.onTermination = { _ in onTermination?() }
            didHandOut = builder(continuation)
        }
        return Iterator(iterator: stream.makeAsyncIterator(), didHandOut: didHandOut)
    }

    /// Iterator over the values.
    public struct Iterator: AsyncIteratorProtocol {
        private var iterator: AsyncStream<Element>.AsyncIterator
        private let didHandOut: (@Sendable () -> Void)?

        fileprivate init(iterator: AsyncStream<Element>.AsyncIterator, didHandOut: (@Sendable () -> Void)?) {
            self.iterator = iterator
            self.didHandOut = didHandOut
        }

        /// The next value, or nil once the request has finished.
        public mutating func next() async -> Element? {
            let element = await iterator.next()
            if element != nil { didHandOut?() }
            return element
        }
    }
}
