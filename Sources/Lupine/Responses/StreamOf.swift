/// An `AsyncSequence` of the values a request reports over time (progress, URLRequests, responses...).
///
/// Each iteration gets its own stream; it ends when the request finishes.
public struct StreamOf<Element>: AsyncSequence {
    public typealias AsyncIterator = Iterator
    /// How many undelivered values are kept.
    public typealias BufferingPolicy = AsyncStream<Element>.Continuation.BufferingPolicy

    private let bufferingPolicy: BufferingPolicy
    private let onTermination: (@Sendable () -> Void)?
    private let builder: (AsyncStream<Element>.Continuation) -> Void

    init(bufferingPolicy: BufferingPolicy = .unbounded,
         onTermination: (@Sendable () -> Void)? = nil,
         builder: @escaping (AsyncStream<Element>.Continuation) -> Void) {
        self.bufferingPolicy = bufferingPolicy
        self.onTermination = onTermination
        self.builder = builder
    }

    public func makeAsyncIterator() -> Iterator {
        let onTermination = onTermination
        let stream = AsyncStream<Element>(bufferingPolicy: bufferingPolicy) { continuation in
            continuation.onTermination = { _ in onTermination?() }
            builder(continuation)
        }
        return Iterator(iterator: stream.makeAsyncIterator())
    }

    /// Iterator over the values.
    public struct Iterator: AsyncIteratorProtocol {
        private var iterator: AsyncStream<Element>.AsyncIterator

        fileprivate init(iterator: AsyncStream<Element>.AsyncIterator) {
            self.iterator = iterator
        }

        /// The next value, or nil once the request has finished.
        public mutating func next() async -> Element? {
            await iterator.next()
        }
    }
}
