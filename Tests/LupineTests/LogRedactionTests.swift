import Foundation
@testable import Lupine
import Testing

/// What the logging monitor hides, on URLs and texts it did not make itself.
@Suite struct LogRedactionTests {
    private let redaction = LogRedaction(headerNames: ["Authorization"], queryKeys: ["token", "API_key"])

    @Test(arguments: [
        ("https://example.com/a?b=c", "https://example.com/a?b=c"),
        ("https://user:pass@example.com/a", "https://***@example.com/a"),
        ("https://ghp_token@example.com:8443/", "https://***@example.com:8443/"),
        ("https://example.com/a?TOKEN=x&b=1&api_key=y", "https://example.com/a?TOKEN=***&b=1&api_key=***"),
        ("https://example.com/a?token", "https://example.com/a?token"),
        ("https://example.com/a?to%6Ben=x", "https://example.com/a?to%6Ben=***"),
    ])
    func urls(_ input: String, _ expected: String) throws {
        #expect(redaction.redact(try #require(URL(string: input))) == expected)
    }

    @Test(arguments: [
        ("no url here", "no url here"),
        ("failed: https://u:p@host/x and http://v@other?q", "failed: https://***@host/x and http://***@other?q"),
        ("mail me at a@b.c", "mail me at a@b.c"),
        ("https://host/path@not-userinfo", "https://host/path@not-userinfo"),
        ("ftp://x:y@z", "ftp://***@z"),
    ])
    func texts(_ input: String, _ expected: String) {
        #expect(redaction.redactUserInfo(in: input) == expected)
    }

    @Test func headerValuesAreMaskedByNameWithoutRegardToCase() {
        #expect(redaction.redact(headerValue: "Bearer x", name: "authorization") == "***")
        #expect(redaction.redact(headerValue: "text/plain", name: "Accept") == "text/plain")
    }
}
