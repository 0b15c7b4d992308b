import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response Lupine puts into the memory of the configured `URLCache` for each group of URLs it
/// stores responses for, so that the cache's own clear calls reach Lupine's store and user code
/// reading the cache finds what Lupine stored.
///
/// Lupine's store cannot be told when someone calls `removeAllCachedResponses()`,
/// `removeCachedResponse(for:)` or `removeCachedResponses(since:)` on a plain `URLCache`: those
/// are methods of corelibs' class. What it can see is their effect on the cache's memory. Each
/// stored entry therefore depends on a marker, a response stored in the `URLCache` under the
/// entry's URL (so corelibs files it under host, port and path, as it would the response); before
/// an entry is used, Lupine checks that the cache still holds that very marker. A clear call
/// removes the marker, and the entries that depend on it are dropped at their next lookup.
///
/// The marker shows the response Lupine last stored in memory for its group, body and header
/// fields (`ShownCachedURLResponse`), so `cachedResponse(for:)` gives user code that response.
/// corelibs matches by host, port and path, ignoring the query: for `/users?id=2` it gives the
/// response Lupine last stored for any URL of `/users`, which may be the one of `/users?id=1`
/// (Lupine's own look-ups never rely on that matching).
///
/// The check is one lookup in the cache's memory, which corelibs answers without its disk. corelibs
/// counts a marker as its body plus 500 bytes (its `userInfo` entry) against the cache's
/// `memoryCapacity`, so the markers of a busy process are bounded like any stored response: past
/// the capacity, corelibs evicts the oldest, and the entries that depended on them are dropped at
/// their next lookup. A cache without memory (`memoryCapacity == 0`) cannot hold markers; Lupine
/// then keeps no entries in memory either.
final class URLCacheMarker: @unchecked Sendable {
    // Immutable once made; the planted response is only compared by identity.
    let request: URLRequest
    private let planted: ShownCachedURLResponse

    /// A marker for the group of `url`, showing `stored` (received for `url`), or nothing (the
    /// store's own marker, under a URL no request names).
    init?(url: URL, showing stored: StoredResponse? = nil) {
        guard url.host != nil else { return nil }
        request = URLRequest(url: url)
        planted = ShownCachedURLResponse(url: url, userInfo: [Self.userInfoKey: true])
        if let stored { planted.show(stored, of: url) }
    }

    static let userInfoKey = "lupine.cache.marker"

    /// What corelibs counts a marker as against the cache's memory capacity, besides its body.
    static let cost = 500

    /// What corelibs counted this marker as when it was planted.
    var plantedCost: Int { planted.data.count + Self.cost }

    /// Whether `cache` still holds this marker: false after a clear call removed it, after corelibs
    /// evicted it, or after other code stored a response of its own under the same host, port
    /// and path.
    func isHeld(by cache: URLCache) -> Bool {
        cache.cachedResponse(for: request) === planted
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
        cache.storeCachedResponse(planted, for: request)
    }

    /// Shows `stored`, just stored for `url` (a URL of this marker's group), to readers of the cache.
    ///
    /// corelibs keeps counting the marker as it was when planted: a larger body shown later is
    /// not counted against its capacity. Lupine's memory tier holds the same bytes (the body is
    /// shared, not copied) and counts them against the same capacity.
    func show(_ stored: StoredResponse, of url: URL) {
        planted.show(stored, of: url)
    }

    /// Whether the marker shows the response of `url`.
    func isShowing(_ url: URL) -> Bool {
        planted.isShowing(url)
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
///
/// corelibs evicts markers oldest first, once they fill its memory capacity. The store's own
/// marker is therefore replaced by a new one whenever group markers counting half that capacity
/// were planted after it, so that it is never the oldest; and the markers remembered here are
/// capped at the number the cache can hold, oldest forgotten first.
struct URLCacheMarkers {
    private var byGroup: [String: URLCacheMarker] = [:]
    /// Groups in the order their markers were planted.
    private var plantOrder: [String] = []
    private var storeMarker: URLCacheMarker?
    /// What corelibs counted the group markers planted after the store's own marker as.
    private var costSinceStoreMarker = 0

    /// The marker entries for `url` depend on, showing `stored` (just stored for `url`) to readers
    /// of the cache; planted in `cache` when it has none (or lost it).
    ///
    /// `cacheWasCleared` is true when the cache had also lost the store's own marker: it was
    /// cleared as a whole since the last check, and every entry stored before must go.
    mutating func marker(for url: URL, showing stored: StoredResponse,
                         in cache: URLCache) -> (marker: URLCacheMarker?, cacheWasCleared: Bool) {
        guard let group = URLCacheMarker.group(of: url) else { return (nil, false) }
        if let existing = byGroup[group], existing.isHeld(by: cache) {
            existing.show(stored, of: url)
            return (existing, false)
        }
        let cleared = storeMarker != nil && cacheWasCleared(cache)
        let capacity = max(16, cache.memoryCapacity / URLCacheMarker.cost)
        if storeMarker == nil || costSinceStoreMarker >= cache.memoryCapacity / 2 {
            storeMarker = Self.plantStoreMarker(in: cache)
            costSinceStoreMarker = 0
        }
        guard let marker = URLCacheMarker(url: url, showing: stored) else { return (nil, cleared) }
        marker.plant(in: cache)
        costSinceStoreMarker += marker.plantedCost
        if byGroup.updateValue(marker, forKey: group) == nil {
            plantOrder.append(group)
        }
        if plantOrder.count > capacity {
            let forgotten = plantOrder.prefix(plantOrder.count - capacity)
            forgotten.forEach { byGroup[$0] = nil }
            plantOrder.removeFirst(forgotten.count)
        }
        return (marker, cleared)
    }

    /// The marker of `url`'s group when it shows the response of `url`.
    func marker(showing url: URL) -> URLCacheMarker? {
        guard let group = URLCacheMarker.group(of: url), let marker = byGroup[group], marker.isShowing(url) else { return nil }
        return marker
    }

    /// Forgets the marker of `url`'s group, which the cache no longer holds.
    mutating func forget(_ marker: URLCacheMarker, of url: URL) {
        guard let group = URLCacheMarker.group(of: url), byGroup[group] === marker else { return }
        byGroup[group] = nil
        plantOrder.removeAll { $0 == group }
    }

    /// Whether `cache` lost the store's own marker, which only a clear of the whole cache does.
    mutating func cacheWasCleared(_ cache: URLCache) -> Bool {
        guard let storeMarker, storeMarker.isHeld(by: cache) else {
            storeMarker = nil
            return true
        }
        return false
    }

    /// A marker under a URL of its own: no clear call but clearing the whole cache removes it.
    private static func plantStoreMarker(in cache: URLCache) -> URLCacheMarker? {
        guard let url = URL(string: "http://lupine-store.invalid/\(UUID().uuidString)"),
              let marker = URLCacheMarker(url: url) else { return nil }
        marker.plant(in: cache)
        return marker
    }
}
