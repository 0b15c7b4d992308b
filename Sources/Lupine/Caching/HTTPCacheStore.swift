import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// Lupine's store of HTTP responses for one configured `URLCache`: a memory tier bounded by the
/// cache's `memoryCapacity` and a disk tier bounded by its `diskCapacity` (in a `Lupine` folder of
/// the cache's directory), both least-recently-used first out.
///
/// Responses are filed under the whole URL without its fragment (`HTTPCacheKey`), never under
/// corelibs' key, which ignores the query. A URL keeps up to `maximumVariants` responses side by
/// side, selected by the request header fields their `Vary` names (RFC 9111, section 4.1).
///
/// The cache's own `removeAllCachedResponses()` and `removeCachedResponse(for:)` reach the store
/// through markers (`URLCacheMarker` in memory, marker files on disk): an entry is used only
/// while the cache still holds its marker. A memory marker shows the response last stored for its
/// URL group, so user code reading the cache with `cachedResponse(for:)` gets that response with
/// its body (corelibs' matching ignores the query: see `URLCacheMarker`). A response user code
/// stores in the cache itself is not seen by the store; it replaces the group's marker, so the
/// store's entries for that group are dropped at their next lookup.
final class HTTPCacheStore: @unchecked Sendable {
    /// Responses kept for one URL, for different values of the header fields `Vary` names.
    static let maximumVariants = 4

    private weak var cache: URLCache?
    private let disk: HTTPCacheDiskStore?

    private struct State {
        var memory = HTTPCacheMemory()
        var markers = URLCacheMarkers()
    }

    private let state: NIOLockedValueBox<State>

    init(cache: URLCache, disk: HTTPCacheDiskStore?) {
        self.cache = cache
        self.disk = disk
        state = NIOLockedValueBox(State())
    }

    // MARK: Lookup

    /// Whether nothing is stored, in memory or on disk, as far as is known without reading the
    /// disk: every lookup would miss.
    var isEmpty: Bool {
        state.withLockedValue { $0.memory.count == 0 } && (disk?.isKnownEmpty ?? true)
    }

    /// What a lookup found: the stored response a request selects (nil for none), or that only
    /// a read of the disk can tell.
    enum Lookup {
        case found(StoredResponse?)
        case needsDiskIO
    }

    /// The stored response for `url` that a request with `requestHeaders` selects, if any. With
    /// `allowingDiskIO` false (a caller on an event loop or in a task, where no file is read), a
    /// lookup the memory tier cannot answer and the disk may answers `.needsDiskIO`.
    func lookUp(_ url: URL, key: HTTPCacheKey, requestHeaders: [String: String], allowingDiskIO: Bool) -> Lookup {
        guard let cache else { return .found(nil) }
        if cache.memoryCapacity > 0,
           let (variants, marker) = state.withLockedValue({ $0.memory.node(for: key).map { ($0.variants, $0.marker) } }) {
            // Checked outside the lock: it asks the URLCache.
            if marker.isHeld(by: cache) {
                return .found(Self.select(variants, requestHeaders: requestHeaders))
            }
            dropCleared(key, url: url, cache: cache)
            return .found(nil)
        }
        guard let disk, cache.diskCapacity > 0 else { return .found(nil) }
        switch disk.lookUp(key, url: url, allowingDiskIO: allowingDiskIO) {
        case .miss:
            return .found(nil)
        case .needsDiskIO:
            return .needsDiskIO
        case let .found(variants):
            promote(variants, url: url, key: key, cache: cache)
            return .found(Self.select(variants, requestHeaders: requestHeaders))
        }
    }

    /// The stored response for `url` that a request with `requestHeaders` selects, if any; reads
    /// the disk when it must.
    func lookUp(_ url: URL, key: HTTPCacheKey, requestHeaders: [String: String]) -> StoredResponse? {
        guard case let .found(stored) = lookUp(url, key: key, requestHeaders: requestHeaders, allowingDiskIO: true) else { return nil }
        return stored
    }

