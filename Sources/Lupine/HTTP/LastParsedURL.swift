import Foundation
import Synchronization

/// The string `String.asURL()` parsed last, and its URL.
///
/// A client mostly sends its requests to the same few URLs, one string at a time, and parsing one
/// (`URL(string:)`) costs two allocations and a walk over RFC 3986 on every request. `URL(string:)`
/// depends on the string alone, so the URL of an equal string is the same value: the one kept
/// here is handed out again after one comparison under a lock.
enum LastParsedURL {
    private struct Entry: Sendable {
        let string: String
        let url: URL
    }

    private static let last = Mutex<Entry?>(nil)

    /// The URL of `string` when it is the string parsed last.
    static func url(for string: String) -> URL? {
        last.withLock { entry in
            guard let entry, sameBytes(entry.string, string) else { return nil }
            return entry.url
        }
    }

    /// Byte for byte, not `==`: canonically equivalent strings (a precomposed "é" and an "e" with
    /// a combining accent) are equal Strings but parse to different URLs.
    private static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// Keeps `url`, just parsed from `string`, in place of the last one.
    static func remember(_ url: URL, parsedFrom string: String) {
        // The entry replaced is released after the lock, not under it.
        let replaced = last.withLock { entry in
            defer { entry = Entry(string: string, url: url) }
            return entry
        }
        _ = replaced
    }
}
