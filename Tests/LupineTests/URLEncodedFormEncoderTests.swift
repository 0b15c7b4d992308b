import Foundation
import Testing
@testable import Lupine

@Suite struct URLEncodedFormEncoderTests {
    private struct Profile: Encodable {
        let name = "a b"
        let list = [1, 2]
        let flag = true
        let nested = ["k": "v"]
        let optional: String? = nil
        let camelCaseKey = "x"
    }

    private struct Wrapper<Value: Encodable>: Encodable {
        let value: Value
    }

    private struct StrategyError: Error {}

    private static let date = Date(timeIntervalSince1970: 1_700_000_000.5)

    private static func form(_ value: any Encodable, with encoder: URLEncodedFormEncoder = URLEncodedFormEncoder()) throws -> String {
        try encoder.encode(value)
    }

    // MARK: Verified examples

    @Test func defaultsSortKeysBracketArraysAndDropNils() throws {
        #expect(try Self.form(Profile())
            == "camelCaseKey=x&flag=1&list%5B%5D=1&list%5B%5D=2&name=a%20b&nested%5Bk%5D=v")
    }

    @Test func combinedStrategiesProduceTheVerifiedOutput() throws {
        let encoder = URLEncodedFormEncoder(arrayEncoding: .indexInBrackets, boolEncoding: .literal,
                                            keyEncoding: .convertToSnakeCase, keyPathEncoding: .dots,
                                            nilEncoding: .null, spaceEncoding: .plusReplaced)

        #expect(try Self.form(Profile(), with: encoder)
            == "camel_case_key=x&flag=true&list%5B0%5D=1&list%5B1%5D=2&name=a+b&nested.k=v&optional=null")
    }

    @Test func dataOutputIsTheUTF8OfTheString() throws {
        let data: Data = try URLEncodedFormEncoder().encode(Profile())

        #expect(data == Data("camelCaseKey=x&flag=1&list%5B%5D=1&list%5B%5D=2&name=a%20b&nested%5Bk%5D=v".utf8))
    }

    // MARK: Layout

    @Test func alphabetizingCanBeTurnedOffToKeepDeclarationOrder() throws {
        let encoder = URLEncodedFormEncoder(alphabetizeKeyValuePairs: false)

        #expect(try Self.form(Profile(), with: encoder)
            == "name=a%20b&list%5B%5D=1&list%5B%5D=2&flag=1&nested%5Bk%5D=v&camelCaseKey=x")
    }

    @Test func alphabetizingSortsArraySegmentsToo() throws {
        #expect(try Self.form(Wrapper(value: [10, 9, 1])) == "value%5B%5D=1&value%5B%5D=10&value%5B%5D=9")
    }

    @Test func arrayEncodingsFormatElementKeys() throws {
        let value = Wrapper(value: ["x", "y"])
        func form(_ encoding: URLEncodedFormEncoder.ArrayEncoding) throws -> String {
            try Self.form(value, with: URLEncodedFormEncoder(arrayEncoding: encoding))
        }

        #expect(try form(.brackets) == "value%5B%5D=x&value%5B%5D=y")
        #expect(try form(.noBrackets) == "value=x&value=y")
        #expect(try form(.indexInBrackets) == "value%5B0%5D=x&value%5B1%5D=y")
        #expect(try form(.custom { key, index in "\(key)-\(index)" }) == "value-0=x&value-1=y")
    }

    @Test func nestedArraysAndObjectsComposeFullKeys() throws {
        struct Item: Encodable { let id: Int; let tags: [String] }
        let value = Wrapper(value: [Item(id: 1, tags: ["a"]), Item(id: 2, tags: [])])
        let encoder = URLEncodedFormEncoder(arrayEncoding: .indexInBrackets)

        #expect(try Self.form(value, with: encoder)
            == "value%5B0%5D%5Bid%5D=1&value%5B0%5D%5Btags%5D%5B0%5D=a&value%5B1%5D%5Bid%5D=2")
        #expect(try Self.form(Wrapper(value: [[1, 2], [3]]), with: encoder)
            == "value%5B0%5D%5B0%5D=1&value%5B0%5D%5B1%5D=2&value%5B1%5D%5B0%5D=3")
    }

    @Test func emptyCollectionsAndEmptyRootsEncodeToNothing() throws {
        struct Empty: Encodable {}

        #expect(try Self.form(Empty()) == "")
        #expect(try Self.form([String: Int]()) == "")
        #expect(try Self.form(Wrapper(value: [Int]())) == "")
        #expect(try Self.form(Wrapper(value: [String: Int]())) == "")
    }

    @Test func keyPathEncodingsJoinNestedKeys() throws {
        let value = Wrapper(value: ["inner": ["leaf": 1]])
        func form(_ encoding: URLEncodedFormEncoder.KeyPathEncoding) throws -> String {
            try Self.form(value, with: URLEncodedFormEncoder(keyPathEncoding: encoding))
        }

        #expect(try form(.brackets) == "value%5Binner%5D%5Bleaf%5D=1")
        #expect(try form(.dots) == "value.inner.leaf=1")
        #expect(try form(URLEncodedFormEncoder.KeyPathEncoding { "__\($0)" }) == "value__inner__leaf=1")
    }

    @Test func dictionaryKeysThatLookLikeNumbersStayKeys() throws {
        #expect(try Self.form(["1": "a", "0": "b"]) == "0=b&1=a")
    }

    @Test func namedIntegerCodingKeysWriteArrayElementsAsInAlamofire() throws {
        struct Link: Encodable {
            let link = URL(string: "https://example.com/a?b=c")!
            let name = "n"
        }
        struct Positions: Encodable {
            enum CodingKeys: Int, CodingKey { case first = 0, second = 1, tenth = 10 }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode("b", forKey: .second)
                try container.encode("z", forKey: .tenth)
                try container.encode("a", forKey: .first)
            }
        }
        let indexed = URLEncodedFormEncoder(alphabetizeKeyValuePairs: false, arrayEncoding: .indexInBrackets)

        // URL encodes itself under an Int-backed key, so a URL value is sent as `link[]`.
        #expect(try Self.form(Link()) == "link%5B%5D=https%3A//example.com/a?b%3Dc&name=n")
        // Past the end a key appends an element; an index already written is written again in place.
        #expect(try Self.form(Wrapper(value: Positions()), with: indexed) == "value%5B0%5D=a&value%5B1%5D=z")
        // At the top level such keys make an array, which is not a keyed root.
        #expect(throws: URLEncodedFormEncoder.Error.self) { try Self.form(Positions()) }
        // Keys that are numbers themselves (an [Int: Value] dictionary's) stay keys.
        #expect(try Self.form(Wrapper(value: [7: "x"])) == "value%5B7%5D=x")
    }

    // MARK: Values

    @Test func boolEncodingsWriteNumbersOrLiterals() throws {
        let value = ["t": true, "f": false]

        #expect(try Self.form(value) == "f=0&t=1")
        #expect(try Self.form(value, with: URLEncodedFormEncoder(boolEncoding: .literal)) == "f=false&t=true")
    }

    @Test func numbersUseTheirStringInitializers() throws {
        struct Numbers: Encodable {
            let int = -1, int8: Int8 = 8, int16: Int16 = 16, int32: Int32 = 32, int64 = Int64.max
            let uint: UInt = 1, uint8: UInt8 = 8, uint16: UInt16 = 16, uint32: UInt32 = 32, uint64 = UInt64.max
            let double = 1.0, float: Float = 0.1, decimal = Decimal(string: "12.50") ?? 0
        }
        let encoder = URLEncodedFormEncoder(alphabetizeKeyValuePairs: false)

        #expect(try Self.form(Numbers(), with: encoder) == "int=-1&int8=8&int16=16&int32=32&int64=9223372036854775807"
            + "&uint=1&uint8=8&uint16=16&uint32=32&uint64=18446744073709551615&double=1.0&float=0.1&decimal=12.5")
    }

    @Test func dataEncodingsWriteBase64BytesOrCustomStrings() throws {
        let value = Wrapper(value: Data([1, 255]))
        func form(_ encoding: URLEncodedFormEncoder.DataEncoding) throws -> String {
            try Self.form(value, with: URLEncodedFormEncoder(dataEncoding: encoding))
        }

        #expect(try form(.base64) == "value=Af8%3D")
        #expect(try form(.deferredToData) == "value%5B%5D=1&value%5B%5D=255")
        #expect(try form(.custom { $0.map { String(format: "%02x", $0) }.joined() }) == "value=01ff")
        #expect(throws: StrategyError.self) { try form(.custom { _ in throw StrategyError() }) }
    }

    @Test func dateEncodingsWriteEachFormat() throws {
        let value = Wrapper(value: Self.date)
        func form(_ encoding: URLEncodedFormEncoder.DateEncoding) throws -> String {
            try Self.form(value, with: URLEncodedFormEncoder(dateEncoding: encoding))
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        let iso = ISO8601DateFormatter()
        iso.formatOptions = .withInternetDateTime

        #expect(try form(.deferredToDate) == "value=\(Self.date.timeIntervalSinceReferenceDate)")
        #expect(try form(.secondsSince1970) == "value=1700000000.5")
        #expect(try form(.millisecondsSince1970) == "value=1700000000500.0")
        #expect(try form(.iso8601) == "value=2023-11-14T22%3A13%3A20Z")
        #expect(try form(.iso8601) == "value=" + URLEncoding.default.escape(iso.string(from: Self.date)))
        #expect(try form(.formatted(formatter)) == "value=2023-11-14%2022%3A13")
        #expect(try form(.custom { "t\(Int($0.timeIntervalSince1970))" }) == "value=t1700000000")
        #expect(throws: StrategyError.self) { try form(.custom { _ in throw StrategyError() }) }
    }

    @Test func datesInsideArraysAndOptionalsUseTheStrategy() throws {
        struct Dates: Encodable { let list: [Date]; let maybe: Date? }
        let encoder = URLEncodedFormEncoder(dateEncoding: .secondsSince1970)

        #expect(try Self.form(Dates(list: [Self.date], maybe: Self.date), with: encoder)
            == "list%5B%5D=1700000000.5&maybe=1700000000.5")
    }

    @Test func nilEncodingsDropKeyDropValueNullOrCustom() throws {
        struct Optionals: Encodable { let a: Int?; let b: String?; let c: [Int?] }
        let value = Optionals(a: nil, b: "x", c: [1, nil, 3])
        func form(_ encoding: URLEncodedFormEncoder.NilEncoding) throws -> String {
            try Self.form(value, with: URLEncodedFormEncoder(arrayEncoding: .indexInBrackets, nilEncoding: encoding))
        }

        #expect(try form(.dropKey) == "b=x&c%5B0%5D=1&c%5B1%5D=3")
        #expect(try form(.dropValue) == "a=&b=x&c%5B0%5D=1&c%5B1%5D=&c%5B2%5D=3")
        #expect(try form(.null) == "a=null&b=x&c%5B0%5D=1&c%5B1%5D=null&c%5B2%5D=3")
        #expect(try form(URLEncodedFormEncoder.NilEncoding { "none" }) == "a=none&b=x&c%5B0%5D=1&c%5B1%5D=none&c%5B2%5D=3")
        #expect(try form(URLEncodedFormEncoder.NilEncoding { nil }) == "b=x&c%5B0%5D=1&c%5B1%5D=3")
    }

    @Test func nilEncodingAppliesToEveryOptionalPrimitiveMember() throws {
        struct AllOptionals: Encodable {
            var bool: Bool?, string: String?, double: Double?, float: Float?, int: Int?, int8: Int8?
            var int16: Int16?, int32: Int32?, int64: Int64?, uint: UInt?, uint8: UInt8?, uint16: UInt16?
            var uint32: UInt32?, uint64: UInt64?, nested: [Int]?
        }
        let form = try Self.form(AllOptionals(), with: URLEncodedFormEncoder(nilEncoding: .null))

        #expect(form.split(separator: "&").count == 15)
        #expect(form.split(separator: "&").allSatisfy { $0.hasSuffix("=null") })
        #expect(try Self.form(AllOptionals(bool: true, uint64: 7)) == "bool=1&uint64=7")
    }

    @Test func spaceEncodingsWritePercentTwentyOrPlus() throws {
        let value = ["a key": "a value+"]

        #expect(try Self.form(value) == "a%20key=a%20value%2B")
        #expect(try Self.form(value, with: URLEncodedFormEncoder(spaceEncoding: .plusReplaced)) == "a+key=a+value%2B")
    }

    @Test func everySpaceIsEncodedAtTheEdgesAndInRuns() throws {
        let value = [" k": "  v  w "]

        #expect(try Self.form(value) == "%20k=%20%20v%20%20w%20")
        #expect(try Self.form(value, with: URLEncodedFormEncoder(spaceEncoding: .plusReplaced)) == "+k=++v++w+")
    }

    @Test func allowedCharactersControlEscaping() throws {
        let value = ["k": "a/b?c:d[e]"]
        let encoder = URLEncodedFormEncoder()

        #expect(try Self.form(value, with: encoder) == "k=a/b?c%3Ad%5Be%5D")
        encoder.allowedCharacters = .alphanumerics
        #expect(try Self.form(value, with: encoder) == "k=a%2Fb%3Fc%3Ad%5Be%5D")
        #expect(URLEncodedFormEncoder().allowedCharacters == .afURLQueryAllowed)
    }

    // MARK: Keys

    @Test func keyEncodingsTransformTheFullKey() throws {
        let value = ["someKey": ["innerKey": 1]]
        func form(_ encoding: URLEncodedFormEncoder.KeyEncoding) throws -> String {
            try Self.form(value, with: URLEncodedFormEncoder(keyEncoding: encoding, keyPathEncoding: .dots))
        }

        #expect(try form(.useDefaultKeys) == "someKey.innerKey=1")
        #expect(try form(.convertToSnakeCase) == "some_key.inner_key=1")
        #expect(try form(.convertToKebabCase) == "some-key.inner-key=1")
        #expect(try form(.capitalized) == "SomeKey.innerKey=1")
        #expect(try form(.uppercased) == "SOMEKEY.INNERKEY=1")
        #expect(try form(.lowercased) == "somekey.innerkey=1")
        #expect(try form(.custom { "x_" + $0 }) == "x_someKey.innerKey=1")
    }

    @Test(arguments: [
        ("myProperty", "my_property"), ("myURLProperty", "my_url_property"), ("myURL", "my_url"),
        ("simple", "simple"), ("a", "a"), ("", ""), ("version2Beta", "version2_beta"),
        ("already_snake", "already_snake"), ("URLValue", "u_rl_value"), ("aBC", "a_bc"),
    ])
    func snakeCaseSplitsWordsLikeAlamofire(key: String, expected: String) {
        #expect(URLEncodedFormEncoder.KeyEncoding.convertToSnakeCase.encode(key) == expected)
        #expect(URLEncodedFormEncoder.KeyEncoding.convertToKebabCase.encode(key)
            == expected.replacingOccurrences(of: "_", with: "-").replacingOccurrences(of: "already-snake", with: "already_snake"))
    }

    // MARK: Errors and Encodable edge cases

    @Test func nonKeyedRootValuesThrowInvalidRootObject() {
        for value in ["text", 1, [1, 2]] as [any Encodable] {
            let error = #expect(throws: URLEncodedFormEncoder.Error.self) { try Self.form(value) }
            guard case let .invalidRootObject(description)? = error else {
                Issue.record("expected .invalidRootObject for \(value)")
                continue
            }
            #expect(!description.isEmpty)
        }
    }

    @Test func singleValueContainerRejectsASecondValue() {
        struct Twice: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode("a")
                try container.encode("b")
            }
        }

        let error = #expect(throws: EncodingError.self) { try Self.form(Wrapper(value: Twice())) }
        guard case let .invalidValue(_, context)? = error else {
            Issue.record("expected .invalidValue")
            return
        }
        #expect(context.codingPath.map(\.stringValue) == ["value"])
    }

    @Test func subclassMembersJoinTheSuperclassMembersThroughSuperEncoder() throws {
        class Base: Encodable {
            let base = 1
        }
        final class Derived: Base, @unchecked Sendable {
            enum CodingKeys: String, CodingKey { case derived }
            let derived = 2
            override func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(derived, forKey: .derived)
                try super.encode(to: container.superEncoder())
            }
        }

        #expect(try Self.form(Derived()) == "base=1&derived=2")
    }

    @Test func customContainersNestAndRepeatKeys() throws {
        struct Manual: Encodable {
            enum Keys: String, CodingKey { case object, list, repeated, sup }
            enum Inner: String, CodingKey { case leaf }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                var object = container.nestedContainer(keyedBy: Inner.self, forKey: .object)
                try object.encode("v", forKey: .leaf)
                var list = container.nestedUnkeyedContainer(forKey: .list)
                try list.encode(1)
                var inList = list.nestedContainer(keyedBy: Inner.self)
                try inList.encode(true, forKey: .leaf)
                var listInList = list.nestedUnkeyedContainer()
                try listInList.encode("x")
                try list.encodeNil()
                // The array's super encoder writes where the array is, as in Alamofire: a value
                // encoded through it replaces the array.
                try "s".encode(to: list.superEncoder())
                #expect(list.count == 4)
                try container.encode("first", forKey: .repeated)
                try container.encode("second", forKey: .repeated)
                try 5.encode(to: container.superEncoder(forKey: .sup))
            }
        }
        let encoder = URLEncodedFormEncoder(alphabetizeKeyValuePairs: false, arrayEncoding: .indexInBrackets,
                                            keyPathEncoding: .dots)

        #expect(try Self.form(Manual(), with: encoder)
            == "object.leaf=v&list=s&repeated=second&sup=5")
    }

    /// Alamofire's `ManuallyEncodableSubclass`: a subclass that encodes through every kind of
    /// super encoder, with the expected form of Alamofire's own tests.
    @Test(arguments: [false, true])
    func manuallyEncodableSubclassEncodesThroughItsSuperEncoders(indexInBrackets: Bool) throws {
        class Superclass: Encodable {
            let one = "one"
            let two = 2
            let three = true
        }
        final class ManuallyEncodable: Superclass, @unchecked Sendable {
            enum CodingKeys: String, CodingKey { case four, five }
            let four = [1, 2, 3]
            let five = ["a": "a", "b": "b"]
            override func encode(to encoder: any Encoder) throws {
                var keyed = encoder.container(keyedBy: CodingKeys.self)
                try keyed.encode(four, forKey: .four)
                try keyed.encode(five, forKey: .five)

                var superContainer = keyed.superEncoder().container(keyedBy: CodingKeys.self)
                try superContainer.encode(one, forKey: .four)

                var superKeyedContainer = keyed.superEncoder(forKey: .four).container(keyedBy: CodingKeys.self)
                try superKeyedContainer.encode(two, forKey: .five)

                var unkeyed = keyed.nestedUnkeyedContainer(forKey: .four)
                var unkeyedSuperContainer = unkeyed.superEncoder().container(keyedBy: CodingKeys.self)
                try unkeyedSuperContainer.encode(one, forKey: .four)
            }
        }

        let encoder = URLEncodedFormEncoder(arrayEncoding: indexInBrackets ? .indexInBrackets : .brackets)
        #expect(try Self.form(ManuallyEncodable(), with: encoder)
            == "five%5Ba%5D=a&five%5Bb%5D=b&four%5Bfive%5D=2&four%5Bfour%5D=one")
    }

    @Test func encoderReportsNoUserInfoAndIndexCodingPaths() throws {
        struct Probe: Encodable {
            func encode(to encoder: any Encoder) throws {
                #expect(encoder.userInfo.isEmpty)
                var list = encoder.unkeyedContainer()
                try list.encode(PathRecorder())
            }
        }
        struct PathRecorder: Encodable {
            func encode(to encoder: any Encoder) throws {
                #expect(encoder.codingPath.map(\.stringValue) == ["value", "0"])
                #expect(encoder.codingPath.last?.intValue == 0)
                try "x".encode(to: encoder)
            }
        }

        #expect(try Self.form(Wrapper(value: Probe())) == "value%5B%5D=x")
        #expect(URLEncodedFormIndexKey(stringValue: "3")?.intValue == 3)
        #expect(URLEncodedFormIndexKey(stringValue: "x") == nil)
        #expect(URLEncodedFormIndexKey(intValue: 2)?.stringValue == "2")
    }

    @Test func strategyEnumsCompareByCase() {
        #expect(URLEncodedFormEncoder.BoolEncoding.numeric == .numeric)
        #expect(URLEncodedFormEncoder.BoolEncoding.numeric != .literal)
        #expect(URLEncodedFormEncoder.SpaceEncoding.plusReplaced.hashValue == URLEncodedFormEncoder.SpaceEncoding.plusReplaced.hashValue)
    }
}
