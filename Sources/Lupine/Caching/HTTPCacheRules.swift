import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 9111 for a private cache (one user's client, as URLSession's), as pure functions of the
/// request, the stored entry and the current time: what may be stored, whether a stored response
/// is fresh, how it is revalidated, and how a 304 updates it. No I/O; tested alone.
enum HTTPCacheRules {
    /// What to do with a request before the network is used.
    enum Decision: Equatable {
        /// Send the request; nothing stored can answer it.
        case load
        /// Answer with the stored response; nothing is sent.
        case useStored
        /// Send the request with these conditional header fields; a 304 answer means the stored
        /// response is used (updated with the 304's header fields).
        case revalidate([HTTPHeader])
        /// Nothing stored answers the request and the policy forbids the network.
        case fail
    }

    /// Status codes a cache may store without explicit freshness (RFC 9110, section 15.1).
    static let heuristicallyCacheableStatusCodes: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Header fields a 304 never replaces in the stored response (they describe the stored
    /// content or the connection, not the representation).
    static let fieldsKeptOnUpdate: Set<String> = ["content-length", "content-encoding", "content-range",
                                                  "transfer-encoding", "connection", "keep-alive"]

    // MARK: Decision

    /// The decision for a request with `method`, `requestHeaders` and `policy`, given what is
    /// stored for its URL (nil for nothing), at `now`.
    static func decision(method: String,
                         requestHeaders: [String: String],
                         policy: URLRequest.CachePolicy,
                         stored: HTTPCacheEntry?,
                         now: Date) -> Decision {
        guard method.lupineEqualsIgnoringASCIICase("GET") else { return .load }
        let requestControl = cacheControl(requestHeaders)
        // An entry whose header fields say no-store is never used, whatever put it there.
        guard let entry = stored.flatMap({ !$0.forbidsStoring && varyMatches($0, requestHeaders: requestHeaders) ? $0 : nil }) else {
            return decisionWithoutStoredResponse(method: method, policy: policy, asksOnlyIfCached: requestControl.has("only-if-cached"))
        }
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return .load
        case .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            return .useStored
        case .reloadRevalidatingCacheData:
            return revalidateOrLoad(entry)
        case .useProtocolCachePolicy:
            break
        @unknown default:
            break
        }
        guard !requestControl.has("no-store") else {
            return requestControl.has("only-if-cached") ? .fail : .load
        }
        let decision = protocolDecision(entry, requestControl: requestControl, requestHeaders: requestHeaders, now: now)
        if requestControl.has("only-if-cached"), decision != .useStored { return .fail }
        return decision
    }

    private static func protocolDecision(_ entry: HTTPCacheEntry,
                                         requestControl: CacheControl,
                                         requestHeaders: [String: String],
                                         now: Date) -> Decision {
        let responseControl = entry.responseControl
        // `Pragma: no-cache` counts only when the request has no Cache-Control (RFC 9111, 5.4).
        let pragmaNoCache = value(of: "Cache-Control", in: requestHeaders) == nil
            && value(of: "Pragma", in: requestHeaders).map { $0.lowercased().contains("no-cache") } == true
        if requestControl.has("no-cache") || pragmaNoCache || responseControl.has("no-cache") {
            return revalidateOrLoad(entry)
        }
        let age = currentAge(entry, now: now)
        let lifetime = freshnessLifetime(entry)
        if let maximumAge = requestControl.seconds("max-age").value, age > maximumAge {
            return revalidateOrLoad(entry)
        }
        let minimumFresh = requestControl.seconds("min-fresh").value ?? 0
        if lifetime - age > minimumFresh { return .useStored }
        // max-stale lets a stale response through, unless the origin forbade it.
        let staleness = age - lifetime
        let forbidsStale = responseControl.has("must-revalidate") || responseControl.has("no-cache")
        if !forbidsStale, minimumFresh == 0, requestControl.has("max-stale") {
            // A bare max-stale accepts any staleness.
            let allowance = requestControl.seconds("max-stale").value ?? .infinity
            if staleness <= allowance { return .useStored }
        }
        return revalidateOrLoad(entry)
    }

    private static func revalidateOrLoad(_ entry: HTTPCacheEntry) -> Decision {
        let headers = conditionalHeaders(for: entry)
        return headers.isEmpty ? .load : .revalidate(headers)
    }

    // MARK: Storing

