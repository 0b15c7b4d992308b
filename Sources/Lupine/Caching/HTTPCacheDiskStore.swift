import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// The disk tier of the HTTP cache: one file per URL in a `Lupine` folder inside the configured
/// `URLCache`'s directory, bounded in bytes, the least recently used file removed first.
///
/// One instance serves a directory in the process (see `HTTPCacheStores`), so that two `URLCache`
/// objects on one directory share its index. Files are written whole under a temporary name,
/// then renamed, so a reader never sees half a file; a file that does not decode is removed.
///
/// The cache's clear calls must reach these files too, also from another process, so each file
/// depends on marker files that corelibs itself deletes: corelibs' `removeAllCachedResponses()`
/// deletes every file named `<time>.<identifier>.storedcachedurlresponse` in the directory (if it
/// has at least one byte), and `removeCachedResponse(for:)` deletes the one whose identifier is
/// the request's (base64 of host, port and path). Lupine writes one such file for the whole store
/// and one per URL group that has files, each one byte long, and uses a file only while its
/// markers exist. Their names are fixed (time 0), so every process finds the same markers; a
/// group's marker goes with the group's last file. An identifier that contains `/` cannot be a
/// file name (corelibs cannot store such URLs on disk either): files of those URLs depend on the
/// store marker alone.
///
/// Every file operation but a lookup's read runs on the store's own serial queue, off the
/// Sessions' queues, the event loops and the cooperative pool: a slow disk delays only what waits
/// for it. What is queued there is visible to lookups at once (`pending`), so a response stored
/// is found at once, and a response removed is gone at once. The lock guards the index only: no
/// file operation runs under it but the first listing of the folder.
final class HTTPCacheDiskStore: @unchecked Sendable {
    /// The configured cache's directory, where the markers go.
    let cacheDirectory: URL
    /// Lupine's folder inside it.
    let directory: URL

    private struct IndexEntry {
        var size: Int
        var lastUse: UInt64
        /// The URL group's tag (see `fileName(for:url:)`).
        var tag: String
    }

    /// A change queued for a key and not yet on disk: the variants lookups see meanwhile (none
    /// for a removal).
    private struct Pending {
        let generation: UInt64
        let variants: [StoredResponse]
    }

    private struct State {
        var isOpen = false
        var index: [String: IndexEntry] = [:]
        /// The key part (the key's SHA-256) of every name in `index`: a key without a file is a
        /// miss before its file is even named (naming costs a second hash and the URL's group).
        var keyHashes: Set<Substring> = []
        /// The key parts of the keys looked up lately: a miss on a URL asked for again costs no
        /// SHA-256 (it was about 1.5% of a small GET's CPU time with a non-empty disk cache).
        var recentKeyHashes: [String: Substring] = [:]
        var totalSize = 0
        var clock: UInt64 = 0
        /// Files per group tag, and the corelibs identifier behind each tag with a marker file.
        var filesPerTag: [String: Int] = [:]
        var identifierByTag: [String: String] = [:]
        /// Changes queued on `lane`, by key string.
        var pending: [String: Pending] = [:]
        var generation: UInt64 = 0
        /// One more per `removeAll()`: a write queued before it is not recorded after it.
        var epoch: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())
    private let fileManager = FileManager.default
    /// Where files are written, removed and listed, in the order the changes were asked for.
    private let lane = DispatchQueue(label: "lupine.httpCache.disk")

    static let markerExtension = "storedcachedurlresponse"
    private static let storeMarkerIdentifier = "LupineStore"
    private static let fileExtension = "lupinecache"
    private static let noGroupTag = "none"

    #if DEBUG
    /// Called on the lane before each write with the cache's directory, by tests that make the
    /// disk slow.
    static let writeHookForTests = NIOLockedValueBox<(@Sendable (URL) -> Void)?>(nil)
    #endif

    init(cacheDirectory: URL) {
        self.cacheDirectory = cacheDirectory
        directory = cacheDirectory.appendingPathComponent("Lupine", isDirectory: true)
    }

    /// Whether the folder has been read and holds no response file, nor any queued. False until a
    /// lookup or a store reads it: asking does not read the folder (nor clean it up) by itself.
    var isKnownEmpty: Bool {
        state.withLockedValue { $0.isOpen && $0.keyHashes.isEmpty && $0.pending.isEmpty }
    }

    // MARK: Lookup

