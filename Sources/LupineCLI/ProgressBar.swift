import Dispatch
import Foundation
import Synchronization

/// Draws the download progress line on standard error, in place, when standard error is a
/// terminal; draws nothing otherwise.
///
/// Progress updates only record; a timer redraws five times a second, so a burst of updates costs
/// no extra writes, and a stalled transfer still shows its rate falling and its last byte count.
final class ProgressBar: Sendable {
    private struct State {
        var start: Date?
        /// The bytes the file held at the first update (a resumed download's kept bytes).
        var firstReceived: Int64?
        /// (time, bytes) of the last few seconds, for the rate; never empty once started.
        var samples: [(time: Date, bytes: Int64)] = []
        var received: Int64 = 0
        var total: Int64?
        var timer = Timer()
        var drawnOnce = false
        var isFinished = false
    }

    /// The redraw timer. Unchecked Sendable: a dispatch source may be cancelled from any thread,
    /// and it is only ever set and cancelled under the lock.
    private struct Timer: @unchecked Sendable {
        var source: (any DispatchSourceTimer)?

        mutating func cancel() {
            source?.cancel()
            source = nil
        }
    }

    private let state = Mutex(State())
    private let isEnabled: Bool
    private let queue = DispatchQueue(label: "lupine.cli.progress")
    /// Seconds of samples the rate is computed over.
    static let rateWindow: TimeInterval = 3
    static let redrawInterval = DispatchTimeInterval.milliseconds(200)

    init(isEnabled: Bool = Terminal.isTerminal(STDERR_FILENO)) {
        self.isEnabled = isEnabled
    }

    /// Records progress; the first update draws at once and starts the redraw timer.
    func update(received: Int64, total: Int64?) {
        guard isEnabled else { return }
        let now = Date()
        let isFirst = state.withLock { state -> Bool in
            guard !state.isFinished else { return false }
            let isFirst = state.start == nil
            if isFirst {
                state.start = now
                state.firstReceived = received
            }
            state.received = received
            state.total = total
            state.samples.append((now, received))
            return isFirst
        }
        guard isFirst else { return }
        redraw()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.redrawInterval, repeating: Self.redrawInterval)
        timer.setEventHandler { [weak self] in self?.redraw() }
        timer.resume()
        let box = Timer(source: timer)
        state.withLock { state in
            if state.isFinished { box.source?.cancel() } else { state.timer = box }
        }
    }

    /// Draws the final line with the final count (progress handlers may still be queued) and the
    /// time taken instead of the time left, and moves to the next line.
    func finish(received: Int64) {
        guard isEnabled else { return }
        let now = Date()
        state.withLock { state in
            state.isFinished = true
            state.received = max(state.received, received)
            state.timer.cancel()
            if state.start == nil {
                state.start = now
                state.firstReceived = 0
            }
            if state.total == nil || state.total ?? 0 < state.received { state.total = state.received }
            draw(Self.line(&state, now: now, finished: true))
        }
        Console.writeError(Data("\n".utf8))
    }

    /// Stops drawing and clears the line (before an error or an interruption message).
    func clear() {
        guard isEnabled else { return }
        let drawn = state.withLock { state -> Bool in
            state.isFinished = true
            state.timer.cancel()
            return state.drawnOnce
        }
        if drawn { queue.sync { Console.writeError(Data("\r\u{1B}[K".utf8)) } }
    }

    private func redraw() {
        // Drawn under the lock: a frame computed before `finish` must not reach the terminal after
        // the final line (the response can arrive while a progress handler is still drawing).
        state.withLock { state in
            guard !state.isFinished else { return }
            state.drawnOnce = true
            draw(Self.line(&state, now: Date(), finished: false))
        }
    }

    private func draw(_ line: String) {
        Console.writeError(Data(("\r" + line + "\u{1B}[K").utf8))
    }

    private static func line(_ state: inout State, now: Date, finished: Bool) -> String {
        let elapsed = now.timeIntervalSince(state.start ?? now)
        // The rate over the last few seconds up to now: it falls while the transfer stalls.
        while state.samples.count > 1, now.timeIntervalSince(state.samples[0].time) > rateWindow {
            state.samples.removeFirst()
        }
        var rate: Double?
        if let first = state.samples.first, now.timeIntervalSince(first.time) >= 0.2 {
            rate = Double(state.received - first.bytes) / now.timeIntervalSince(first.time)
        }
        if finished, elapsed >= 0.05 {
            // Once done: the average of the whole run, not of its last seconds.
            rate = Double(state.received - min(state.firstReceived ?? 0, state.received)) / elapsed
        }
        return ProgressLine.render(received: state.received, total: state.total, bytesPerSecond: rate,
                                   elapsed: elapsed, finished: finished, columns: Terminal.columns(STDERR_FILENO))
    }
}
