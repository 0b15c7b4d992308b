import Foundation
import Testing
@testable import Lupine

/// The escaper must give exactly what Foundation's `addingPercentEncoding(withAllowedCharacters:)`
/// gives: `URLEncoding.escape(_:)`'s results are part of the Alamofire contract.
@Suite struct PercentEscaperTests {
    private static let sets: [(String, CharacterSet)] = [
        ("afURLQueryAllowed", .afURLQueryAllowed),
        ("urlQueryAllowed", .urlQueryAllowed),
        ("alphanumerics", .alphanumerics),
        ("empty", CharacterSet()),
        // URLEncodedFormEncoder adds the space to whatever set it is given.
        ("urlPathAllowed and space", CharacterSet.urlPathAllowed.union(CharacterSet(charactersIn: " "))),
        ("afURLQueryAllowed and space", CharacterSet.afURLQueryAllowed.union(CharacterSet(charactersIn: " "))),
    ]

    @Test func everyASCIICharacterAndPairIsEscapedAsFoundationEscapesIt() {
        let characters = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        for (name, set) in Self.sets {
            let escaper = PercentEscaper(allowing: set)
            var mismatches: [String] = []
            for first in characters {
                if escaper.escape(first) != first.addingPercentEncoding(withAllowedCharacters: set) { mismatches.append(first) }
                for second in characters {
                    let pair = first + second
                    if escaper.escape(pair) != pair.addingPercentEncoding(withAllowedCharacters: set) { mismatches.append(pair) }
                }
            }
            #expect(mismatches.isEmpty, "\(name): \(mismatches.prefix(5).map(\.debugDescription))")
        }
    }

    @Test(arguments: ["", "hello world", "a&b=c+d", "name@example.com", "café", "日本語 text", "emoji 👍🏽!", "100%", "tab\there"])
    func stringsAreEscapedAsFoundationEscapesThem(_ string: String) {
        for (name, set) in Self.sets {
            #expect(PercentEscaper(allowing: set).escape(string) == string.addingPercentEncoding(withAllowedCharacters: set), "\(name)")
        }
    }

    @Test func urlEncodingEscapesQueryDelimitersAndKeepsUnreservedCharacters() {
        #expect(URLEncoding.default.escape("a b&c=d?e/f:g#h[i]j@k!l$m'n(o)p*q+r,s;t~u-v_w.x") ==
            "a%20b%26c%3Dd?e/f%3Ag%23h%5Bi%5Dj%40k%21l%24m%27n%28o%29p%2Aq%2Br%2Cs%3Bt~u-v_w.x")
    }
}
