import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// The URLs a `URLCache` was recently found not to hold, so that the next lookup skips it.
///
/// swift-corelibs-foundation's `URLCache` answers a miss by listing its disk directory, once per
/// lookup: with the default cache on, that listing was the largest single cost of a small request.
/// A miss is remembered per cache instance until Lupine stores a response for that URL (or the
/// memo fills up and starts over). A response stored into the cache by other code while a miss is
/// remembered is found only after that: the request goes to the network, which a cache is always
/// free to do. Only lookups under the default policy use the memo; the policies that must answer
/// from the cache (`returnCacheDataElseLoad`, `returnCacheDataDontLoad`) always ask the cache.
final class URLCacheMissMemo: Sendable {
    /// Remembered misses per cache; a cache's set is emptied when it reaches this size.
    private static let capacity = 4096

    private struct Entry {
        weak var cache: URLCache?
        var misses: Set<String> = []
    }

    private let entries = NIOLockedValueBox<[ObjectIdentifier: Entry]>([:])

    /// The memo every Session shares: caches are often shared (`URLCache.shared`).
    static let shared = URLCacheMissMemo()

    func isKnownMiss(_ url: URL, in cache: URLCache) -> Bool {
        entries.withLockedValue { entries in
            guard let entry = entries[ObjectIdentifier(cache)], entry.cache === cache else { return false }
            return entry.misses.contains(url.absoluteString)
        }
    }

    func recordMiss(_ url: URL, in cache: URLCache) {
        entries.withLockedValue { entries in
            let key = ObjectIdentifier(cache)
            var entry = entries[key].flatMap { $0.cache === cache ? $0 : nil } ?? Entry(cache: cache)
            if entry.misses.count >= Self.capacity { entry.misses.removeAll() }
            entry.misses.insert(url.absoluteString)
            entries[key] = entry
        }
    }

    /// Forgets the miss of `url`: a response for it was just stored.
    func forget(_ url: URL, in cache: URLCache) {
        entries.withLockedValue { entries in
            _ = entries[ObjectIdentifier(cache)]?.misses.remove(url.absoluteString)
        }
    }
}
