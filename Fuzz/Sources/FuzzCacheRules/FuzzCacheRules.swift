import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
@testable import Lupine

/// `Cache-Control` and `Vary` as the HTTP cache applies them (RFC 9111), on arbitrary header fields.
///
/// - No input crashes; ages, lifetimes and delta-seconds are never negative or NaN.
/// - `no-store` (request or response) is never stored nor answered from the store; a method other
///   than GET always loads; the reload policies always load.
/// - Vary: a request selects the variant stored for it, and a request that differs in a header
///   field `Vary` names (beyond white space) does not; `Vary: *` is never stored.
/// - A 304 update keeps the stored content's framing fields and takes the others.
/// - The memory tier stays within its capacity and its count matches its keys.
@main
enum FuzzCacheRulesMain {
    static func main() {
        exit(runFuzzer(fuzzCacheRules))
    }
}

let fieldNames = ["Cache-Control", "cache-control", "Vary", "VARY", "Expires", "Date", "Last-Modified", "ETag", "Age",
                  "Pragma", "Accept", "Accept-Language", "accept-encoding", "X-Variant", "Content-Length"]
let directiveWords = ["max-age", "s-maxage", "no-cache", "no-store", "private", "public", "must-revalidate", "max-stale",
                      "min-fresh", "only-if-cached", "immutable", "stale-while-revalidate", "MAX-AGE", "No-Store"]
let dates = ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
             "Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "0", "-1", "garbage", ""]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCacheRules(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    switch input.byte() % 3 {
    case 0: checkRules(&input)
    case 1: checkVary(&input)
    default: checkMemoryTier(&input)
    }
    return 0
}

/// A Cache-Control value from directive words, arguments and separators, or arbitrary text.
func cacheControlValue(_ input: inout FuzzInput) -> String {
    guard input.bool() else { return input.string() }
    var parts: [String] = []
    for _ in 0..<Int(input.byte() % 4 + 1) {
        var part = directiveWords[Int(input.byte()) % directiveWords.count]
        switch input.byte() % 6 {
        case 0: part += "=\(input.byte())"
        case 1: part += "=\"\(Int(Int8(bitPattern: input.byte())))\""
        case 2: part += "=" + String(repeating: "9", count: Int(input.byte() % 40))
        case 3: part += "=" + input.string()
        default: break
        }
        parts.append(part)
    }
    return parts.joined(separator: [",", ", ", " ,", ",,"][Int(input.byte()) % 4])
}

func headerFields(_ input: inout FuzzInput) -> [String: String] {
    var fields: [String: String] = [:]
    for _ in 0..<Int(input.byte() % 6) {
        let name = fieldNames[Int(input.byte()) % fieldNames.count]
        // Header fields arrive with one value per name, whatever its case.
        if let other = fields.keys.first(where: { $0.lowercased() == name.lowercased() }) { fields[other] = nil }
        switch name.lowercased() {
        case "cache-control", "pragma": fields[name] = cacheControlValue(&input)
        case "expires", "date", "last-modified": fields[name] = input.bool() ? dates[Int(input.byte()) % dates.count] : input.string()
        case "age":
            let odd = ["1e20", "inf", "nan", "-5", " 7 ", "99999999999999999999", "0x10"]
            switch input.byte() % 3 {
            case 0: fields[name] = String(Int(Int16(bitPattern: UInt16(input.byte()) << 8)))
            case 1: fields[name] = odd[Int(input.byte()) % odd.count]
            default: fields[name] = input.string()
            }
        default: fields[name] = input.string()
        }
    }
    return fields
}

func checkNumber(_ value: TimeInterval, _ what: String, _ context: @autoclosure () -> String) {
    fuzzRequire(!value.isNaN && value >= 0, "\(what) is \(value) for \(context())")
}

let policies: [URLRequest.CachePolicy] = [.useProtocolCachePolicy, .reloadIgnoringLocalCacheData, .returnCacheDataElseLoad,
                                          .returnCacheDataDontLoad, .reloadRevalidatingCacheData]

