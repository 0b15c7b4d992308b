/// Keeps tests that read the process's resident memory apart from tests that churn through
/// hundreds of megabytes: the process is shared by every test running in parallel, and a flood
/// running beside a measurement shows up in it as growth the measured request never caused.
///
/// Churning tests run together; a measuring test waits until none runs, and none starts while
/// it measures.
actor MemoryMeasurement {
    static let gate = MemoryMeasurement()

    private var churning = 0
    private var measuring = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Runs `body`, which allocates and frees a great deal, while no test measures.
    static func churning<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await gate.enter(churning: true)
        do {
            let result = try await body()
            await gate.leave(churning: true)
            return result
        } catch {
            await gate.leave(churning: true)
            throw error
        }
    }

    /// Runs `body`, which reads the process's resident memory, while no churning test runs.
    static func measuring<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        await gate.enter(churning: false)
        do {
            let result = try await body()
            await gate.leave(churning: false)
            return result
        } catch {
            await gate.leave(churning: false)
            throw error
        }
    }

    private func enter(churning isChurning: Bool) async {
        while isChurning ? measuring > 0 : churning > 0 {
            await withCheckedContinuation { waiters.append($0) }
        }
        if isChurning { churning += 1 } else { measuring += 1 }
    }

    private func leave(churning isChurning: Bool) {
        if isChurning { churning -= 1 } else { measuring -= 1 }
        let woken = waiters
        waiters.removeAll()
        woken.forEach { $0.resume() }
    }
}
