#if canImport(CDispatch)
import CDispatch
#endif
import Dispatch

/// Work run inside a queue entered synchronously by `SerialQueueEntry`: a value, so that it is
/// passed to the queue by address and no closure is made for it.
protocol QueueEntryBody {
    /// Runs the work; its results are left in the value itself.
    mutating func run()
    /// Runs the body stored at `pointer` (defaulted below; a requirement so that an existential
    /// metatype can call it for a body whose type the C callback cannot name).
    static func run(at pointer: UnsafeMutableRawPointer)
}

extension QueueEntryBody {
    static func run(at pointer: UnsafeMutableRawPointer) {
        pointer.assumingMemoryBound(to: Self.self).pointee.run()
    }
}

/// Enters a serial queue synchronously, as `DispatchQueue.sync` does, without its allocations (and
/// queues work on it, as `async` does, without a block).
///
/// On Linux, `DispatchQueue.sync(execute:)` turns its closure into an escaping one and then into
/// a block: two heap allocations per entry, and the root queue is entered twice per request.
/// `dispatch_sync_f` takes a C function and a context pointer instead, both on the caller's
/// stack. corelibs' `DispatchQueue` keeps the `dispatch_queue_t` it wraps in a stored property
/// that it does not publish; it is read once, by reflection. If a later Dispatch stores it
/// differently, the entry falls back to `DispatchQueue.sync`: slower, never wrong.
struct SerialQueueEntry: @unchecked Sendable {
    let queue: DispatchQueue
    #if canImport(CDispatch)
    /// The queue's `dispatch_queue_t`, nil when it could not be found. Unchecked: a pointer to a
    /// queue, which Dispatch lets any thread use.
    private let wrapped: OpaquePointer?
    #endif

    init(queue: DispatchQueue) {
        self.queue = queue
        #if canImport(CDispatch)
        wrapped = Mirror(reflecting: queue).children.first { $0.label == "__wrapped" }?.value as? OpaquePointer
        #endif
    }

    /// Whether entries go through `dispatch_sync_f` (the queue's `dispatch_queue_t` was found),
    /// not through `DispatchQueue.sync`. Always false off Linux, where `sync` costs nothing more.
    var entersWithoutClosures: Bool {
        #if canImport(CDispatch)
        wrapped != nil
        #else
        false
        #endif
    }

    /// Runs `body` on the queue and waits for it, as `queue.sync` does: the results are in `body`
    /// afterwards. The caller must not already run on the queue (that deadlocks, as `sync` does).
    func sync<Body: QueueEntryBody>(_ body: inout Body) {
        #if canImport(CDispatch)
        if let wrapped {
            withUnsafeMutablePointer(to: &body) { bodyPointer in
                var call = ErasedBody(pointer: UnsafeMutableRawPointer(bodyPointer), type: Body.self)
                withUnsafeMutablePointer(to: &call) { callPointer in
                    dispatch_sync_f(wrapped, callPointer) { context in
                        guard let call = context?.assumingMemoryBound(to: ErasedBody.self).pointee else { return }
                        call.type.run(at: call.pointer)
                    }
                }
            }
            return
        }
        #endif
        queue.sync { body.run() }
    }

    /// Queues `function` on the queue, as `queue.async` does, with `object` retained as its
    /// argument, without making a block (one allocation per hand-off on Linux). `function` must
    /// take the object back once with `Unmanaged.takeRetainedValue()` (see `takeRetained(_:)`).
    func async<Object: AnyObject & Sendable>(retaining object: Object,
                                            _ function: @convention(c) (UnsafeMutableRawPointer?) -> Void) {
        let context = Unmanaged.passRetained(object).toOpaque()
        #if canImport(CDispatch)
        if let wrapped {
            dispatch_async_f(wrapped, context, function)
            return
        }
        #endif
        let address = UInt(bitPattern: context)
        queue.async { function(UnsafeMutableRawPointer(bitPattern: address)) }
    }

    /// The object `async(retaining:_:)` passed, taken back (its retain released with it).
    static func takeRetained<Object: AnyObject>(_ context: UnsafeMutableRawPointer?, as type: Object.Type) -> Object? {
        context.map { Unmanaged<Object>.fromOpaque($0).takeRetainedValue() }
    }

    /// A body the C callback can run without naming its type.
    private struct ErasedBody {
        let pointer: UnsafeMutableRawPointer
        let type: any QueueEntryBody.Type
    }
}
