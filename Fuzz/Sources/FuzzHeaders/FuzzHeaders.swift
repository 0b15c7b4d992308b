import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
@testable import Lupine

/// Header handling: the checks that run before a request is sent never let CR, LF or NUL (or a name
/// that is not a token) through; `HTTPHeaders` keeps its case-insensitive invariants; the
/// `Cache-Control` and HTTP-date parsers never crash and a parsed date survives a round trip.
@main
enum FuzzHeadersMain {
    static func main() {
        exit(runFuzzer(fuzzHeaders))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeaders(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    switch input.byte() % 4 {
    case 0: checkSendingChecks(&input)
    case 1: checkHeaderCollection(&input)
    case 2: checkCacheControl(&input)
    default: checkHTTPDate(&input)
    }
    return 0
}

func isForbiddenInValue(_ byte: UInt8) -> Bool { byte == 0x0D || byte == 0x0A || byte == 0 }

func checkSendingChecks(_ input: inout FuzzInput) {
    guard let url = URL(string: "http://127.0.0.1/") else { return }
    var request = URLRequest(url: url)
    request.httpMethod = input.bool() ? input.string() : "GET"
    var fields: [String: String] = [:]
    for _ in 0..<Int(input.byte() % 4) { fields[input.string()] = input.string() }
    request.allHTTPHeaderFields = fields
    do {
        try request.lupineValidateForSending()
        let method = request.httpMethod ?? "GET"
        fuzzRequire(!method.isEmpty && !method.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }),
                    "method \(method.debugDescription) passed the checks")
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            fuzzRequire(!name.isEmpty && !name.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: ":") }),
                        "name \(name.debugDescription) passed the checks")
            fuzzRequire(!value.utf8.contains(where: isForbiddenInValue), "value \(value.debugDescription) passed the checks")
        }
    } catch {
        guard let afError = error as? AFError, case .createURLRequestFailed = afError else {
            fuzzRequire(false, "the checks threw \(error)")
            return
        }
    }
}

func checkHeaderCollection(_ input: inout FuzzInput) {
    var headers = HTTPHeaders()
    for _ in 0..<Int(input.byte() % 8) {
        let name = input.string()
        let value = input.string()
        switch input.byte() % 4 {
        case 0:
            headers.add(name: name, value: value)
        case 1:
            headers.update(name: name, value: value)
            fuzzRequire(headers.value(for: name) == value, "update(\(name.debugDescription)) not read back")
            fuzzRequire(headers.value(for: name.lowercased()) == value || name.lowercased().count != name.count
                        || headers.filter({ $0.name.lowercased() == name.lowercased() }).count > 1,
                        "lowercased lookup of \(name.debugDescription) failed")
        case 2:
            headers.remove(name: name)
            fuzzRequire(headers.value(for: name) == nil, "remove(\(name.debugDescription)) left a value")
        default:
            headers.sort()
        }
    }
    let names = Set(headers.map { $0.name.lowercased() })
    fuzzRequire(headers.dictionary.count == names.count || headers.dictionary.count <= headers.count,
                "dictionary has \(headers.dictionary.count) keys for \(names.count) names")
    _ = headers.description
    _ = HTTPHeaders(headers.dictionary)
}

func checkCacheControl(_ input: inout FuzzInput) {
    var values: [String] = []
    for _ in 0..<Int(input.byte() % 3 + 1) { values.append(input.string()) }
    let control = CacheControl(values)
    for name in ["max-age", "s-maxage", "max-stale", "min-fresh", "stale-while-revalidate"] {
        if case let .seconds(seconds) = control.seconds(name) {
            fuzzRequire(seconds >= 0, "negative \(name) \(seconds)")
        }
    }
    _ = control.has("no-store")
}

func checkHTTPDate(_ input: inout FuzzInput) {
    let text = String(decoding: input.rest(), as: UTF8.self)
    guard let date = HTTPDate.parse(text) else { return }
    var calendar = Calendar(identifier: .gregorian)
    guard let utc = TimeZone(identifier: "UTC") else { return }
    calendar.timeZone = utc
    let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    guard let year = parts.year, let month = parts.month, let day = parts.day, let hour = parts.hour,
          let minute = parts.minute, let second = parts.second
    else {
        fuzzRequire(false, "no components for \(date) from \(text.debugDescription)")
        return
    }
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let formatted = "Sun, \(two(day)) \(months[month - 1]) \(year) \(two(hour)):\(two(minute)):\(two(second)) GMT"
    fuzzRequire(HTTPDate.parse(formatted) == date, "\(text.debugDescription) -> \(date) -> \(formatted) does not round-trip")
}
