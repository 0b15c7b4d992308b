@testable import Lupine
import Testing

/// How repeated response fields become `HTTPURLResponse`'s dictionary, on both paths: the scan
/// used for ordinary responses and the index used past 32 fields.
@Suite struct ResponseHeaderFieldsTests {
    static func fields(count: Int) -> [HTTPHeader] {
        var fields = [HTTPHeader(name: "Set-Cookie", value: "a=1"), HTTPHeader(name: "X-Mixed", value: "one")]
        for index in 0..<count { fields.append(HTTPHeader(name: "X-Filler-\(index)", value: "\(index)")) }
        fields += [HTTPHeader(name: "set-cookie", value: "b=2"), HTTPHeader(name: "X-MIXED", value: "two")]
        return fields
    }

    @Test(arguments: [0, 10, 40])
    func repeatedNamesJoinUnderTheFirstSpelling(fillers: Int) {
        let dictionary = ResponseHeaderFields.dictionary(from: Self.fields(count: fillers))

        #expect(dictionary["Set-Cookie"] == "a=1, b=2")
        #expect(dictionary["X-Mixed"] == "one, two")
        #expect(dictionary["set-cookie"] == nil)
        #expect(dictionary.count == fillers + 2)
    }
}
