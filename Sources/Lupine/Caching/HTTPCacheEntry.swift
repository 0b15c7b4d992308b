import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the cache rules need to know about a stored response: its status and header fields, when
/// it was requested and received, and the request header fields its `Vary` names.
///
/// The times and the `Vary` values travel in the `userInfo` of the `CachedURLResponse` stored in
/// the `URLCache` (both survive the disk store of corelibs-foundation). A response stored by
/// someone else has no times: it is taken as received long ago, so it is always stale and is
/// revalidated before use.
struct HTTPCacheEntry: Equatable {
    var statusCode: Int
    var headerFields: [String: String]
    var requestTime: Date
    var responseTime: Date
    /// Lowercased request header name to its value in the request that was answered; a header
    /// that request did not carry is absent.
    var varyValues: [String: String]

    /// The value of a response header field, the name compared case-insensitively.
    func header(_ name: String) -> String? {
        HTTPCacheRules.value(of: name, in: headerFields)
    }

    static let requestTimeKey = "lupine.cache.requestTime"
    static let responseTimeKey = "lupine.cache.responseTime"
    static let varyKey = "lupine.cache.vary"

    /// The entry a `CachedURLResponse` describes; nil when it holds no HTTP response.
    init?(_ cached: CachedURLResponse) {
        guard let response = cached.response as? HTTPURLResponse else { return nil }
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String { fields[name] = "\(value)" }
        }
        let info = cached.userInfo ?? [:]
        self.init(statusCode: response.statusCode,
                  headerFields: fields,
                  requestTime: info[Self.requestTimeKey] as? Date ?? .distantPast,
                  responseTime: info[Self.responseTimeKey] as? Date ?? .distantPast,
                  varyValues: (info[Self.varyKey] as? [String: String]) ?? [:])
    }

    init(statusCode: Int, headerFields: [String: String], requestTime: Date, responseTime: Date, varyValues: [String: String]) {
        self.statusCode = statusCode
        self.headerFields = headerFields
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyValues = varyValues
    }

    /// The `userInfo` that carries this entry's times and `Vary` values.
    var userInfo: [AnyHashable: Any] {
        [Self.requestTimeKey: requestTime, Self.responseTimeKey: responseTime, Self.varyKey: varyValues]
    }
}
