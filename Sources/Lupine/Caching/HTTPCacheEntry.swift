import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the cache rules need to know about a stored response: its status and header fields, when
/// it was requested and received, and the request header fields its `Vary` names.
///
/// What the rules derive from the header fields (the directives of `Cache-Control`, the freshness
/// lifetime, the age at reception, the `Vary` names) is worked out once, when the entry is made:
/// a hit then costs a few subtractions, whether the response is fresh by `max-age`, by `Expires`
/// or heuristically by `Last-Modified`.
struct HTTPCacheEntry: Equatable, Sendable {
    let statusCode: Int
    let headerFields: [String: String]
    let requestTime: Date
    let responseTime: Date
    /// Lowercased request header name to its value in the request that was answered; a header
    /// that request did not carry is absent.
    let varyValues: [String: String]

    /// The response's `Cache-Control` directives.
    let responseControl: CacheControl
    /// How long the response is fresh after it was generated (RFC 9111, section 4.2.1).
    let freshnessLifetime: TimeInterval
    /// The response's age when it was received (RFC 9111, section 4.2.3).
    let correctedInitialAge: TimeInterval
    /// The lowercased names `Vary` lists; nil for `Vary: *`, which no request matches.
    let varyNames: [String]?

    init(statusCode: Int, headerFields: [String: String], requestTime: Date, responseTime: Date, varyValues: [String: String]) {
        self.statusCode = statusCode
        self.headerFields = headerFields
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyValues = varyValues
        let control = HTTPCacheRules.cacheControl(headerFields)
        responseControl = control
        freshnessLifetime = HTTPCacheRules.freshnessLifetime(statusCode: statusCode, headerFields: headerFields,
                                                            control: control, responseTime: responseTime)
        correctedInitialAge = HTTPCacheRules.correctedInitialAge(headerFields: headerFields,
                                                                requestTime: requestTime, responseTime: responseTime)
        varyNames = HTTPCacheRules.varyNames(headerFields)
    }

    /// The value of a response header field, the name compared case-insensitively.
    func header(_ name: String) -> String? {
        HTTPCacheRules.value(of: name, in: headerFields)
    }

    /// Whether the response forbids storing it (`Cache-Control: no-store`): such an entry is
    /// never used, whatever put it in the store.
    var forbidsStoring: Bool { responseControl.has("no-store") }
}
