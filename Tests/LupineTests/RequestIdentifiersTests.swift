import Foundation
@testable import Lupine
import Testing

/// Request identifiers are made without reading /dev/urandom each time; they stay distinct and
/// well-formed version-4 UUIDs, as `UUID()` gives.
@Suite struct RequestIdentifiersTests {
    @Test func identifiersOfManyRequestsAreDistinctVersion4UUIDs() {
        var seen = Set<UUID>()
        for _ in 0..<50_000 {
            let id = RequestIdentifiers.next()
            #expect(seen.insert(id).inserted)
            #expect(id.uuid.6 >> 4 == 4, "version nibble of \(id)")
            #expect(id.uuid.8 >> 6 == 0b10, "variant bits of \(id)")
        }
    }

    @Test func requestsOfASessionHaveDistinctIdentifiers() {
        let session = Session(startRequestsImmediately: false)
        let ids = (0..<100).map { _ in session.request("http://127.0.0.1:1/never").id }
        #expect(Set(ids).count == 100)
    }
}
