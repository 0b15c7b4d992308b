import Foundation

/// Counts the process's open file descriptors (entries of /proc/self/fd).
enum OpenFileDescriptors {
    /// The number of open descriptors, nil where /proc is not available.
    static func count() -> Int? {
        // The directory listing itself holds one descriptor while it runs: not counted.
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return max(0, entries.count - 1)
    }
}