    /// What the disk holds for a key.
    enum Lookup {
        case miss
        case found([StoredResponse])
        /// Only a read of the disk can tell, and the caller may not read it on its thread.
        case needsDiskIO
    }

    /// The responses stored on disk for `key` (the key of `url`), when there are any and nothing
    /// cleared them. With `allowingDiskIO` false (a caller on an event loop or in a task), a
    /// lookup that must read the folder or a file answers `.needsDiskIO` instead.
    func lookUp(_ key: HTTPCacheKey, url: URL, allowingDiskIO: Bool) -> Lookup {
        enum Step { case answer(Lookup), open, read }
        let step = state.withLockedValue { state -> Step in
            if let pending = state.pending[key.string] { return .answer(pending.variants.isEmpty ? .miss : .found(pending.variants)) }
            guard state.isOpen else { return allowingDiskIO ? .open : .answer(.needsDiskIO) }
            guard !state.keyHashes.isEmpty, state.keyHashes.contains(Self.keyHash(key, remembering: &state)) else { return .answer(.miss) }
            return allowingDiskIO ? .read : .answer(.needsDiskIO)
        }
        switch step {
        case let .answer(lookup):
            return lookup
        case .open:
            ThreadContract.diskIO("listing the HTTP cache's folder")
            let removals = state.withLockedValue { open(&$0) }
            remove(removals)
            return lookUp(key, url: url, allowingDiskIO: true)
        case .read:
            return read(key, url: url, forUpdate: false).map { .found($0.variants) } ?? .miss
        }
    }

    /// Reads the file of `key`, outside the lock. A lookup's read is dropped when a change of the
    /// key was queued meanwhile; the lane's read for that change (`forUpdate`) is not.
    private func read(_ key: HTTPCacheKey, url: URL, forUpdate: Bool) -> HTTPCacheFile? {
        ThreadContract.diskIO("reading the HTTP cache's file")
        let (name, tag, _) = Self.fileName(for: key, url: url)
        let epoch = state.withLockedValue { $0.epoch }
        guard let bytes = try? Data(contentsOf: directory.appendingPathComponent(name)) else {
            remove(state.withLockedValue { forget(name, in: &$0) })
            return nil
        }
        guard let file = HTTPCacheFile.decode(bytes, expectedKey: key.string) else {
            removeFile(name)
            return nil
        }
        guard storeMarkerExists() else {
            removeAll()
            return nil
        }
        if !file.marker.isEmpty, !fileManager.fileExists(atPath: cacheDirectory.appendingPathComponent(file.marker).path) {
            removeFile(name)
            return nil
        }
        let current = state.withLockedValue { state -> Bool in
            // Cleared, or changed, while the file was read: what was read is no longer the store's.
            guard state.epoch == epoch, forUpdate || state.pending[key.string] == nil else { return false }
            state.clock += 1
            record(name, IndexEntry(size: bytes.count, lastUse: state.clock, tag: tag), in: &state)
            return true
        }
        return current ? file : nil
    }

    // MARK: Changes

    /// The completion of a change queued on the lane, for a caller that waits for it.
    final class Write: @unchecked Sendable {
        private let lock = NIOLock()
        private var isDone = false
        private var waiter: (@Sendable () -> Void)?

        /// Runs `waiter` once the change is on disk: at once if it already is, else on the lane.
        func whenDone(_ waiter: @escaping @Sendable () -> Void) {
            let runNow = lock.withLock { () -> Bool in
                if isDone { return true }
                self.waiter = waiter
                return false
            }
            if runNow { waiter() }
        }

        fileprivate func complete() {
            let waiter = lock.withLock { () -> (@Sendable () -> Void)? in
                isDone = true
                defer { self.waiter = nil }
                return self.waiter
            }
            waiter?()
        }
    }