    /// The variant a request with `requestHeaders` selects.
    private static func select(_ variants: [StoredResponse], requestHeaders: [String: String]) -> StoredResponse? {
        variants.first { HTTPCacheRules.varyMatches($0.entry, requestHeaders: requestHeaders) }
    }

    /// The cache lost the marker of `key`'s entry: a clear call removed it. Without the store's
    /// own marker too, the whole cache was cleared; otherwise one URL group was.
    private func dropCleared(_ key: HTTPCacheKey, url: URL, cache: URLCache) {
        let wholeCache = state.withLockedValue { state -> Bool in
            state.memory.remove(key)
            guard state.markers.cacheWasCleared(cache) else { return false }
            state.memory.removeAll()
            return true
        }
        if wholeCache { disk?.removeAll() } else { disk?.remove(key, url: url) }
    }

    /// Keeps what was read from disk in memory too, so that the next hit does not read the file.
    private func promote(_ variants: [StoredResponse], url: URL, key: HTTPCacheKey, cache: URLCache) {
        let capacity = cache.memoryCapacity
        let kept = variants.filter { $0.cost <= capacity / 20 }
        guard capacity > 0, !kept.isEmpty else { return }
        let cleared = state.withLockedValue { state -> Bool in
            guard state.memory.peek(key) == nil else { return false }
            let (marker, cleared) = state.markers.marker(for: url, showing: kept[0], in: cache)
            if cleared { state.memory.removeAll() }
            if let marker { state.memory.set(kept, for: key, marker: marker, capacity: capacity) }
            return cleared
        }
        // What was just read from disk predates the clear too.
        if cleared { disk?.removeAll() }
    }

    // MARK: Storing

    /// The largest body a response may have and still be stored by a tier (5% of its capacity, as
    /// `store(_:for:key:requestHeaders:)` applies); 0 when the cache is gone.
    var largestStorableBodySize: Int {
        guard let cache else { return 0 }
        return max(cache.memoryCapacity, cache.diskCapacity) / 20
    }

    /// Stores `response`, received for a request with `requestHeaders`: it replaces the variant
    /// that request selected, and the least recently stored variant goes when there are too many.
    ///
    /// Like URLSession, a tier does not take a response larger than 5% of its capacity. The memory
    /// tier takes it at once; the disk tier's file is written on its own queue, and the returned
    /// write, when there is one, tells when it is on disk (lookups find it at once meanwhile).
    @discardableResult
    func store(_ response: StoredResponse, for url: URL, key: HTTPCacheKey, requestHeaders: [String: String]) -> HTTPCacheDiskStore.Write? {
        guard let cache else { return nil }
        let memoryCapacity = cache.memoryCapacity
        var cacheWasCleared = false
        if memoryCapacity > 0, response.cost <= memoryCapacity / 20 {
            let response = response.withBodyInOwnStorage()
            cacheWasCleared = state.withLockedValue { state -> Bool in
                let (marker, cleared) = state.markers.marker(for: url, showing: response, in: cache)
                if cleared { state.memory.removeAll() }
                guard let marker else { return cleared }
                let current = state.memory.peek(key).map { $0.marker === marker ? $0.variants : [] } ?? []
                let variants = Self.merging(response, into: current, requestHeaders: requestHeaders)
                state.memory.set(variants, for: key, marker: marker, capacity: memoryCapacity)
                return cleared
            }
        } else {
            state.withLockedValue { $0.memory.remove(key) }
        }
        let diskCapacity = cache.diskCapacity
        guard let disk, diskCapacity > 0 else { return nil }
        if cacheWasCleared { disk.removeAll() }
        guard response.storagePolicy == .allowed, response.cost <= diskCapacity / 20 else {
            // The disk keeps nothing older than what memory now holds for this request.
            return disk.remove(key, url: url)
        }
        return disk.update(key, url: url, capacity: diskCapacity) { current in
            Self.merging(response, into: current, requestHeaders: requestHeaders).filter { $0.storagePolicy == .allowed }
        }
    }

