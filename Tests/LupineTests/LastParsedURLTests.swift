import Foundation
import Testing
@testable import Lupine

/// `String.asURL()` hands out the URL it parsed last for the same string: the same answers as
/// parsing every time.
@Suite struct LastParsedURLTests {
    @Test func theSameStringTwiceGivesTheSameURL() throws {
        let string = "http://127.0.0.1:8080/last-parsed?q=1"
        let first = try string.asURL()
        let second = try string.asURL()
        #expect(first == second)
        #expect(second == URL(string: string))
    }

    @Test func canonicallyEquivalentStringsKeepTheirOwnURLs() throws {
        // Equal as Strings, different bytes: each parses to its own URL, as URL(string:) gives it.
        let precomposed = "http://example.com/caf\u{E9}"
        let combining = "http://example.com/cafe\u{301}"
        #expect(precomposed == combining)
        #expect((try? precomposed.asURL()) == URL(string: precomposed))
        #expect((try? combining.asURL()) == URL(string: combining))
        #expect((try? precomposed.asURL()) == URL(string: precomposed))
    }

    @Test func everyAnswerIsURLStringsOwnInAnyOrder() throws {
        let strings = ["http://example.com/", "", "http://[::1", "http://example.com/", "http://[::1", "https://a.b/c d"]
        for string in strings + strings.reversed() {
            if let expected = URL(string: string) {
                #expect(try string.asURL() == expected)
            } else {
                #expect(throws: AFError.self) { try string.asURL() }
            }
        }
    }
}