func checkRules(_ input: inout FuzzInput) {
    let requestHeaders = headerFields(&input)
    let responseHeaders = headerFields(&input)
    let status = [200, 203, 204, 206, 301, 304, 404, 410, 500, 999][Int(input.byte()) % 10]
    let method = ["GET", "get", "POST", "HEAD"][Int(input.byte()) % 4]
    let requestTime = Date(timeIntervalSince1970: 1_000_000_000)
    let responseTime = requestTime.addingTimeInterval(Double(input.byte()))
    let now = responseTime.addingTimeInterval(Double(Int16(bitPattern: UInt16(input.byte()) << 8 | UInt16(input.byte()))))
    let policy = policies[Int(input.byte()) % policies.count]

    let control = CacheControl([cacheControlValue(&input), cacheControlValue(&input)])
    for name in ["max-age", "s-maxage", "max-stale", "min-fresh", "stale-while-revalidate"] {
        if case let .seconds(seconds) = control.seconds(name) { checkNumber(seconds, name, "\(control)") }
    }

    let storable = HTTPCacheRules.isStorable(method: method, requestHeaders: requestHeaders, statusCode: status,
                                             responseHeaders: responseHeaders)
    let requestControl = HTTPCacheRules.cacheControl(requestHeaders)
    let responseControl = HTTPCacheRules.cacheControl(responseHeaders)
    if requestControl.has("no-store") || responseControl.has("no-store") || method.uppercased() != "GET" {
        fuzzRequire(!storable, "stored despite no-store or \(method): \(requestHeaders) \(responseHeaders)")
    }
    if HTTPCacheRules.varyNames(responseHeaders) == nil {
        fuzzRequire(!storable, "Vary: * stored")
    }

    let varyValues = HTTPCacheRules.varyValues(responseHeaders: responseHeaders, requestHeaders: requestHeaders)
    let entry = HTTPCacheEntry(statusCode: status, headerFields: responseHeaders, requestTime: requestTime,
                               responseTime: responseTime, varyValues: varyValues)
    checkNumber(entry.freshnessLifetime, "freshness lifetime", "\(responseHeaders)")
    checkNumber(entry.correctedInitialAge, "initial age", "\(responseHeaders)")
    if now >= responseTime { checkNumber(HTTPCacheRules.currentAge(entry, now: now), "current age", "\(responseHeaders)") }

    // The head a cache hit delivers, with its Age field.
    let head = StoredResponse(entry: entry, data: Data(), storagePolicy: .allowed).head(at: now)
    fuzzRequire(head.headerFields.filter { $0.name.lowercased() == "age" }.count == 1, "Age fields \(head.headerFields)")

    let decision = HTTPCacheRules.decision(method: method, requestHeaders: requestHeaders, policy: policy, stored: entry, now: now)
    if method.uppercased() != "GET" || policy == .reloadIgnoringLocalCacheData {
        fuzzRequire(decision == .load, "\(method) with \(policy) decided \(decision)")
    }
    if responseControl.has("no-store") || (policy == .useProtocolCachePolicy && requestControl.has("no-store")) {
        fuzzRequire(decision != .useStored, "a no-store response was used: \(requestHeaders) \(responseHeaders)")
    }
    if case let .revalidate(fields) = decision {
        fuzzRequire(!fields.isEmpty, "revalidation without a validator")
        for field in fields {
            fuzzRequire(["If-None-Match", "If-Modified-Since"].contains(field.name), "conditional field \(field.name)")
            fuzzRequire(field.value == entry.header(field.name == "If-None-Match" ? "ETag" : "Last-Modified"),
                        "\(field.name) is not the stored validator")
        }
    }
    if policy == .returnCacheDataDontLoad, method.uppercased() == "GET" { fuzzRequire(decision == .useStored || decision == .fail, "\(decision) without loading") }

    let notModified = headerFields(&input)
    let updated = HTTPCacheRules.updated(entry, with: notModified, requestTime: requestTime, responseTime: responseTime)
    for (name, value) in notModified {
        let kept = HTTPCacheRules.fieldsKeptOnUpdate.contains(name.lowercased())
        if !kept {
            fuzzRequire(updated.header(name) == value, "304 field \(name) not taken")
            fuzzRequire(updated.headerFields.keys.filter { $0.lowercased() == name.lowercased() }.count == 1,
                        "\(name) twice after the update")
        } else if let stored = entry.header(name) {
            fuzzRequire(updated.header(name) == stored, "304 replaced \(name)")
        }
    }
}

