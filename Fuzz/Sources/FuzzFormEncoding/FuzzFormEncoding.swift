import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
import Lupine

/// URL form encoding: `URLEncodedFormEncoder` with every strategy over an arbitrary tree of
/// values must not crash and must emit only characters allowed in a query; a flat dictionary
/// encoded with the defaults, and `URLEncoding` of a request, must decode back to the input.
@main
enum FuzzFormEncodingMain {
    static func main() {
        exit(runFuzzer(fuzzFormEncoding))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFormEncoding(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    switch input.byte() % 3 {
    case 0: checkFlatRoundTrip(&input)
    case 1: checkTreeEncoding(&input)
    default: checkURLEncoding(&input)
    }
    return 0
}

/// A value of any shape the form encoder accepts.
indirect enum FormValue: Encodable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case double(Double)
    case data([UInt8])
    case null
    case array([FormValue])
    case object([String: FormValue])

    static func read(_ input: inout FuzzInput, depth: Int = 0) -> FormValue {
        let kind = input.byte() % (depth > 3 ? 6 : 8)
        switch kind {
        case 0: return .string(input.string())
        case 1: return .int(Int(Int8(bitPattern: input.byte())) * Int(input.byte()))
        case 2: return .bool(input.bool())
        case 3: return .double(Double(Int8(bitPattern: input.byte())) / 3)
        case 4: return .data(input.chunk())
        case 5: return .null
        case 6: return .array((0..<Int(input.byte() % 4)).map { _ in read(&input, depth: depth + 1) })
        default: return .object(readObject(&input, depth: depth + 1))
        }
    }

    static func readObject(_ input: inout FuzzInput, depth: Int = 0) -> [String: FormValue] {
        var object: [String: FormValue] = [:]
        for _ in 0..<Int(input.byte() % 5) {
            object[input.string()] = read(&input, depth: depth)
        }
        return object
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case let .string(value): var c = encoder.singleValueContainer(); try c.encode(value)
        case let .int(value): var c = encoder.singleValueContainer(); try c.encode(value)
        case let .bool(value): var c = encoder.singleValueContainer(); try c.encode(value)
        case let .double(value): var c = encoder.singleValueContainer(); try c.encode(value)
        case let .data(value): var c = encoder.singleValueContainer(); try c.encode(Data(value))
        case .null: var c = encoder.singleValueContainer(); try c.encodeNil()
        case let .array(values):
            var c = encoder.unkeyedContainer()
            for value in values { try c.encode(value) }
        case let .object(values):
            var c = encoder.container(keyedBy: Key.self)
            for (key, value) in values { try c.encode(value, forKey: Key(stringValue: key)) }
        }
    }
}

/// `a=1&b=2` back to pairs, percent-decoding both sides.
func decodePairs(_ query: String) -> [String: String]? {
    guard !query.isEmpty else { return [:] }
    var pairs: [String: String] = [:]
    for item in query.split(separator: "&", omittingEmptySubsequences: false) {
        let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let key = parts[0].removingPercentEncoding,
              let value = parts[1].removingPercentEncoding
        else { return nil }
        pairs[key] = value
    }
    return pairs
}

func checkFlatRoundTrip(_ input: inout FuzzInput) {
    var dictionary: [String: String] = [:]
    for _ in 0..<Int(input.byte() % 5) { dictionary[input.string()] = input.string() }
    guard let query: String = try? URLEncodedFormEncoder().encode(dictionary) else {
        fuzzRequire(false, "a [String: String] failed to encode: \(dictionary)")
        return
    }
    fuzzRequire(decodePairs(query) == dictionary, "round trip of \(dictionary) gave \(query)")
}

func checkTreeEncoding(_ input: inout FuzzInput) {
    let options = input.byte()
    let encoder = URLEncodedFormEncoder(
        alphabetizeKeyValuePairs: options & 1 == 0,
        arrayEncoding: [.brackets, .noBrackets, .indexInBrackets][Int(options >> 1) % 3],
        boolEncoding: options & 8 == 0 ? .numeric : .literal,
        keyEncoding: [.useDefaultKeys, .convertToSnakeCase, .convertToKebabCase, .capitalized, .uppercased,
                      .lowercased][Int(options >> 4) % 6],
        nilEncoding: options & 64 == 0 ? .dropKey : .null,
        spaceEncoding: options & 128 == 0 ? .percentEscaped : .plusReplaced)
    let tree = FormValue.readObject(&input)
    guard let query: String = try? encoder.encode(tree) else { return }
    let allowed = CharacterSet.afURLQueryAllowed.union(CharacterSet(charactersIn: "&=%+[]"))
    fuzzRequire(query.unicodeScalars.allSatisfy { allowed.contains($0) }, "unescaped character in \(query)")
}

func checkURLEncoding(_ input: inout FuzzInput) {
    var parameters: [String: String] = [:]
    for _ in 0..<Int(input.byte() % 4) { parameters[input.string()] = input.string() }
    let existingQuery = input.bool() ? "?x=1" : ""
    guard let url = URL(string: "http://example.com/path\(existingQuery)") else { return }
    do {
        let request = try URLEncoding.queryString.encode(URLRequest(url: url), with: parameters)
        if parameters.isEmpty {
            fuzzRequire(request.url == url, "URLEncoding changed the URL without parameters")
            return
        }
        guard let query = request.url.flatMap({ URLComponents(url: $0, resolvingAgainstBaseURL: false) })?.percentEncodedQuery
        else {
            fuzzRequire(false, "URLEncoding produced no URL/query for \(parameters)")
            return
        }
        var decoded = decodePairs(query)
        if !existingQuery.isEmpty { decoded?.removeValue(forKey: "x") }
        if !existingQuery.isEmpty, parameters["x"] != nil { return }
        fuzzRequire(parameters.isEmpty || decoded == parameters, "URLEncoding of \(parameters) gave \(query)")
    } catch {
        fuzzRequire(false, "URLEncoding threw \(error) for \(parameters)")
    }
}
