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
/// and one per URL group, each one byte long, and uses a file only while its markers exist. Their
/// names are fixed (time 0), so every process finds the same markers. An identifier that
/// contains `/` cannot be a file name (corelibs cannot store such URLs on disk either): files of
/// those URLs depend on the store marker alone.
final class HTTPCacheDiskStore: @unchecked Sendable {
    /// The configured cache's directory, where the markers go.
    let cacheDirectory: URL
    /// Lupine's folder inside it.
    let directory: URL

    private struct IndexEntry {
        var size: Int
        var lastUse: UInt64
    }

    private struct State {
        var isOpen = false
        var index: [String: IndexEntry] = [:]
        var totalSize = 0
        var clock: UInt64 = 0
    }

    // File operations run under the lock too: the disk tier is used when memory misses and when
    // a response is stored, never on a memory hit.
    private let state = NIOLockedValueBox(State())
    private let fileManager = FileManager.default

    static let markerExtension = "storedcachedurlresponse"
    private static let storeMarkerIdentifier = "LupineStore"
    private static let fileExtension = "lupinecache"

    init(cacheDirectory: URL) {
        self.cacheDirectory = cacheDirectory
        directory = cacheDirectory.appendingPathComponent("Lupine", isDirectory: true)
    }

    /// The responses stored on disk for `key`, when there are any and nothing cleared them.
    func read(_ key: HTTPCacheKey) -> HTTPCacheFile? {
        state.withLockedValue { state in
            open(&state)
            let name = Self.fileName(for: key)
            let url = directory.appendingPathComponent(name)
            guard let bytes = try? Data(contentsOf: url) else {
                forget(name, in: &state)
                return nil
            }
            guard let file = HTTPCacheFile.decode(bytes, expectedKey: key.string) else {
                remove(name, in: &state)
                return nil
            }
            guard storeMarkerExists(&state) else {
                removeAllFiles(&state)
                return nil
            }
            if !file.marker.isEmpty, !fileManager.fileExists(atPath: cacheDirectory.appendingPathComponent(file.marker).path) {
                remove(name, in: &state)
                return nil
            }
            state.clock += 1
            state.index[name] = IndexEntry(size: bytes.count, lastUse: state.clock)
            return file
        }
    }

    /// Stores `variants` for `key` (a file per key), then removes the least recently used files
    /// until all fit in `capacity` bytes. Nothing is stored when the file alone would not fit.
    func write(_ variants: [StoredResponse], for key: HTTPCacheKey, url: URL, capacity: Int) {
        state.withLockedValue { state in
            open(&state)
            let name = Self.fileName(for: key)
            guard !variants.isEmpty else {
                remove(name, in: &state)
                return
            }
            if !storeMarkerExists(&state) { removeAllFiles(&state) }
            let marker = groupMarker(for: url)
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
            state.totalSize -= state.index[name]?.size ?? 0
            state.clock += 1
            state.index[name] = IndexEntry(size: bytes.count, lastUse: state.clock)
            state.totalSize += bytes.count
            evict(toFit: capacity, in: &state)
        }
    }

    func remove(_ key: HTTPCacheKey) {
        state.withLockedValue { state in
            remove(Self.fileName(for: key), in: &state)
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
    /// process ran): they are removed.
    private func open(_ state: inout State) {
        guard !state.isOpen else { return }
        state.isOpen = true
        let files = (try? fileManager.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.fileSizeKey, .contentModificationDateKey])) ?? []
        guard fileManager.fileExists(atPath: markerURL(Self.storeMarkerIdentifier).path) else {
            for file in files { try? fileManager.removeItem(at: file) }
            return
        }
        let found = files.compactMap { file -> (name: String, size: Int, date: Date)? in
            guard file.pathExtension == Self.fileExtension,
                  let values = try? file.resourceValues(forKeys: [.fileSizeKey, .contentModificationDateKey]) else { return nil }
            return (file.lastPathComponent, values.fileSize ?? 0, values.contentModificationDate ?? .distantPast)
        }
        for file in found.sorted(by: { $0.date < $1.date }) {
            state.clock += 1
            state.index[file.name] = IndexEntry(size: file.size, lastUse: state.clock)
            state.totalSize += file.size
        }
    }

    private func forget(_ name: String, in state: inout State) {
        if let entry = state.index.removeValue(forKey: name) { state.totalSize -= entry.size }
    }

    private func remove(_ name: String, in state: inout State) {
        forget(name, in: &state)
        try? fileManager.removeItem(at: directory.appendingPathComponent(name))
    }

    private func removeAllFiles(_ state: inout State) {
        let files = (try? fileManager.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        for file in files { try? fileManager.removeItem(at: file) }
        state.index.removeAll()
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

    /// Whether the store marker is still there; when it is not (the cache was cleared), a new one
    /// is written and false is returned, so that the caller drops every file.
    private func storeMarkerExists(_ state: inout State) -> Bool {
        if fileManager.fileExists(atPath: markerURL(Self.storeMarkerIdentifier).path) { return true }
        writeMarker(Self.storeMarkerIdentifier)
        return false
    }

    /// The name of the marker file the entries of `url`'s group depend on, written when missing;
    /// empty when the group's identifier cannot be a file name.
    private func groupMarker(for url: URL) -> String {
        guard let identifier = Self.corelibsIdentifier(of: url), !identifier.contains("/") else { return "" }
        if !fileManager.fileExists(atPath: markerURL(identifier).path) {
            guard writeMarker(identifier) else { return "" }
        }
        return markerURL(identifier).lastPathComponent
    }

    private func markerURL(_ identifier: String) -> URL {
        cacheDirectory.appendingPathComponent("0.\(identifier).\(Self.markerExtension)")
    }

    /// Writes a one-byte marker file named as corelibs names its entries.
    @discardableResult
    private func writeMarker(_ identifier: String) -> Bool {
        do {
            try fileManager.createDirectory(at: cacheDirectory, withIntermediateDirectories: true)
            try Data([0x4C]).write(to: markerURL(identifier), options: .atomic)
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

    private static func fileName(for key: HTTPCacheKey) -> String {
        let digest = SHA256.hash(data: Data(key.string.utf8))
        return digest.map { String(format: "%02x", $0) }.joined() + "." + fileExtension
    }
}
