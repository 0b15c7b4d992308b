import Dispatch
import Foundation
import Synchronization

/// Ends the demo with a one-line reason when a step hangs, so that CI fails instead of waiting
/// forever. (A request whose completion handler never runs cannot be awaited away any other way.)
final class DemoWatchdog: Sendable {
    private let seconds: Int
    /// Bumped by every `arm` and `disarm`: a timer fires only if nothing happened since it was set.
    private let generation = Mutex(0)

    /// A watchdog that gives each step `seconds` to finish.
    init(seconds: Int) {
        self.seconds = seconds
    }

    /// Starts the clock for `step`, stopping the previous step's.
    func arm(for step: String) {
        let armed = generation.withLock { generation in
            generation += 1
            return generation
        }
        let seconds = seconds
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) { [self] in
            guard generation.withLock({ $0 == armed }) else { return }
            Console.error("lupine demo: \(step) did not finish within \(seconds) s.")
            exit(1)
        }
    }

    /// Stops the clock.
    func disarm() {
        generation.withLock { $0 += 1 }
    }
}