    /// `variants` with `response` first, without the variants the same request selected (the new
    /// response replaces them), and no more than `maximumVariants`.
    private static func merging(_ response: StoredResponse, into variants: [StoredResponse],
                                requestHeaders: [String: String]) -> [StoredResponse] {
        let others = variants.filter { !HTTPCacheRules.varyMatches($0.entry, requestHeaders: requestHeaders) }
        return Array(([response] + others).prefix(maximumVariants))
    }

    /// Forgets every response stored for `key`, the key of `url`.
    ///
    /// When the `URLCache` shows that response to its readers (see `URLCacheMarker`), it shows
    /// another response of the same group that memory still holds instead, or, with none, the
    /// group's marker is removed from the cache (the group's other entries, on disk, go with it).
    func remove(_ key: HTTPCacheKey, url: URL) {
        let unshown = state.withLockedValue { state -> URLCacheMarker? in
            state.memory.remove(key)
            guard let marker = state.markers.marker(showing: url) else { return nil }
            if let sibling = state.memory.anyNode(dependingOn: marker), let siblingURL = URL(string: sibling.key.string),
               let newest = sibling.variants.first {
                marker.show(newest, of: siblingURL)
                return nil
            }
            state.markers.forget(marker, of: url)
            return marker
        }
        if let unshown, let cache, unshown.isHeld(by: cache) {
            cache.removeCachedResponse(for: unshown.request)
        }
        disk?.remove(key, url: url)
    }

    /// Removes `key`'s response when no file holds it (it is then in memory at most) and the
    /// `URLCache` does not show it to its readers; false, with nothing removed, when a file may
    /// hold it or the cache shows it: `remove(_:url:)` removes both tiers together.
    func removeWithoutTouchingFiles(_ key: HTTPCacheKey, url: URL) -> Bool {
        if let disk, !disk.surelyHoldsNoFile(for: key) { return false }
        return state.withLockedValue { state -> Bool in
            guard state.markers.marker(showing: url) == nil else { return false }
            state.memory.remove(key)
            return true
        }
    }

    // MARK: For tests

    /// The keys in memory and the bytes they take.
    var memoryUsage: (count: Int, bytes: Int) {
        state.withLockedValue { ($0.memory.count, $0.memory.totalCost) }
    }
}

/// Finds the store of a `URLCache`: one per cache object, made at its first use, kept while the
/// cache lives. Stores on one directory share its disk tier.
enum HTTPCacheStores {
    private struct Registered {
        weak var cache: URLCache?
        let store: HTTPCacheStore
    }

    private struct Registry {
        var stores: [ObjectIdentifier: Registered] = [:]
        var disks: [String: WeakDisk] = [:]
    }

    private struct WeakDisk {
        weak var disk: HTTPCacheDiskStore?
    }

    private static let registry = NIOLockedValueBox(Registry())

    static func store(for cache: URLCache) -> HTTPCacheStore {
        let id = ObjectIdentifier(cache)
        return registry.withLockedValue { registry in
            if let registered = registry.stores[id], registered.cache === cache { return registered.store }
            // An identifier is reused once its object is gone: drop what died before adding.
            registry.stores = registry.stores.filter { $0.value.cache != nil }
            registry.disks = registry.disks.filter { $0.value.disk != nil }
            let disk = directory(of: cache).map { directory -> HTTPCacheDiskStore in
                let path = directory.standardizedFileURL.path
                if let shared = registry.disks[path]?.disk { return shared }
                let made = HTTPCacheDiskStore(cacheDirectory: directory)
                registry.disks[path] = WeakDisk(disk: made)
                return made
            }
            let store = HTTPCacheStore(cache: cache, disk: disk)
            registry.stores[id] = Registered(cache: cache, store: store)
            return store
        }
    }

    /// The directory a `URLCache` keeps its files in. corelibs does not publish it: it is read
    /// from the object's stored property `cacheDirectory` (nil when the cache has none, or when a
    /// future corelibs names it otherwise; the store then keeps no files).
    static func directory(of cache: URLCache) -> URL? {
        var mirror: Mirror? = Mirror(reflecting: cache)
        while let current = mirror {
            for child in current.children where child.label == "cacheDirectory" {
                return child.value as? URL
            }
            mirror = current.superclassMirror
        }
        return nil
    }
}
