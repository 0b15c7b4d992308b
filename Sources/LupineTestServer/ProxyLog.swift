import Synchronization

/// The requests a `LupineTestProxy` has seen, shared by its connections.
final class ProxyLog: Sendable {
    private let records = Mutex<[ProxyRecord]>([])

    func append(_ record: ProxyRecord) {
        records.withLock { $0.append(record) }
    }

    var all: [ProxyRecord] {
        records.withLock { $0 }
    }
}
