#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
@_spi(CustomByteBufferAllocator) import NIOCore
import Synchronization

/// Request bodies in memory handed to the socket without a copy: a `ByteBuffer` over the bytes of
/// the `Data` itself, which stays alive, lent, until NIO lets go of the last buffer over it.
///
/// NIO frees a buffer's memory through its allocator's C functions, which carry no context: the
/// `Data` of each loan waits in a table keyed by the address of its bytes, and `deallocate` finds
/// it there. A `Data` of more than a few bytes keeps its bytes at one address for as long as it
/// lives unmutated (the table holds a copy, so the caller's later changes go to new storage).
///
/// Nothing on the engine's write path writes into an outbound body buffer (the HTTP/1.1 encoder and
/// HTTP/2 pass body parts through, TLS encrypts into buffers of its own); should anything grow or
/// reallocate one, `reallocate` moves the bytes to memory of its own and ends the loan.
enum LentDataBuffers {
    private struct Loan {
        let data: Data
        /// Buffers over the same bytes (the same body sent by exchanges in flight at once).
        var buffers: Int
    }

    private static let loans = Mutex<[UInt: Loan]>([:])

    /// Whether buffers over `data`'s bytes are still out (tests check that each loan ends).
    static func isLent(_ data: Data) -> Bool {
        guard let base = data.withUnsafeBytes({ $0.baseAddress }) else { return false }
        return loans.withLock { $0[UInt(bitPattern: base)] != nil }
    }

    private static let allocator = ByteBufferAllocator(
        allocate: { size in malloc(size) },
        reallocate: { pointer, oldSize, newSize in
            guard let pointer, LentDataBuffers.endLoan(of: pointer, keepingBytes: true) else {
                return realloc(pointer, newSize)
            }
            // Lent bytes are the Data's, not malloc's: copied to memory of the buffer's own.
            guard let moved = malloc(newSize) else { return nil }
            moved.copyMemory(from: pointer, byteCount: min(oldSize, newSize))
            LentDataBuffers.release(pointer)
            return moved
        },
        deallocate: { pointer in
            if !LentDataBuffers.endLoan(of: pointer, keepingBytes: false) { free(pointer) }
        },
        copy: { destination, source, count in
            destination.copyMemory(from: source, byteCount: count)
        })

    /// A buffer whose readable bytes are `data`'s, lent without a copy; nil for a `Data` too small
    /// to keep its bytes at one address (kept inline) or too large for one `ByteBuffer`.
    static func buffer(lending data: Data) -> ByteBuffer? {
        guard data.count > 64, data.count <= Int(UInt32.max) else { return nil }
        guard let base = data.withUnsafeBytes({ $0.baseAddress }) else { return nil }
        let key = UInt(bitPattern: base)
        loans.withLock { loans in
            loans[key, default: Loan(data: data, buffers: 0)].buffers += 1
        }
        let bytes = UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(mutating: base), count: data.count)
        return ByteBuffer(takingOwnershipOf: bytes, allocator: allocator)
    }

    /// True when `pointer` is lent bytes. Unless `keepingBytes`, the buffer over them is gone: the
    /// loan ends with its last buffer.
    private static func endLoan(of pointer: UnsafeMutableRawPointer, keepingBytes: Bool) -> Bool {
        let key = UInt(bitPattern: pointer)
        // The Data, when its loan ends, is released after the lock.
        let (lent, ended) = loans.withLock { loans -> (Bool, Data?) in
            guard var loan = loans[key] else { return (false, nil) }
            guard !keepingBytes else { return (true, nil) }
            loan.buffers -= 1
            if loan.buffers > 0 {
                loans[key] = loan
                return (true, nil)
            }
            loans[key] = nil
            return (true, loan.data)
        }
        _ = ended
        return lent
    }

    /// A buffer moved off lent bytes: its share of the loan ends.
    private static func release(_ pointer: UnsafeMutableRawPointer) {
        _ = endLoan(of: pointer, keepingBytes: false)
    }
}
