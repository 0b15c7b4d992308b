import Foundation

/// Counts the distinct TCP connections this process holds to one server port while a run goes
/// on: every 250 ms it matches the socket inodes of /proc/self/fd against /proc/net/tcp and
/// remembers each one seen. A client that reuses its pool shows a handful; one that opens a
/// connection per request shows hundreds.
///
/// Reading those tables costs CPU in this process, more the more sockets the machine holds, and
/// the same per second whatever the client: `ownUsage` is what the census thread spent, for
/// bench-profile to take out of the process's figures.
final class ConnectionCensus: @unchecked Sendable {
    typealias Usage = (voluntary: Int, involuntary: Int, cpuMicroseconds: Int)

    private let serverPort: Int
    private let lock = NSLock()
    private var seen = Set<String>()
    private var isRunning = false
    private var threadUsage: Usage = (0, 0, 0)

    init(serverPort: Int) {
        self.serverPort = serverPort
    }

    /// Starts sampling on a thread of its own.
    func start() {
        lock.withLock { isRunning = true }
        Thread.detachNewThread { [self] in
            while lock.withLock({ isRunning }) {
                let current = connectionInodes()
                let usage = Self.callingThreadUsage()
                lock.withLock {
                    seen.formUnion(current)
                    threadUsage = usage
                }
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
    }

    /// The CPU and context switches of the census thread, as of its last sample.
    var ownUsage: Usage {
        lock.withLock { threadUsage }
    }

    /// The calling thread's CPU (user + system) and context switches so far (Linux's RUSAGE_THREAD).
    private static func callingThreadUsage() -> Usage {
        // RUSAGE_THREAD is 1 on Linux; Glibc's module leaves it out (it is a GNU extension).
        let rusageThread: Int32 = 1
        var usage = rusage()
        getrusage(rusageThread, &usage)
        let cpu = (Int(usage.ru_utime.tv_sec) + Int(usage.ru_stime.tv_sec)) * 1_000_000
            + Int(usage.ru_utime.tv_usec) + Int(usage.ru_stime.tv_usec)
        return (Int(usage.ru_nvcsw), Int(usage.ru_nivcsw), cpu)
    }

    /// Stops sampling and returns the number of distinct connections seen.
    func stop() -> Int {
        let current = connectionInodes()
        return lock.withLock {
            isRunning = false
            seen.formUnion(current)
            return seen.count
        }
    }

    /// Inodes of this process's sockets connected to the server port.
    private func connectionInodes() -> Set<String> {
        let ownSockets = Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { fd -> String? in
            var buffer = [CChar](repeating: 0, count: 256)
            let length = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
            guard length > 0 else { return nil }
            let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard target.hasPrefix("socket:[") else { return nil }
            return String(target.dropFirst(8).dropLast())
        })
        var inodes = Set<String>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // procfs files report a size of 0: read to the end rather than trusting the size.
            guard let data = FileHandle(forReadingAtPath: table)?.readDataToEndOfFile() else { continue }
            let text = String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, let remote = fields[2].split(separator: ":").last,
                      Int(remote, radix: 16) == serverPort else { continue }
                let inode = String(fields[9])
                if ownSockets.contains(inode) { inodes.insert(inode) }
            }
        }
        return inodes
    }
}
