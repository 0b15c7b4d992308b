import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response held by the cache, with what the rules know about it.
struct StoredResponse: @unchecked Sendable {
    // CachedURLResponse is immutable once made.
    let cached: CachedURLResponse
    let entry: HTTPCacheEntry

    let response: HTTPURLResponse

    /// The stored response `cached` holds; nil when it holds no HTTP response.
    init?(_ cached: CachedURLResponse) {
        guard let response = cached.response as? HTTPURLResponse, let entry = HTTPCacheEntry(cached) else { return nil }
        self.cached = cached
        self.entry = entry
        self.response = response
    }

    var data: Data { cached.data }
    /// Corelibs' HTTPURLResponse does not keep the version it was made with; stored responses are HTTP/1.1.
    var httpVersion: String { "HTTP/1.1" }

    /// The head delivered in place of the network's: the stored status and header fields, with
    /// an `Age` field giving the response's current age (RFC 9111, section 5.1).
    func head(at now: Date = Date()) -> TransportResponseHead {
        var fields = entry.headerFields.filter { !$0.key.lupineEqualsIgnoringASCIICase("Age") }
        fields["Age"] = String(Int(max(0, HTTPCacheRules.currentAge(entry, now: now))))
        return TransportResponseHead(statusCode: entry.statusCode, httpVersion: httpVersion,
                                     headerFields: fields.sorted { $0.key.lowercased() < $1.key.lowercased() }
                                         .map { HTTPHeader(name: $0.key, value: $0.value) })
    }
}
