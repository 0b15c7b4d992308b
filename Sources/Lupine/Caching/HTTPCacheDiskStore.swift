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
    }

    // File operations run under the lock too: the disk tier is used when memory misses and when
    // a response is stored, never on a memory hit.
    private let state = NIOLockedValueBox(State())
    private let fileManager = FileManager.default

    static let markerExtension = "storedcachedurlresponse"
    private static let storeMarkerIdentifier = "LupineStore"
    private static let fileExtension = "lupinecache"
    private static let noGroupTag = "none"

    init(cacheDirectory: URL) {
        self.cacheDirectory = cacheDirectory
        directory = cacheDirectory.appendingPathComponent("Lupine", isDirectory: true)
    }

    /// Whether the folder has been read and holds no response file. False until a lookup or a
    /// store reads it: asking does not read the folder (nor clean it up) by itself.
    var isKnownEmpty: Bool {
        state.withLockedValue { $0.isOpen && $0.keyHashes.isEmpty }
    }

    /// The responses stored on disk for `key` (the key of `url`), when there are any and nothing
    /// cleared them.
    func read(_ key: HTTPCacheKey, url: URL) -> HTTPCacheFile? {
        state.withLockedValue { state in
            open(&state)
            guard !state.keyHashes.isEmpty, state.keyHashes.contains(Self.keyHash(key, remembering: &state)) else { return nil }
            let (name, tag, _) = Self.fileName(for: key, url: url)
            guard let bytes = try? Data(contentsOf: directory.appendingPathComponent(name)) else {
                forget(name, in: &state)
                return nil
            }
            guard let file = HTTPCacheFile.decode(bytes, expectedKey: key.string) else {
                remove(name, in: &state)
                return nil
            }
            guard storeMarkerExists() else {
                removeAllFiles(&state)
                return nil
            }
            if !file.marker.isEmpty, !fileManager.fileExists(atPath: cacheDirectory.appendingPathComponent(file.marker).path) {
                remove(name, in: &state)
                return nil
            }
            state.clock += 1
            record(name, IndexEntry(size: bytes.count, lastUse: state.clock, tag: tag), in: &state)
            return file
        }
    }

    /// Stores `variants` for `key` (a file per key), then removes the least recently used files
    /// until all fit in `capacity` bytes. Nothing is stored when the file alone would not fit.
    func write(_ variants: [StoredResponse], for key: HTTPCacheKey, url: URL, capacity: Int) {
        state.withLockedValue { state in
            open(&state)
            let (name, tag, identifier) = Self.fileName(for: key, url: url)
            guard !variants.isEmpty else {
                remove(name, in: &state)
                return
            }
            if !storeMarkerExists() {
                removeAllFiles(&state)
                writeMarker(Self.storeMarkerIdentifier)
            }
            var marker = ""
            if let identifier {
                let markerName = Self.markerName(identifier)
                if fileManager.fileExists(atPath: cacheDirectory.appendingPathComponent(markerName).path) || writeMarker(identifier) {
                    marker = markerName
                    state.identifierByTag[tag] = identifier
                }
            }
            let bytes = HTTPCacheFile(key: key.string, marker: marker, variants: variants).encoded()
            guard bytes.count <= capacity else {
                remove(name, in: &state)
                return
            }
            do {
                try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
                try bytes.write(to: directory.appendingPathComponent(name), options: .atomic)
            } catch {
                remove(name, in: &state)
                return
            }
            state.clock += 1
            record(name, IndexEntry(size: bytes.count, lastUse: state.clock, tag: tag), in: &state)
            evict(toFit: capacity, in: &state)
        }
    }

    func remove(_ key: HTTPCacheKey, url: URL) {
        state.withLockedValue { state in
            // A key without a file costs no file name (two hashes and the URL's group) and no
            // unlink: every successful POST invalidates its URL, and that was ~4% of S5's CPU.
            open(&state)
            guard state.keyHashes.contains(Self.keyHash(key, remembering: &state)) else { return }
            remove(Self.fileName(for: key, url: url).name, in: &state)
        }
    }

    /// Whether removing `key` would touch no file: the index is read and lists no file of it.
    /// False while the index is unread (reading it lists the folder).
    func surelyHoldsNoFile(for key: HTTPCacheKey) -> Bool {
        state.withLockedValue { state in
            guard state.isOpen else { return false }
            return state.keyHashes.isEmpty || !state.keyHashes.contains(Self.keyHash(key, remembering: &state))
        }
    }

    func removeAll() {
        state.withLockedValue { state in
            removeAllFiles(&state)
        }
    }

    // MARK: Index

    /// Reads the folder once: the files there count against the capacity, oldest first. Without a
    /// store marker, nothing vouches for them (the cache may have been cleared while no Lupine
    /// process ran): they are removed. Group markers without files are removed too.
    private func open(_ state: inout State) {
        guard !state.isOpen else { return }
        state.isOpen = true
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
            for file in files { try? fileManager.removeItem(at: file) }
        }
        let markers = (try? fileManager.contentsOfDirectory(atPath: cacheDirectory.path)) ?? []
        for name in markers where name.hasPrefix("0.") && name.hasSuffix("." + Self.markerExtension) {
            let identifier = String(name.dropFirst(2).dropLast(Self.markerExtension.count + 1))
            guard identifier != Self.storeMarkerIdentifier else { continue }
            let tag = Self.tag(of: identifier)
            if state.filesPerTag[tag] != nil {
                state.identifierByTag[tag] = identifier
            } else {
                try? fileManager.removeItem(at: cacheDirectory.appendingPathComponent(name))
            }
        }
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

    /// Drops `name` from the index; the group's marker goes with its last file.
    private func forget(_ name: String, in state: inout State) {
        guard let entry = state.index.removeValue(forKey: name) else { return }
        state.keyHashes.remove(Self.keyPart(of: name))
        state.totalSize -= entry.size
        let left = (state.filesPerTag[entry.tag] ?? 1) - 1
        state.filesPerTag[entry.tag] = left > 0 ? left : nil
        if left <= 0, let identifier = state.identifierByTag.removeValue(forKey: entry.tag) {
            try? fileManager.removeItem(at: cacheDirectory.appendingPathComponent(Self.markerName(identifier)))
        }
    }

    private func remove(_ name: String, in state: inout State) {
        forget(name, in: &state)
        try? fileManager.removeItem(at: directory.appendingPathComponent(name))
    }

    private func removeAllFiles(_ state: inout State) {
        let files = (try? fileManager.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        for file in files { try? fileManager.removeItem(at: file) }
        for identifier in state.identifierByTag.values {
            try? fileManager.removeItem(at: cacheDirectory.appendingPathComponent(Self.markerName(identifier)))
        }
        state.index.removeAll()
        state.keyHashes.removeAll()
        state.filesPerTag.removeAll()
        state.identifierByTag.removeAll()
        state.totalSize = 0
    }

    private func evict(toFit capacity: Int, in state: inout State) {
        guard state.totalSize > capacity else { return }
        for (name, _) in state.index.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard state.totalSize > capacity else { return }
            remove(name, in: &state)
        }
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
