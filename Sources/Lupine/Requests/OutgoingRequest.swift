import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The URLRequest a hop sends: the request as adapted, and the header fields that go on the wire
/// (its own, with the Session's `httpAdditionalHeaders` it does not set itself).
///
/// The URLRequest with those fields merged in is made only when something reads it
/// (`performedRequests`, a task's `currentRequest`, a monitor, a redirect, challenge, cache or
/// URLProtocol): merging copies the whole Foundation request, four allocations and about 3% of a
/// small GET's user time, and the transport, the cache lookup and the header checks need only
/// the fields.
final class OutgoingRequest: Sendable {
    /// The request as adapted, without the Session's fields.
    let base: URLRequest
    /// The header fields sent.
    let headerFields: [String: String]
    /// Whether `headerFields` holds fields `base` does not.
    private let addsFields: Bool
    /// The Session's fields when `headerFields` are theirs alone (`base` has none of its own):
    /// then what a hop derives from them was derived once, when the Session was made.
    private let sessionFieldsAlone: SessionHeaderFields?
    private let merged = Mutex<URLRequest?>(nil)

    /// `base` as it goes on the wire, with the Session's fields it does not set itself.
    init(base: URLRequest, sessionFields: SessionHeaderFields) {
        self.base = base
        let own = base.allHTTPHeaderFields ?? [:]
        if own.isEmpty {
            (headerFields, addsFields) = (sessionFields.dictionary, !sessionFields.dictionary.isEmpty)
            sessionFieldsAlone = sessionFields
        } else if let fields = Self.fields(own, adding: sessionFields.ordered) {
            (headerFields, addsFields, sessionFieldsAlone) = (fields, true, nil)
        } else {
            (headerFields, addsFields, sessionFieldsAlone) = (own, false, nil)
        }
    }

    /// Throws `createURLRequestFailed` for the first field sent (by name) that may not be sent.
    /// The Session's fields alone were checked when the Session was made (checking three fields
    /// cost each GET some 0.6 µs).
    func validateHeaderFields() throws {
        guard let sessionFieldsAlone else { return try URLRequest.lupineValidateHeaderFields(headerFields) }
        if let problem = sessionFieldsAlone.problem { throw problem }
    }

    /// `headerFields` sorted as the transport sends them, when the Session sorted them once
    /// (they are its own alone); nil when the hop sorts its own.
    var sortedSessionFields: [HTTPHeader]? { sessionFieldsAlone?.sortedForTransport }

    /// Whether the fields sent ask the cache for `only-if-cached`, when the Session found it once
    /// (they are its own alone); nil when only reading them tells.
    var knownToAskOnlyIfCached: Bool? { sessionFieldsAlone?.asksOnlyIfCached }

    var url: URL? { base.url }

    /// The request as sent, with the Session's fields merged in (made on first read).
    var urlRequest: URLRequest {
        guard addsFields else { return base }
        return merged.withLock { merged in
            if let merged { return merged }
            // Assigned as a whole: `setValue` would silently drop a value holding CR or LF on
            // Linux, and such a value must fail validation instead.
            var request = base
            request.allHTTPHeaderFields = headerFields
            merged = request
            return request
        }
    }

    /// `fields` with each of `additions` whose name it lacks (ignoring ASCII case), or nil when
    /// it lacks none.
    static func fields(_ fields: [String: String], adding additions: [(name: String, value: String)]) -> [String: String]? {
        var fields = fields
        var added = false
        for field in additions where !fields.keys.contains(where: { $0.lupineEqualsIgnoringASCIICase(field.name) }) {
            fields[field.name] = field.value
            added = true
        }
        return added ? fields : nil
    }
}