    /// Whether a response may be stored (RFC 9111, section 3) by a private cache.
    static func isStorable(method: String, requestHeaders: [String: String], statusCode: Int, responseHeaders: [String: String]) -> Bool {
        guard isStorableMethod(method), statusCode >= 200, statusCode != 206, statusCode != 304 else { return false }
        let requestControl = cacheControl(requestHeaders)
        let responseControl = cacheControl(responseHeaders)
        guard !requestControl.has("no-store"), !responseControl.has("no-store") else { return false }
        guard varyNames(responseHeaders) != nil else { return false }
        return heuristicallyCacheableStatusCodes.contains(statusCode)
            || responseControl.has("max-age") || responseControl.has("public") || responseControl.has("private")
            || value(of: "Expires", in: responseHeaders) != nil
    }

    /// Whether responses to `method` (nil for a URLRequest's default, GET) may be stored: GET only.
    static func isStorableMethod(_ method: String?) -> Bool {
        guard let method else { return true }
        return method.lupineEqualsIgnoringASCIICase("GET")
    }

    /// Whether a response carries explicit freshness (`max-age`, `s-maxage`, `Expires`) or a
    /// validator (`ETag`, `Last-Modified`): without any, a stored copy is never fresh and cannot be
    /// revalidated.
    static func hasFreshnessOrValidators(_ responseHeaders: [String: String]) -> Bool {
        let control = cacheControl(responseHeaders)
        return control.has("max-age") || control.has("s-maxage")
            || ["Expires", "ETag", "Last-Modified"].contains { value(of: $0, in: responseHeaders) != nil }
    }

    /// The request header values a stored response must be matched on: every name its `Vary`
    /// lists, with the value the request carried (absent when it carried none).
    static func varyValues(responseHeaders: [String: String], requestHeaders: [String: String]) -> [String: String] {
        var values: [String: String] = [:]
        for name in varyNames(responseHeaders) ?? [] {
            if let value = value(of: name, in: requestHeaders) { values[name] = normalized(value) }
        }
        return values
    }

    /// Whether a request selects the stored response (RFC 9111, section 4.1).
    static func varyMatches(_ entry: HTTPCacheEntry, requestHeaders: [String: String]) -> Bool {
        guard let names = entry.varyNames else { return false }
        return names.allSatisfy { name in
            value(of: name, in: requestHeaders).map(normalized) == entry.varyValues[name]
        }
    }

    /// The lowercased names `Vary` lists; nil for `Vary: *`, which no request ever matches.
    static func varyNames(_ headers: [String: String]) -> [String]? {
        guard let vary = value(of: "Vary", in: headers) else { return [] }
        let names = vary.split(separator: ",").map { $0.lupineTrimmingASCIIWhitespace().lowercased() }.filter { !$0.isEmpty }
        return names.contains("*") ? nil : names
    }

