/// A set of strings held as one sorted run of bytes and searched by bisection.
///
/// Made for the Public Suffix List's ten thousand short rules, which a process keeps for its whole
/// life: as `Set<String>` they took some 470 KiB of resident memory (the hash table's buckets and a
/// heap object for every rule over 15 bytes), here about 150 KiB (the rules' bytes and one offset
/// each). Members are compared as UTF-8 bytes; building sorts them once.
struct SortedByteStringSet: Sendable {
    /// The members' bytes end to end, the members in ascending byte order, each once.
    private let bytes: [UInt8]
    /// Where each member starts in `bytes`, then `bytes.count`.
    private let starts: [UInt32]

    /// The empty set.
    init() {
        bytes = []
        starts = [0]
    }

    /// The set of `builder`'s members.
    init(_ builder: Builder) {
        (bytes, starts) = builder.sortedUniqueMembers()
    }

    /// How many members the set holds.
    var count: Int { starts.count - 1 }

    /// Whether `member` is in the set.
    func contains(_ member: String) -> Bool {
        var member = member
        return member.withUTF8 { wanted in
            bytes.withUnsafeBufferPointer { all in
                var low = 0, high = count
                while low < high {
                    let middle = (low + high) / 2
                    let order = Self.order(Self.member(middle, of: all, starts: starts), wanted)
                    if order == 0 { return true }
                    if order < 0 { low = middle + 1 } else { high = middle }
                }
                return false
            }
        }
    }

    /// Member `index` as a slice of `all`.
    private static func member(_ index: Int, of all: UnsafeBufferPointer<UInt8>, starts: [UInt32]) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: all[Int(starts[index])..<Int(starts[index + 1])])
    }

    /// Negative, zero or positive as `a` sorts before, equal to or after `b` (bytes, then length).
    private static func order(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        for (x, y) in zip(a, b) where x != y {
            return x < y ? -1 : 1
        }
        return a.count - b.count
    }

    /// Collects members in any order, duplicates allowed, for `SortedByteStringSet.init(_:)`.
    struct Builder {
        private var bytes: [UInt8] = []
        private var starts: [UInt32] = [0]

        /// A builder with room for members of `byteCount` bytes in all, `count` of them: the
        /// arrays then grow in one step, and leave no trail of outgrown copies on the heap.
        init(byteCount: Int = 0, count: Int = 0) {
            bytes.reserveCapacity(byteCount)
            starts.reserveCapacity(count + 1)
        }

        /// Adds `member`.
        mutating func insert(_ member: String) {
            bytes.append(contentsOf: member.utf8)
            starts.append(UInt32(bytes.count))
        }

        /// The members sorted and each once, end to end, with their starts.
        fileprivate func sortedUniqueMembers() -> ([UInt8], [UInt32]) {
            let count = starts.count - 1
            return bytes.withUnsafeBufferPointer { all in
                let order = (0..<UInt32(count)).sorted {
                    SortedByteStringSet.order(SortedByteStringSet.member(Int($0), of: all, starts: starts),
                                              SortedByteStringSet.member(Int($1), of: all, starts: starts)) < 0
                }
                var sortedBytes: [UInt8] = []
                sortedBytes.reserveCapacity(bytes.count)
                var sortedStarts: [UInt32] = [0]
                sortedStarts.reserveCapacity(count + 1)
                var previous: UnsafeBufferPointer<UInt8>?
                for index in order {
                    let member = SortedByteStringSet.member(Int(index), of: all, starts: starts)
                    if let previous, SortedByteStringSet.order(previous, member) == 0 { continue }
                    sortedBytes.append(contentsOf: member)
                    sortedStarts.append(UInt32(sortedBytes.count))
                    previous = member
                }
                return (sortedBytes, sortedStarts)
            }
        }
    }
}
