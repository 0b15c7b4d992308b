import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The mappings of `LargeBodyBuffer`s: made, and taken back, with the last one released kept a
/// moment for the next large body.
///
/// The kernel hands a fresh mapping out as untouched pages, and zeroes each one when it is first
/// written: for a 100 MiB body, 100 MiB of zeroing, most of the CPU time of collecting it. On a
/// virtual machine whose free memory goes back to the host (free page reporting), the zeroing
/// also takes the host's page faults, and a body's CPU time was seen to grow fivefold when it did.
/// A body that follows another of about its size (a client polling a large resource, a batch of
/// downloads) reuses the pages of the one before, already mapped and written. The mapping kept is
/// one at most, of at most `maximumKeptSize` bytes, and it is unmapped `keptFor` after it was
/// released if no body took it: the memory held is bounded in size and in time.
final class LargeBodyMappings: Sendable {
    /// The process's mappings.
    static let shared = LargeBodyMappings()

    /// The largest mapping kept for reuse.
    static let maximumKeptSize = 512 * 1024 * 1024
    /// How long a released mapping waits for a body before it is unmapped.
    let keptFor: DispatchTimeInterval

    /// - Parameter keptFor: How long a released mapping waits for a body (one second for the
    ///   process's mappings).
    init(keptFor: DispatchTimeInterval = .seconds(1)) {
        self.keptFor = keptFor
    }

    /// A mapping as made: `munmap` takes it back whole.
    struct Mapping: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        let size: Int
        /// Bytes from the start whose pages a body already made (populated or wrote): a body
        /// that reuses the mapping need not populate them again.
        var backed = 0
    }

    /// The mapping kept, and how many were released so far: the count tells the unmapping
    /// scheduled for the kept one from later ones.
    private let kept = Mutex<(mapping: Mapping?, releases: Int)>((nil, 0))

    /// A mapping of at least `size` bytes: the one kept when it is large enough and not more than
    /// twice that, else a new one (nil when the kernel refuses it).
    func take(size: Int) -> Mapping? {
        #if os(Linux)
        let (reused, stale) = kept.withLock { state -> (Mapping?, Mapping?) in
            guard let held = state.mapping else { return (nil, nil) }
            state.mapping = nil
            return held.size >= size && held.size / 2 <= size ? (held, nil) : (nil, held)
        }
        if let reused { return reused }
        if let stale { munmap(stale.pointer, stale.size) }
        guard let pointer = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              pointer != MAP_FAILED
        else { return nil }
        return Mapping(pointer: pointer, size: size)
        #else
        return nil
        #endif
    }

    /// Takes `mapping` back: kept for the next body when there is room, else unmapped.
    func release(_ mapping: Mapping) {
        #if os(Linux)
        guard mapping.size <= Self.maximumKeptSize else {
            munmap(mapping.pointer, mapping.size)
            return
        }
        let (release, replaced) = kept.withLock { state -> (Int, Mapping?) in
            let replaced = state.mapping
            state.releases += 1
            state.mapping = mapping
            return (state.releases, replaced)
        }
        if let replaced { munmap(replaced.pointer, replaced.size) }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + keptFor) {
            self.unmap(ifStillKeptSince: release)
        }
        #endif
    }

    /// Unmaps the kept mapping if no release came after `release` (that one is still kept).
    private func unmap(ifStillKeptSince release: Int) {
        #if os(Linux)
        let expired = kept.withLock { state -> Mapping? in
            guard state.releases == release, let held = state.mapping else { return nil }
            state.mapping = nil
            return held
        }
        if let expired { munmap(expired.pointer, expired.size) }
        #endif
    }

    /// The mapping waiting for reuse, if any.
    var keptMapping: Mapping? { kept.withLock { $0.mapping } }
}
