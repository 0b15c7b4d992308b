import NIOPosix

/// Where Lupine runs what (the architecture article, "The thread contract"): an event loop runs
/// engine code only; user code runs on the Session's queues, the queue the caller named, or the
/// task awaiting the response; disk I/O runs on `DiskIO`'s threads.
///
/// Every call-out to user code and every disk operation asks this type first. In debug builds a
/// call on the wrong thread stops the process with the name of the call-out, so that a test that
/// takes such a path fails where it happens; release builds check nothing.
enum ThreadContract {
    /// Whether the calling thread is one of SwiftNIO's event loops (any group's, the singleton's
    /// included: the loops Lupine shares with the servers it runs in).
    static var isOnEventLoop: Bool {
        MultiThreadedEventLoopGroup.currentEventLoop != nil
    }

    /// Whether the calling thread runs a Swift task now (the cooperative pool, or a task's
    /// executor): no place for a blocking disk operation.
    static var isInTask: Bool {
        withUnsafeCurrentTask { $0 != nil }
    }

    /// Checks that user code (`callOut` names it: "a validator", "a redirect handler") may run
    /// on the calling thread: anywhere but an event loop.
    @inline(__always)
    static func userCode(_ callOut: StaticString, file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        if isOnEventLoop { violated("\(callOut) would run on an event loop", file: file, line: line) }
        #endif
    }

    /// Checks that a disk operation (`operation` names it) may run on the calling thread: neither
    /// an event loop nor a Swift task.
    @inline(__always)
    static func diskIO(_ operation: StaticString, file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        if isOnEventLoop { violated("\(operation) would run on an event loop", file: file, line: line) }
        if isInTask { violated("\(operation) would run in a Swift task (the cooperative pool)", file: file, line: line) }
        #endif
    }

    #if DEBUG
    private static func violated(_ message: String, file: StaticString, line: UInt) {
        assertionFailure("Lupine's thread contract: \(message)", file: file, line: line)
    }
    #endif
}
