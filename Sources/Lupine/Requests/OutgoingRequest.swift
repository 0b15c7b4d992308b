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
    /// Whether `headerFields` are the Session's alone (`base` has none of its own), which the
    /// Session checked once: then `sessionFieldsProblem` is what checking them finds.
    private let sendsSessionFieldsAlone: Bool
    private let sessionFieldsProblem: AFError?
    private let merged = Mutex<URLRequest?>(nil)

    /// `base` as it goes on the wire, given the Session's fields in the order they are added.
    /// `sessionFieldsProblem` is what `URLRequest.lupineValidateHeaderFields` throws for
    /// `sessionFieldsAlone`, if anything.
    init(base: URLRequest, adding sessionFields: [(name: String, value: String)], sessionFieldsAlone: [String: String],
         sessionFieldsProblem: AFError? = nil) {
        self.base = base
        let own = base.allHTTPHeaderFields ?? [:]
        if sessionFields.isEmpty {
            (headerFields, addsFields) = (own, false)
        } else if own.isEmpty {
            (headerFields, addsFields) = (sessionFieldsAlone, true)
        } else if let fields = Self.fields(own, adding: sessionFields) {
            (headerFields, addsFields) = (fields, true)
        } else {
            (headerFields, addsFields) = (own, false)
        }
        sendsSessionFieldsAlone = !sessionFields.isEmpty && own.isEmpty
        self.sessionFieldsProblem = sendsSessionFieldsAlone ? sessionFieldsProblem : nil
    }

    /// Throws `createURLRequestFailed` for the first field sent (by name) that may not be sent.
    /// The Session's fields alone were checked when the Session was made (checking three fields
    /// cost each GET some 0.6 µs).
    func validateHeaderFields() throws {
        guard sendsSessionFieldsAlone else { return try URLRequest.lupineValidateHeaderFields(headerFields) }
        if let sessionFieldsProblem { throw sessionFieldsProblem }
    }

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
