import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The memory a large response body of announced length is collected in, mapped on its own and,
/// on Linux, backed by transparent huge pages.
///
/// A body collected in ordinary heap memory takes a page fault for each 4 KiB it fills: for a
/// 100 MiB body, 25,600 faults, a quarter of the CPU time of the whole transfer. With huge pages
/// the kernel maps 2 MiB per fault. The buffer is used only where the kernel offers them (Linux)
/// and only for bodies of at least `minimumSize`; anything else is collected in a `Data`.
///
/// The mapping comes from `LargeBodyMappings`, which may hand out again the pages of the body
/// before (the bytes past `count` are never shown) and takes it back when the buffer, or the
/// `Data` it was handed to, goes.
///
/// Not thread-safe: its owner (DataRequest's locked state) serialises every call.
final class LargeBodyBuffer: @unchecked Sendable {
    /// The smallest announced length worth a mapping of its own: four huge pages.
    static let minimumSize = 8 * 1024 * 1024

    private static let hugePageSize = 2 * 1024 * 1024

    /// The mapping (possibly one a body before this one used), and the aligned start inside it.
    private let mapping: LargeBodyMappings.Mapping
    private let base: UnsafeMutableRawPointer
    /// Bytes the buffer can hold, and bytes it holds.
    let capacity: Int
    private(set) var count = 0
    /// Set once the bytes were handed to a `Data`, which then owns the mapping.
    private var isHandedOff = false

    /// A buffer for `capacity` bytes, or nil where huge pages are not offered or the mapping fails.
    init?(capacity: Int) {
        #if os(Linux)
        guard capacity >= Self.minimumSize else { return nil }
        // One huge page more than needed, so that the start can be aligned to one.
        guard let mapping = LargeBodyMappings.shared.take(size: capacity + Self.hugePageSize) else { return nil }
        let address = UInt(bitPattern: mapping.pointer)
        let alignment = UInt(Self.hugePageSize)
        let aligned = (address + alignment - 1) & ~(alignment - 1)
        self.mapping = mapping
        base = mapping.pointer + Int(aligned - address)
        self.capacity = capacity
        // Advice only: without huge pages the buffer still works, with small pages.
        _ = madvise(base, capacity, MADV_HUGEPAGE)
        #else
        return nil
        #endif
    }

    deinit {
        #if os(Linux)
        if !isHandedOff { LargeBodyMappings.shared.release(mapping) }
        #endif
    }

    /// Copies `part` after the bytes held; false, copying nothing, when it does not fit.
    func append(_ part: Data) -> Bool {
        guard !isHandedOff, part.count <= capacity - count else { return false }
        part.withUnsafeBytes { bytes in
            guard let source = bytes.baseAddress else { return }
            (base + count).copyMemory(from: source, byteCount: bytes.count)
        }
        count += part.count
        return true
    }

    /// The bytes held, as a `Data` that owns the mapping from now on (it gives it back when the
    /// last copy of it goes); the buffer takes no more bytes.
    func handOff() -> Data {
        guard !isHandedOff else { return Data() }
        isHandedOff = true
        #if os(Linux)
        let mapping = mapping
        return Data(bytesNoCopy: base, count: count, deallocator: .custom { _, _ in LargeBodyMappings.shared.release(mapping) })
        #else
        return Data()
        #endif
    }
}
