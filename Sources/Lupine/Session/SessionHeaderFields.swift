import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A Session's `httpAdditionalHeaders`, read once as URLSession reads its configuration, in each
/// form a hop needs them.
///
/// Most requests set no header field of their own and send these alone: what a hop would derive
/// from them (their check, their order on the wire, what they ask of the cache) is derived here
/// once, not on every hop.
final class SessionHeaderFields: Sendable {
    /// The fields, in the order they are added to a request's own fields.
    let ordered: [(name: String, value: String)]
    /// The fields of a request that has none of its own.
    let dictionary: [String: String]
    /// `dictionary` as the transport sends it, sorted by name ignoring ASCII case (as every
    /// request's fields are sorted for the transport).
    let sortedForTransport: [HTTPHeader]
    /// What `URLRequest.lupineValidateHeaderFields` throws for `dictionary`, if anything.
    let problem: AFError?
    /// Whether `dictionary` asks the cache for `only-if-cached`.
    let asksOnlyIfCached: Bool

    /// - Parameter additionalHeaders: The configuration's `httpAdditionalHeaders`; keys that are
    ///   not strings are left out, as URLSession leaves them out.
    init(_ additionalHeaders: [AnyHashable: Any]?) {
        ordered = (additionalHeaders ?? [:])
            .compactMap { key, value in (key as? String).map { (name: $0, value: "\(value)") } }
            .sorted { $0.name < $1.name }
        dictionary = OutgoingRequest.fields([:], adding: ordered) ?? [:]
        sortedForTransport = Self.sortedForTransport(dictionary)
        problem = Self.problem(dictionary)
        asksOnlyIfCached = HTTPCacheRules.asksOnlyIfCached(dictionary)
    }

    /// `fields` in the order the transport sends every request's fields.
    static func sortedForTransport(_ fields: [String: String], reservingCapacity extra: Int = 0) -> [HTTPHeader] {
        var sorted: [HTTPHeader] = []
        sorted.reserveCapacity(fields.count + extra)
        for (name, value) in fields { sorted.append(HTTPHeader(name: name, value: value)) }
        sorted.sort { precedesIgnoringASCIICase($0.name, $1.name) }
        return sorted
    }

    /// What `URLRequest.lupineValidateHeaderFields` throws for `fields`, if anything.
    static func problem(_ fields: [String: String]) -> AFError? {
        do {
            try URLRequest.lupineValidateHeaderFields(fields)
            return nil
        } catch {
            return error.asAFError ?? .createURLRequestFailed(error: error)
        }
    }

    /// Whether `lhs` sorts before `rhs` when both are lowercased (ASCII), without lowercasing them.
    private static func precedesIgnoringASCIICase(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator(), right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return false
            case (nil, _): return true
            case (_, nil): return false
            case let (leftByte?, rightByte?):
                let leftLower = (0x41...0x5A).contains(leftByte) ? leftByte | 0x20 : leftByte
                let rightLower = (0x41...0x5A).contains(rightByte) ? rightByte | 0x20 : rightByte
                if leftLower != rightLower { return leftLower < rightLower }
            }
        }
    }
}
