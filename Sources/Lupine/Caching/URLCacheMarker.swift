import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An empty response Lupine puts into the memory of the configured `URLCache`, so that the
/// cache's own clear calls reach Lupine's store.
///
/// Lupine's store cannot be told when someone calls `removeAllCachedResponses()`,
/// `removeCachedResponse(for:)` or `removeCachedResponses(since:)` on a plain `URLCache`: those
/// are methods of corelibs' class. What it can see is their effect on the cache's memory. Each
/// stored entry therefore depends on a marker, an empty response stored in the `URLCache` under
/// the entry's URL (so corelibs files it under host, port and path, as it would the response);
/// before an entry is used, Lupine checks that the cache still holds that very marker. A clear
/// call removes the marker, and the entries that depend on it are dropped at their next lookup.
///
/// The check is one lookup in the cache's memory, which corelibs answers without its disk. A marker
/// costs the cache nothing against its memory capacity (corelibs counts an empty body with no
/// `userInfo` as zero bytes), so markers never evict anything; a cache without memory
/// (`memoryCapacity == 0`) cannot hold markers, and Lupine then keeps no entries in memory either.
final class URLCacheMarker: @unchecked Sendable {
    // Both are immutable once made; CachedURLResponse is only compared by identity.
    let request: URLRequest
    private let response: CachedURLResponse

    init?(url: URL) {
        guard url.host != nil else { return nil }
        request = URLRequest(url: url)
        response = CachedURLResponse(response: URLResponse(url: url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil),
                                     data: Data(), userInfo: nil, storagePolicy: .allowedInMemoryOnly)
    }

    /// Whether `cache` still holds this marker: false after a clear call removed it, or after
    /// other code stored a response of its own under the same host, port and path.
    func isHeld(by cache: URLCache) -> Bool {
        cache.cachedResponse(for: request) === response
    }

    /// Stores the marker in `cache`.
    ///
    /// corelibs appends a key to its eviction order on every store, even for a key it holds, and
    /// a later eviction then traps on the duplicate; a response already held under the same key
    /// (another program's) is therefore removed first.
    func plant(in cache: URLCache) {
        if cache.cachedResponse(for: request) != nil {
            cache.removeCachedResponse(for: request)
        }
        cache.storeCachedResponse(response, for: request)
    }

    /// How corelibs groups URLs in its cache (host, port and path): one marker serves every URL
    /// of a group, since a clear call for one of them removes the group's marker.
    static func group(of url: URL) -> String? {
        guard let host = url.host else { return nil }
        return "\(host.lowercased())\u{0}\(url.port ?? -1)\u{0}\(url.path)"
    }
}

/// The markers of one store in its `URLCache`: one per URL group, plus one for the whole store,
/// which tells `removeAllCachedResponses()` apart from the removal of one URL. Not synchronized:
/// its store's lock guards it.
struct URLCacheMarkers {
    private var byGroup: [String: URLCacheMarker] = [:]
    private var storeMarker: URLCacheMarker?
    private let storeURL: URL?

    init() {
        storeURL = URL(string: "http://lupine-store.invalid/\(UUID().uuidString)")
    }

    /// The marker entries for `url` depend on, planted in `cache` when it has none (or lost it).
    ///
    /// `cacheWasCleared` is true when the cache had also lost the store's own marker: it was
    /// cleared as a whole since the last check, and every entry stored before must go.
    mutating func marker(for url: URL, in cache: URLCache) -> (marker: URLCacheMarker?, cacheWasCleared: Bool) {
        guard let group = URLCacheMarker.group(of: url) else { return (nil, false) }
        if let existing = byGroup[group], existing.isHeld(by: cache) { return (existing, false) }
        let cleared = storeMarker != nil && cacheWasCleared(cache)
        if storeMarker == nil, let storeURL, let marker = URLCacheMarker(url: storeURL) {
            marker.plant(in: cache)
            storeMarker = marker
        }
        guard let marker = URLCacheMarker(url: url) else { return (nil, cleared) }
        marker.plant(in: cache)
        byGroup[group] = marker
        return (marker, cleared)
    }

    /// Whether `cache` lost the store's own marker, which only a clear of the whole cache (or an
    /// eviction by other code storing into it) does. All markers are then forgotten.
    mutating func cacheWasCleared(_ cache: URLCache) -> Bool {
        guard let storeMarker, storeMarker.isHeld(by: cache) else {
            byGroup.removeAll()
            storeMarker = nil
            return true
        }
        return false
    }

    mutating func removeAll() {
        byGroup.removeAll()
        storeMarker = nil
    }
}