    /// A value with its whitespace runs collapsed, so that equivalent spellings match.
    private static func normalized(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    // MARK: Freshness

    /// How long the response is fresh after it was generated (RFC 9111, section 4.2.1).
    static func freshnessLifetime(_ entry: HTTPCacheEntry) -> TimeInterval {
        entry.freshnessLifetime
    }

    /// The freshness lifetime of a response with `statusCode` and `headerFields`, received at
    /// `responseTime`; `control` is its parsed `Cache-Control`.
    static func freshnessLifetime(statusCode: Int, headerFields: [String: String], control: CacheControl,
                                  responseTime: Date) -> TimeInterval {
        switch control.seconds("max-age") {
        case let .seconds(value): return value
        case .invalid: return 0
        case .absent: break
        }
        let date = value(of: "Date", in: headerFields).flatMap(HTTPDate.parse) ?? responseTime
        if let expires = value(of: "Expires", in: headerFields) {
            // An Expires that is not a date means "already expired".
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        // Heuristic freshness (section 4.2.2): a tenth of the time since Last-Modified, as
        // URLSession and most caches do.
        guard heuristicallyCacheableStatusCodes.contains(statusCode) || control.has("public"),
              let lastModified = value(of: "Last-Modified", in: headerFields).flatMap(HTTPDate.parse) else { return 0 }
        return max(0, date.timeIntervalSince(lastModified) / 10)
    }

    /// The stored response's age at `now` (RFC 9111, section 4.2.3).
    static func currentAge(_ entry: HTTPCacheEntry, now: Date) -> TimeInterval {
        entry.correctedInitialAge + now.timeIntervalSince(entry.responseTime)
    }

    /// The age of a response when it was received: the larger of its apparent age (by `Date`) and
    /// its `Age` field plus the time the request took.
    static func correctedInitialAge(headerFields: [String: String], requestTime: Date, responseTime: Date) -> TimeInterval {
        let date = value(of: "Date", in: headerFields).flatMap(HTTPDate.parse) ?? responseTime
        // Age is delta-seconds (RFC 9111, section 5.1): digits only, the largest value kept when too
        // large; anything else ("1e20", "inf", "-5") is not an age and is ignored.
        let ageValue = value(of: "Age", in: headerFields).flatMap { CacheControl.deltaSeconds(String($0.lupineTrimmingASCIIWhitespace())) } ?? 0
        let apparentAge = max(0, responseTime.timeIntervalSince(date))
        let responseDelay = responseTime.timeIntervalSince(requestTime)
        return max(apparentAge, ageValue + responseDelay)
    }

    // MARK: Validation

    /// `If-None-Match` from the stored `ETag` and `If-Modified-Since` from its `Last-Modified`
    /// (sent as received, as RFC 9110 recommends); empty when there is no validator.
    static func conditionalHeaders(for entry: HTTPCacheEntry) -> [HTTPHeader] {
        var headers: [HTTPHeader] = []
        if let etag = entry.header("ETag") { headers.append(HTTPHeader(name: "If-None-Match", value: etag)) }
        if let lastModified = entry.header("Last-Modified") {
            headers.append(HTTPHeader(name: "If-Modified-Since", value: lastModified))
        }
        return headers
    }

    /// The stored entry updated by a 304 (RFC 9111, section 3.2): its header fields replaced by
    /// those of the 304 (except the ones describing the stored content), its times renewed.
    static func updated(_ entry: HTTPCacheEntry, with notModifiedHeaders: [String: String],
                        requestTime: Date, responseTime: Date) -> HTTPCacheEntry {
        var fields = entry.headerFields
        for (name, value) in notModifiedHeaders where !fieldsKeptOnUpdate.contains(name.lowercased()) {
            for existing in fields.keys where existing.lupineEqualsIgnoringASCIICase(name) {
                fields[existing] = nil
            }
            fields[name] = value
        }
        return HTTPCacheEntry(statusCode: entry.statusCode, headerFields: fields, requestTime: requestTime,
                              responseTime: responseTime, varyValues: entry.varyValues)
    }

    /// Whether a response to an unsafe method invalidates what is stored for its URL (section 4.4).
    static func invalidatesStoredResponse(method: String, statusCode: Int) -> Bool {
        // Compared in place: uppercasing the method and hashing it cost every response an
        // allocation on the transport's thread.
        (200..<400).contains(statusCode) && !safeMethods.contains { method.lupineEqualsIgnoringASCIICase($0) }
    }

    private static let safeMethods = ["GET", "HEAD", "OPTIONS", "TRACE"]

    // MARK: Header access

    static func value(of name: String, in headers: [String: String]) -> String? {
        if let exact = headers[name] { return exact }
        return headers.first { $0.key.lupineEqualsIgnoringASCIICase(name) }?.value
    }

    static func cacheControl(_ headers: [String: String]) -> CacheControl {
        CacheControl(value(of: "Cache-Control", in: headers).map { [$0] } ?? [])
    }

    /// Whether request fields `headers` ask for `only-if-cached`: a response from the store or none.
    static func asksOnlyIfCached(_ headers: [String: String]) -> Bool {
        cacheControl(headers).has("only-if-cached")
    }

    /// What `decision` is when the store holds nothing for the request: the policy and the
    /// request's `only-if-cached` decide alone.
    static func decisionWithoutStoredResponse(method: String, policy: URLRequest.CachePolicy,
                                              asksOnlyIfCached: @autoclosure () -> Bool) -> Decision {
        guard method.lupineEqualsIgnoringASCIICase("GET") else { return .load }
        // `decision` decides so too when it has no usable entry (`no-store` in the request
        // changes nothing then).
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData, .returnCacheDataElseLoad,
             .reloadRevalidatingCacheData:
            return .load
        case .returnCacheDataDontLoad:
            return .fail
        case .useProtocolCachePolicy:
            break
        @unknown default:
            break
        }
        return asksOnlyIfCached() ? .fail : .load
    }
}
