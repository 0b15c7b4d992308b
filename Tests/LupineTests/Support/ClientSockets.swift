import Foundation

/// The TCP sockets this process holds open towards given ports of 127.0.0.1: what a leak check
/// counts. Read from /proc (Linux): the socket inodes of /proc/self/fd, matched with the remote
/// ports in /proc/self/net/tcp. Sockets of servers in the same process (local port = the port) are
/// not counted; other tests running at the same time use other ports.
enum ClientSockets {
    /// The inodes of the sockets connected to one of `ports`, except those whose local port is in
    /// `excludedLocalPorts`; nil where /proc cannot be read.
    static func open(toPorts ports: Set<Int>, excludingLocalPorts excludedLocalPorts: Set<Int> = []) -> Set<Int>? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        var descriptors = Set<Int>()
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                  target.hasPrefix("socket:["), let inode = Int(target.dropFirst(8).dropLast()) else { continue }
            descriptors.insert(inode)
        }
        var matched = Set<Int>()
        // A socket's line names the port in hex, after a colon, in its local or remote address.
        let portTokens = ports.map { String(format: ":%04X ", $0) }
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            // Read to the end: `String(contentsOfFile:)` stops after the first 4 KiB of a /proc
            // file (27 lines of a table that lists every socket of the network namespace).
            guard let handle = FileHandle(forReadingAtPath: table) else { continue }
            let data = (try? handle.readToEnd()) ?? Data()
            try? handle.close()
            let text = String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n").dropFirst() where portTokens.contains(where: { line.contains($0) }) {
                let columns = line.split(separator: " ")
                guard columns.count > 9, let remotePort = columns[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                      ports.contains(remotePort), let inode = Int(columns[9]), descriptors.contains(inode),
                      let localPort = columns[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                      !excludedLocalPorts.contains(localPort) else { continue }
                matched.insert(inode)
            }
        }
        return matched
    }

    /// Waits (polling, up to `patience`) until no socket to `ports` other than `baseline` is open;
    /// returns those still open then.
    static func leaked(toPorts ports: Set<Int>, beyond baseline: Set<Int>, excludingLocalPorts excludedLocalPorts: Set<Int> = [],
                       patience: Duration = .seconds(5)) async -> Set<Int> {
        let deadline = ContinuousClock.now + patience
        while true {
            let extra = (open(toPorts: ports, excludingLocalPorts: excludedLocalPorts) ?? []).subtracting(baseline)
            if extra.isEmpty || ContinuousClock.now >= deadline { return extra }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