func checkVary(_ input: inout FuzzInput) {
    let varied = ["Accept", "accept-language", "X-Variant", "Cookie"]
    var names: [String] = []
    for _ in 0..<Int(input.byte() % 3 + 1) { names.append(varied[Int(input.byte()) % varied.count]) }
    let star = input.byte() % 8 == 0
    let vary = star ? "*" : names.map { input.bool() ? $0.uppercased() : $0 }.joined(separator: input.bool() ? "," : " , ")
    let responseHeaders = ["Vary": vary, "Cache-Control": "max-age=60"]
    var first: [String: String] = [:]
    for name in varied where input.bool() { first[input.bool() ? name : name.lowercased()] = input.string() }
    let varyValues = HTTPCacheRules.varyValues(responseHeaders: responseHeaders, requestHeaders: first)
    let entry = HTTPCacheEntry(statusCode: 200, headerFields: responseHeaders, requestTime: Date(), responseTime: Date(),
                               varyValues: varyValues)
    let storable = HTTPCacheRules.isStorable(method: "GET", requestHeaders: first, statusCode: 200, responseHeaders: responseHeaders)
    if star {
        fuzzRequire(!storable, "Vary: * was storable")
        fuzzRequire(!HTTPCacheRules.varyMatches(entry, requestHeaders: first), "Vary: * matched")
        return
    }
    fuzzRequire(storable, "a max-age response with Vary \(vary) was not storable")
    fuzzRequire(HTTPCacheRules.varyMatches(entry, requestHeaders: first), "the request does not select its own variant: \(vary) \(first)")
    // Its header fields spelled differently (name case, runs of spaces) still select it.
    var respelled: [String: String] = [:]
    for (name, value) in first { respelled[name.uppercased()] = value.replacingOccurrences(of: " ", with: "  ") }
    fuzzRequire(HTTPCacheRules.varyMatches(entry, requestHeaders: respelled), "respelled \(respelled) does not select \(first)")

    // Another request, differing in one varied field.
    let changed = names[Int(input.byte()) % names.count]
    var second = first.filter { $0.key.lowercased() != changed.lowercased() }
    let previous = first.first { $0.key.lowercased() == changed.lowercased() }?.value
    let replacement: String? = input.bool() ? input.string() : nil
    if let replacement { second[changed] = replacement }
    let squeeze = { (text: String?) in text.map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ") } }
    let differs = squeeze(previous) != squeeze(replacement)
    fuzzRequire(HTTPCacheRules.varyMatches(entry, requestHeaders: second) == !differs,
                "Vary \(vary): \(first) vs \(second) matched \(!differs ? "not" : "")")
}

func checkMemoryTier(_ input: inout FuzzInput) {
    let memory = HTTPCacheMemory()
    let capacity = Int(input.byte()) * 64
    guard let markerURL = URL(string: "http://127.0.0.1:9/"), let marker = URLCacheMarker(url: markerURL) else { return }
    var live: Set<String> = []
    for _ in 0..<Int(input.byte() % 32) {
        let key = HTTPCacheKey(string: "k\(input.byte() % 8)")
        switch input.byte() % 4 {
        case 0, 1:
            let body = Data(count: Int(input.byte()))
            let entry = HTTPCacheEntry(statusCode: 200, headerFields: ["Cache-Control": "max-age=60"], requestTime: Date(),
                                       responseTime: Date(), varyValues: [:])
            let response = StoredResponse(entry: entry, data: body, storagePolicy: .allowed)
            memory.set([response], for: key, marker: marker, capacity: capacity)
            live.insert(key.string)
        case 2:
            memory.remove(key)
            live.remove(key.string)
        default:
            _ = memory.node(for: key)
        }
        fuzzRequire(memory.totalCost <= capacity, "memory tier holds \(memory.totalCost) of \(capacity)")
        fuzzRequire(memory.count <= live.count, "memory tier holds \(memory.count) keys, \(live.count) stored")
    }
    memory.evict(toFit: 0)
    fuzzRequire(memory.count == 0 && memory.totalCost == 0, "evicting everything left \(memory.count) keys")
}