    /// Stores for `key` what `merge` makes of the variants already stored for it (a file per
    /// key), then removes the least recently used files until all fit in `capacity` bytes. The
    /// merge of what is queued is visible to lookups at once; the file is written on the lane.
    func update(_ key: HTTPCacheKey, url: URL, capacity: Int,
                merge: @escaping @Sendable ([StoredResponse]) -> [StoredResponse]) -> Write {
        let (generation, epoch) = state.withLockedValue { state -> (UInt64, UInt64) in
            state.generation += 1
            state.pending[key.string] = Pending(generation: state.generation, variants: merge(state.pending[key.string]?.variants ?? []))
            return (state.generation, state.epoch)
        }
        return onLane(key, generation: generation) {
            #if DEBUG
            Self.writeHookForTests.withLockedValue { $0 }?(self.cacheDirectory)
            #endif
            let hasFile = self.state.withLockedValue { state -> Bool in
                self.remove(self.open(&state))
                return state.keyHashes.contains(Self.keyHash(key, remembering: &state))
            }
            let current = hasFile ? self.read(key, url: url, forUpdate: true)?.variants ?? [] : []
            self.write(merge(current), for: key, url: url, capacity: capacity, epoch: epoch)
        }
    }

    /// Forgets what is stored for `key`: at once for lookups, on the lane for the file. Nil when
    /// there is nothing to remove (no file and nothing queued for the key).
    @discardableResult
    func remove(_ key: HTTPCacheKey, url: URL) -> Write? {
        let generation = state.withLockedValue { state -> UInt64? in
            // A key without a file costs no file name (two hashes and the URL's group) and no
            // unlink: every successful POST invalidates its URL, and that was ~4% of S5's CPU.
            let hasFile = !state.isOpen || state.keyHashes.contains(Self.keyHash(key, remembering: &state))
            guard hasFile || state.pending[key.string] != nil else { return nil }
            state.generation += 1
            state.pending[key.string] = Pending(generation: state.generation, variants: [])
            return state.generation
        }
        guard let generation else { return nil }
        return onLane(key, generation: generation) {
            let removals = self.state.withLockedValue { state -> [URL] in
                var removals = self.open(&state)
                guard state.keyHashes.contains(Self.keyHash(key, remembering: &state)) else { return removals }
                let name = Self.fileName(for: key, url: url).name
                removals += self.forget(name, in: &state) + [self.directory.appendingPathComponent(name)]
                return removals
            }
            self.remove(removals)
        }
    }

    /// Whether removing `key` would touch no file: the index is read and lists no file of it,
    /// and nothing is queued for it. False while the index is unread (reading it lists the folder).
    func surelyHoldsNoFile(for key: HTTPCacheKey) -> Bool {
        state.withLockedValue { state in
            guard state.isOpen, state.pending[key.string] == nil else { return false }
            return state.keyHashes.isEmpty || !state.keyHashes.contains(Self.keyHash(key, remembering: &state))
        }
    }

    /// Forgets every file: at once for lookups, on the lane for the files.
    func removeAll() {
        state.withLockedValue { state in
            state.epoch += 1
            state.pending.removeAll()
            state.index.removeAll()
            state.keyHashes.removeAll()
            state.filesPerTag.removeAll()
            state.totalSize = 0
        }
        lane.async {
            ThreadContract.diskIO("clearing the HTTP cache's folder")
            let markers = self.state.withLockedValue { state -> [String] in
                defer { state.identifierByTag.removeAll() }
                return Array(state.identifierByTag.values)
            }
            let files = (try? self.fileManager.contentsOfDirectory(at: self.directory, includingPropertiesForKeys: nil)) ?? []
            self.remove(files + markers.map { self.cacheDirectory.appendingPathComponent(Self.markerName($0)) })
        }
    }

    /// Runs `change` for `key` on the lane; the change queued as `generation` then leaves
    /// `pending` (unless a later one replaced it).
    private func onLane(_ key: HTTPCacheKey, generation: UInt64, _ change: @escaping @Sendable () -> Void) -> Write {
        let write = Write()
        lane.async {
            ThreadContract.diskIO("changing the HTTP cache's files")
            change()
            self.state.withLockedValue { state in
                if state.pending[key.string]?.generation == generation { state.pending[key.string] = nil }
            }
            write.complete()
        }
        return write
    }

