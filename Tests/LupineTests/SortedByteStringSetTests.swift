@testable import Lupine
import Testing

/// The compact set the Public Suffix List keeps its rules in: membership by bytes, whatever the
/// order and repetition of what was inserted.
@Suite struct SortedByteStringSetTests {
    private static func set(_ members: [String]) -> SortedByteStringSet {
        var builder = SortedByteStringSet.Builder()
        members.forEach { builder.insert($0) }
        return SortedByteStringSet(builder)
    }

    @Test func holdsEachMemberOnceInAnyOrder() {
        let set = Self.set(["co.uk", "com", "a", "co.uk", "xn--55qx5d.cn", "c", "com"])
        #expect(set.count == 5)
        for member in ["a", "c", "com", "co.uk", "xn--55qx5d.cn"] {
            #expect(set.contains(member), "\(member)")
        }
    }

    @Test func prefixesAndExtensionsOfAMemberAreNotMembers() {
        let set = Self.set(["com", "co.uk", "kawasaki.jp"])
        for other in ["", "co", "comm", "co.u", "co.uk.", "kawasaki", "jp", "Com", "b", "zzz"] {
            #expect(!set.contains(other), "\(other)")
        }
    }

    @Test func theEmptySetHoldsNothing() {
        #expect(SortedByteStringSet().count == 0)
        #expect(!SortedByteStringSet().contains(""))
        #expect(!Self.set([]).contains("com"))
    }

    /// Members compared by their UTF-8 bytes, not by Unicode equivalence.
    @Test func membersAreComparedAsBytes() {
        let set = Self.set(["caf\u{E9}", "b\u{308}"])
        #expect(set.contains("caf\u{E9}"))
        #expect(set.contains("b\u{308}"))
        #expect(!set.contains("cafe\u{301}"))
    }

    /// Many members, as in the real list: every one is found, and no near miss is.
    @Test func findsEveryMemberOfALargeSet() {
        let members = (0..<5_000).map { "label\($0 * 7 % 5_000).suffix\($0 % 13)" }
        let set = Self.set(members.reversed())
        #expect(set.count == Set(members).count)
        #expect(members.allSatisfy(set.contains))
        #expect(!members.prefix(200).contains { set.contains($0 + "x") || set.contains(String($0.dropLast())) })
    }
}
