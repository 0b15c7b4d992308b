import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The memory a large response body of announced length is collected in: a mapping of its own,
/// whose pages are made ahead of the bytes, a few MiB at a time.
///
/// A body collected in ordinary heap memory takes a page fault for each 4 KiB it fills: for a
/// 100 MiB body, 25,600 faults. The buffer asks the kernel for the next `populateStep` bytes in
/// one call (`MADV_POPULATE_WRITE`) before it copies into them, which spares the faults' entries
/// and exits (the zeroing of the fresh pages stays). It does not ask for transparent huge pages:
/// on a virtual machine that hands freed memory back to its host (free page reporting), a huge
/// page comes from memory the host took back and costs the host's faults, a first 100 MiB body
/// between 6 and 480 ms of CPU where small pages, taken from the guest's own free memory, cost a
/// steady 45 to 60 (see Performance.md). The buffer is used only on Linux and only for bodies of
/// at least `minimumSize`; anything else is collected in a `Data`.
///
/// The mapping comes from `LargeBodyMappings`, which may hand out again the pages of the body
/// before (the bytes past `count` are never shown; their pages need no populating) and takes it
/// back when the buffer, or the `Data` it was handed to, goes.
///
/// Not thread-safe: its owner (DataRequest's locked state) serialises every call.
final class LargeBodyBuffer: @unchecked Sendable {
    /// The smallest announced length worth a mapping of its own.
    static let minimumSize = 8 * 1024 * 1024
    /// Bytes populated at a time ahead of the copy.
    static let populateStep = 4 * 1024 * 1024
    /// `MADV_POPULATE_WRITE` (Linux 5.14), spelled out for C libraries that do not name it.
    private static let populateWrite: Int32 = 23

    /// Where the mapping comes from and goes back to.
    private let mappings: LargeBodyMappings
    /// The mapping (possibly one a body before this one used).
    private var mapping: LargeBodyMappings.Mapping
    /// Bytes the buffer can hold, and bytes it holds.
    let capacity: Int
    private(set) var count = 0
    /// Bytes from the start whose pages exist (populated, or left by a body before).
    var populatedBytes: Int { mapping.backed }
    /// Set once the bytes were handed to a `Data`, which then owns the mapping.
    private var isHandedOff = false

    /// A buffer for `capacity` bytes from `mappings`, or nil off Linux, under `minimumSize`, or
    /// when the mapping fails.
    init?(capacity: Int, mappings: LargeBodyMappings = .shared) {
        #if os(Linux)
        guard capacity >= Self.minimumSize, let mapping = mappings.take(size: capacity) else { return nil }
        self.mappings = mappings
        self.mapping = mapping
        self.capacity = capacity
        #else
        return nil
        #endif
    }

    deinit {
        #if os(Linux)
        if !isHandedOff { mappings.release(mapping) }
        #endif
    }

    /// Copies `part` after the bytes held; false, copying nothing, when it does not fit.
    func append(_ part: Data) -> Bool {
        guard !isHandedOff, part.count <= capacity - count else { return false }
        let end = count + part.count
        if end > mapping.backed { populate(through: end) }
        part.withUnsafeBytes { bytes in
            guard let source = bytes.baseAddress else { return }
            (mapping.pointer + count).copyMemory(from: source, byteCount: bytes.count)
        }
        count = end
        return true
    }

    /// Makes the pages up to at least `end` (and `populateStep` past it, within the buffer), so
    /// that the copy takes no fault. Advice only: where the kernel refuses, the copy faults the
    /// pages in as usual.
    private func populate(through end: Int) {
        let start = mapping.backed
        let stop = min(capacity, max(end, start + Self.populateStep))
        #if os(Linux)
        _ = madvise(mapping.pointer + start, stop - start, Self.populateWrite)
        #endif
        mapping.backed = stop
    }

    /// The bytes held, as a `Data` that owns the mapping from now on (it gives it back when the
    /// last copy of it goes); the buffer takes no more bytes.
    func handOff() -> Data {
        guard !isHandedOff else { return Data() }
        isHandedOff = true
        #if os(Linux)
        let (mappings, mapping) = (mappings, mapping)
        return Data(bytesNoCopy: mapping.pointer, count: count, deallocator: .custom { _, _ in mappings.release(mapping) })
        #else
        return Data()
        #endif
    }
}
