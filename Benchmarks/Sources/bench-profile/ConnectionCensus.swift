import Foundation

/// The TCP connections between this machine's clients and one server port, read from
/// /proc/net/tcp: every client port seen in any state, TIME_WAIT included (which keeps a closed
/// connection visible for 60 seconds), so that new connections made during a run can be counted.
struct ConnectionCensus {
    let serverPort: Int

    /// The client-side ports of the connections to `serverPort` that exist now.
    func clientPorts() -> Set<Int> {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return [] }
        var ports = Set<Int>()
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 3, let local = port(fields[1]), let remote = port(fields[2]) else { continue }
            if remote == serverPort { ports.insert(local) } else if local == serverPort, remote != 0 { ports.insert(remote) }
        }
        return ports
    }

    /// The port of an `ADDRESS:PORT` field, both in hex.
    private func port(_ field: Substring) -> Int? {
        field.split(separator: ":").last.flatMap { Int($0, radix: 16) }
    }
}
