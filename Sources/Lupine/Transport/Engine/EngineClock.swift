import NIOCore

/// Where the engine reads the time and arms its timers: every deadline of an exchange or a
/// connection (connect, TLS handshake, waiting for a pooled connection, idle gaps, the resource
/// deadline, idle pooled connections) goes through it.
///
/// Time is a dependency: the engine runs on `SystemEngineClock`, and tests substitute a clock
/// they move forward themselves, so that a timeout test never sleeps.
protocol EngineClock: Sendable {
    /// The current time.
    var now: NIODeadline { get }

    /// Runs `task` on `eventLoop` once `deadline` has passed, unless the returned handle is
    /// cancelled first.
    func schedule(on eventLoop: any EventLoop, at deadline: NIODeadline,
                  _ task: @escaping @Sendable () -> Void) -> Scheduled<Void>
}

/// Real time: NIO's monotonic clock and the event loop's own timers.
struct SystemEngineClock: EngineClock {
    var now: NIODeadline { .now() }

    func schedule(on eventLoop: any EventLoop, at deadline: NIODeadline,
                  _ task: @escaping @Sendable () -> Void) -> Scheduled<Void> {
        eventLoop.scheduleTask(deadline: deadline, task)
    }
}

extension TimeAmount {
    /// `interval` seconds, kept between one millisecond and about 31 years so that no
    /// configuration value (a negative, huge or infinite timeout) can overflow the conversion.
    static func lupineSeconds(_ interval: Double) -> TimeAmount {
        let bounded = interval.isNaN ? 0.001 : min(max(interval, 0.001), 1e9)
        return .nanoseconds(Int64(bounded * 1_000_000_000))
    }
}
