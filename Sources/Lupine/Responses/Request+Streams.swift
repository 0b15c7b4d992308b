import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
extension Request {
    /// Upload progress values; installs the upload progress handler (replacing one set with
    /// `uploadProgress(queue:closure:)`) and ends when the request finishes.
    public func uploadProgress(bufferingPolicy: StreamOf<Progress>.BufferingPolicy = .unbounded) -> StreamOf<Progress> {
        stream(bufferingPolicy: bufferingPolicy) { [unowned self] continuation in
            uploadProgress(queue: underlyingQueue) { continuation.yield($0) }
        }
    }

    /// Download progress values; installs the download progress handler and ends when the request
    /// finishes.
    public func downloadProgress(bufferingPolicy: StreamOf<Progress>.BufferingPolicy = .unbounded) -> StreamOf<Progress> {
        stream(bufferingPolicy: bufferingPolicy) { [unowned self] continuation in
            downloadProgress(queue: underlyingQueue) { continuation.yield($0) }
        }
    }

    /// Every URLRequest created for the request (the current one first); ends when it finishes.
    public func urlRequests(bufferingPolicy: StreamOf<URLRequest>.BufferingPolicy = .unbounded) -> StreamOf<URLRequest> {
        stream(bufferingPolicy: bufferingPolicy) { [unowned self] continuation in
            onURLRequestCreation(on: underlyingQueue) { continuation.yield($0) }
        }
    }

    /// The cURL description of the request, once a URLRequest exists (as `cURLDescription(on:calling:)`);
    /// ends when the request finishes.
    public func cURLDescriptions(bufferingPolicy: StreamOf<String>.BufferingPolicy = .unbounded) -> StreamOf<String> {
        stream(bufferingPolicy: bufferingPolicy) { [unowned self] continuation in
            cURLDescription(on: underlyingQueue) { continuation.yield($0) }
        }
    }

    /// A stream fed by `install`, finished when the request finishes.
    func stream<Element>(bufferingPolicy: StreamOf<Element>.BufferingPolicy,
                         install: @escaping @Sendable (AsyncStream<Element>.Continuation) -> Void) -> StreamOf<Element> {
        StreamOf(bufferingPolicy: bufferingPolicy) { [unowned self] continuation in
            let box = ContinuationBox(continuation)
            underlyingQueue.async {
                install(box.continuation)
                // Values the handler queued on `underlyingQueue` (the current request, say) are
                // delivered before the stream ends.
                self.onFinish { self.underlyingQueue.async { box.continuation.finish() } }
            }
        }
    }
}

/// Carries a continuation into `@Sendable` closures (yield and finish are thread-safe).
struct ContinuationBox<Element>: @unchecked Sendable {
    let continuation: AsyncStream<Element>.Continuation
    init(_ continuation: AsyncStream<Element>.Continuation) { self.continuation = continuation }
}
