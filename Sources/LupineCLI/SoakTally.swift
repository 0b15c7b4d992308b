import Foundation

/// Counts of the soak's outcomes, per kind and label, safe to update from any task.
final class SoakTally: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [String: Int] = [:]
    private var unexpected: [String: Int] = [:]
    private var completedCount = 0

    /// Records one finished request.
    func record(_ kind: SoakKind, label: String, expected: Bool) {
        lock.withLock {
            completedCount += 1
            if label != "ok" { outcomes["\(kind.rawValue): \(label)", default: 0] += 1 }
            if !expected { unexpected["\(kind.rawValue): \(label)", default: 0] += 1 }
        }
    }

    var completed: Int { lock.withLock { completedCount } }

    /// Requests whose outcome was not the one their kind must have.
    var unexpectedCount: Int { lock.withLock { unexpected.values.reduce(0, +) } }

    /// "kind: label ×count" for every error outcome (expected or not), sorted.
    var errorSummary: String {
        lock.withLock {
            outcomes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
        }
    }

    /// The same for the unexpected outcomes only.
    var unexpectedSummary: String {
        lock.withLock {
            unexpected.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
        }
    }
}