    /// Writes the file of `key`, on the lane. Nothing is stored when the file alone would not fit.
    private func write(_ variants: [StoredResponse], for key: HTTPCacheKey, url: URL, capacity: Int, epoch: UInt64) {
        let (name, tag, identifier) = Self.fileName(for: key, url: url)
        var removals = state.withLockedValue { open(&$0) }
        defer { remove(removals) }
        guard !variants.isEmpty else {
            removals += state.withLockedValue { forget(name, in: &$0) } + [directory.appendingPathComponent(name)]
            return
        }
        if !storeMarkerExists() {
            removals += state.withLockedValue { state -> [URL] in
                defer {
                    state.index.removeAll()
                    state.keyHashes.removeAll()
                    state.filesPerTag.removeAll()
                    state.identifierByTag.removeAll()
                    state.totalSize = 0
                }
                return state.identifierByTag.values.map { cacheDirectory.appendingPathComponent(Self.markerName($0)) }
            }
            removals += (try? fileManager.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
            remove(removals)
            removals = []
            writeMarker(Self.storeMarkerIdentifier)
        }
        var marker = ""
        if let identifier {
            let markerName = Self.markerName(identifier)
            if fileManager.fileExists(atPath: cacheDirectory.appendingPathComponent(markerName).path) || writeMarker(identifier) {
                marker = markerName
                state.withLockedValue { $0.identifierByTag[tag] = identifier }
            }
        }
        let bytes = HTTPCacheFile(key: key.string, marker: marker, variants: variants).encoded()
        let fileURL = directory.appendingPathComponent(name)
        guard bytes.count <= capacity else {
            removals += state.withLockedValue { forget(name, in: &$0) } + [fileURL]
            return
        }
        do {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
            try bytes.write(to: fileURL, options: .atomic)
        } catch {
            removals += state.withLockedValue { forget(name, in: &$0) } + [fileURL]
            return
        }
        removals += state.withLockedValue { state -> [URL] in
            // Cleared while it was written: the file goes too.
            guard state.epoch == epoch else { return [fileURL] }
            state.clock += 1
            record(name, IndexEntry(size: bytes.count, lastUse: state.clock, tag: tag), in: &state)
            return evict(toFit: capacity, in: &state)
        }
    }

    // MARK: Index

    /// Reads the folder once: the files there count against the capacity, oldest first. Without a
    /// store marker, nothing vouches for them (the cache may have been cleared while no Lupine
    /// process ran): they are removed. Group markers without files are removed too. Returns the
    /// files to remove, for the caller to remove outside the lock.
    private func open(_ state: inout State) -> [URL] {
        guard !state.isOpen else { return [] }
        state.isOpen = true
        var removals: [URL] = []
        let files = (try? fileManager.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.fileSizeKey, .contentModificationDateKey])) ?? []
        if storeMarkerExists() {
            let found = files.compactMap { file -> (name: String, size: Int, date: Date)? in
                guard file.pathExtension == Self.fileExtension,
                      let values = try? file.resourceValues(forKeys: [.fileSizeKey, .contentModificationDateKey]) else { return nil }
                return (file.lastPathComponent, values.fileSize ?? 0, values.contentModificationDate ?? .distantPast)
            }
            for file in found.sorted(by: { $0.date < $1.date }) {
                let parts = file.name.split(separator: ".")
                guard parts.count == 3 else { continue }
                state.clock += 1
                record(file.name, IndexEntry(size: file.size, lastUse: state.clock, tag: String(parts[1])), in: &state)
            }
        } else {
            removals += files
        }
        let markers = (try? fileManager.contentsOfDirectory(atPath: cacheDirectory.path)) ?? []
        for name in markers where name.hasPrefix("0.") && name.hasSuffix("." + Self.markerExtension) {
            let identifier = String(name.dropFirst(2).dropLast(Self.markerExtension.count + 1))
            guard identifier != Self.storeMarkerIdentifier else { continue }
            let tag = Self.tag(of: identifier)
            if state.filesPerTag[tag] != nil {
                state.identifierByTag[tag] = identifier
            } else {
                removals.append(cacheDirectory.appendingPathComponent(name))
            }
        }
        return removals
    }

    private func record(_ name: String, _ entry: IndexEntry, in state: inout State) {
        state.keyHashes.insert(Self.keyPart(of: name))
        if let previous = state.index.updateValue(entry, forKey: name) {
            state.totalSize -= previous.size
        } else {
            state.filesPerTag[entry.tag, default: 0] += 1
        }
        state.totalSize += entry.size
    }

    /// Drops `name` from the index; the group's marker goes with its last file (returned, for
    /// the caller to remove outside the lock).
    private func forget(_ name: String, in state: inout State) -> [URL] {
        guard let entry = state.index.removeValue(forKey: name) else { return [] }
        state.keyHashes.remove(Self.keyPart(of: name))
        state.totalSize -= entry.size
        let left = (state.filesPerTag[entry.tag] ?? 1) - 1
        state.filesPerTag[entry.tag] = left > 0 ? left : nil
        if left <= 0, let identifier = state.identifierByTag.removeValue(forKey: entry.tag) {
            return [cacheDirectory.appendingPathComponent(Self.markerName(identifier))]
        }
        return []
    }

    /// Forgets `name` and removes its file on the lane.
    private func removeFile(_ name: String) {
        let removals = state.withLockedValue { forget(name, in: &$0) }
        let file = directory.appendingPathComponent(name)
        lane.async { self.remove(removals + [file]) }
    }

    /// The names to forget to fit in `capacity`, least recently used first; returns their files.
    private func evict(toFit capacity: Int, in state: inout State) -> [URL] {
        guard state.totalSize > capacity else { return [] }
        var removals: [URL] = []
        for (name, _) in state.index.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard state.totalSize > capacity else { break }
            removals += forget(name, in: &state) + [directory.appendingPathComponent(name)]
        }
        return removals
    }

    private func remove(_ files: [URL]) {
        guard !files.isEmpty else { return }
        ThreadContract.diskIO("removing the HTTP cache's files")
        for file in files { try? fileManager.removeItem(at: file) }
    }

    // MARK: Markers

    /// Whether the store marker is there: corelibs' `removeAllCachedResponses()` deletes it.
    private func storeMarkerExists() -> Bool {
        fileManager.fileExists(atPath: cacheDirectory.appendingPathComponent(Self.markerName(Self.storeMarkerIdentifier)).path)
    }

    private static func markerName(_ identifier: String) -> String {
        "0.\(identifier).\(markerExtension)"
    }

    /// Writes a one-byte marker file named as corelibs names its entries.
    @discardableResult
    private func writeMarker(_ identifier: String) -> Bool {
        do {
            try fileManager.createDirectory(at: cacheDirectory, withIntermediateDirectories: true)
            try Data([0x4C]).write(to: cacheDirectory.appendingPathComponent(Self.markerName(identifier)), options: .atomic)
            return true
        } catch {
            return false
        }
    }

    /// The identifier corelibs' `URLCache` gives a request for `url`: base64 of the lowercased
    /// host, the port (-1 when absent) and the path, each followed by a zero byte.
    static func corelibsIdentifier(of url: URL) -> String? {
        guard let host = url.host else { return nil }
        var data = Data(host.lowercased(with: Locale(identifier: "")).utf8)
        data.append(0)
        data.append(Data("\(url.port ?? -1)".utf8))
        data.append(0)
        data.append(Data(url.path.utf8))
        data.append(0)
        return data.base64EncodedString()
    }

    /// The file of `key`: the SHA-256 of the key, then the tag of its URL group (the SHA-256 of
    /// the group's corelibs identifier, shortened), which lets the folder's listing tell which
    /// group markers are still needed. The identifier is nil when it cannot name a marker file.
    private static func fileName(for key: HTTPCacheKey, url: URL) -> (name: String, tag: String, identifier: String?) {
        let identifier = corelibsIdentifier(of: url).flatMap { $0.contains("/") ? nil : $0 }
        let tag = identifier.map(Self.tag(of:)) ?? noGroupTag
        return (keyHash(key) + "." + tag + "." + fileExtension, tag, identifier)
    }

    /// The first part of the file name of `key`.
    private static func keyHash(_ key: HTTPCacheKey) -> String {
        hex(SHA256.hash(data: Data(key.string.utf8)))
    }

    /// `keyHash(key)`, remembered for the next lookup of the same key (up to 256 keys, then the
    /// memory starts again).
    private static func keyHash(_ key: HTTPCacheKey, remembering state: inout State) -> Substring {
        if let known = state.recentKeyHashes[key.string] { return known }
        let hash = Substring(keyHash(key))
        if state.recentKeyHashes.count >= 256 { state.recentKeyHashes.removeAll(keepingCapacity: true) }
        state.recentKeyHashes[key.string] = hash
        return hash
    }

    /// The key part of a file name (before its first dot).
    private static func keyPart(of name: String) -> Substring {
        name[..<(name.firstIndex(of: ".") ?? name.endIndex)]
    }

    private static func tag(of identifier: String) -> String {
        String(hex(SHA256.hash(data: Data(identifier.utf8))).prefix(16))
    }

    private static func hex(_ digest: SHA256.Digest) -> String {
        HexEncoding.lowercase(digest)
    }
}
