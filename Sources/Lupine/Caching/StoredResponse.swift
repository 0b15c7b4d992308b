import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// A response held by the cache: what the rules know about it, its body, and where it may be kept.
struct StoredResponse: Sendable {
    let entry: HTTPCacheEntry
    let data: Data
    /// `.allowed`: in memory and on disk; `.allowedInMemoryOnly`: in memory only.
    let storagePolicy: URLCache.StoragePolicy
    /// The header fields a replay delivers, sorted by name, split where `Age` goes; worked out once.
    private let fieldsBeforeAge: [HTTPHeader]
    private let fieldsAfterAge: [HTTPHeader]
    /// The last response a replay made, shared by the copies of this value.
    private let replayed = ReplayedResponse()

    init(entry: HTTPCacheEntry, data: Data, storagePolicy: URLCache.StoragePolicy) {
        self.entry = entry
        self.data = data
        self.storagePolicy = storagePolicy
        let sorted = entry.headerFields
            .filter { !$0.key.lupineEqualsIgnoringASCIICase("Age") }
            .map { (name: $0.key.lowercased(), field: HTTPHeader(name: $0.key, value: $0.value)) }
            .sorted { $0.name < $1.name }
        fieldsBeforeAge = sorted.filter { $0.name < "age" }.map(\.field)
        fieldsAfterAge = sorted.filter { $0.name > "age" }.map(\.field)
    }

    /// This response with its body in storage of its own, exactly its size.
    ///
    /// A body straight from the network shares the connection's receive buffer (SwiftNIO's
    /// buffer handed on without a copy): kept in the memory store, a 64-byte body would hold the
    /// buffer's kilobytes for as long as the entry lives, beyond what its cost counts. A soak of
    /// mixed requests grew by about 1 KiB per request that way.
    func withBodyInOwnStorage() -> StoredResponse {
        let body = data.withUnsafeBytes { bytes -> Data in
            guard let base = bytes.baseAddress, bytes.count > 0 else { return Data() }
            return Data(bytes: base, count: bytes.count)
        }
        return StoredResponse(entry: entry, data: body, storagePolicy: storagePolicy)
    }

    /// The bytes the entry takes in the memory store: body, header fields, and a fixed share for
    /// the bookkeeping around them.
    var cost: Int {
        entry.headerFields.reduce(data.count + 256) { $0 + $1.key.utf8.count + $1.value.utf8.count + 32 }
    }

    /// Corelibs' HTTPURLResponse does not keep the version it was made with; stored responses are HTTP/1.1.
    var httpVersion: String { "HTTP/1.1" }

    /// The head delivered in place of the network's: the stored status and header fields, with
    /// an `Age` field giving the response's current age (RFC 9111, section 5.1).
    func head(at now: Date = Date()) -> TransportResponseHead {
        // Bounded before the conversion: a Double too large for Int would trap.
        let seconds = HTTPCacheRules.currentAge(entry, now: now)
        let age = HTTPHeader(name: "Age", value: String(seconds.isFinite ? Int(min(max(0, seconds), Double(Int32.max))) : 0))
        return TransportResponseHead(statusCode: entry.statusCode, httpVersion: httpVersion,
                                     headerFields: fieldsBeforeAge + [age] + fieldsAfterAge)
    }

    /// The `HTTPURLResponse` a replay with `head` delivers for `url`: made once, then reused by
    /// the hits that follow for the same URL while the `Age` value stays the same (a response is
    /// immutable, so requests can share it).
    func httpURLResponse(for url: URL, head: TransportResponseHead) -> HTTPURLResponse? {
        let age = head.headerFields.first { $0.name == "Age" }?.value ?? ""
        return replayed.response(url: url, age: age) {
            HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: head.httpVersion,
                            headerFields: ResponseHeaderFields.dictionary(from: head.headerFields))
        }
    }

    /// The response as `URLCache` and `CachedResponseHandler` see it.
    func cachedURLResponse(for url: URL) -> CachedURLResponse? {
        guard let response = HTTPURLResponse(url: url, statusCode: entry.statusCode, httpVersion: httpVersion,
                                             headerFields: entry.headerFields) else { return nil }
        return CachedURLResponse(response: response, data: data, userInfo: nil, storagePolicy: storagePolicy)
    }
}

/// The last `HTTPURLResponse` made for replays of one stored response.
private final class ReplayedResponse: Sendable {
    private struct Made: @unchecked Sendable {
        // HTTPURLResponse is not changed once made.
        let url: URL
        let age: String
        let response: HTTPURLResponse
    }

    private let last = NIOLockedValueBox<Made?>(nil)

    func response(url: URL, age: String, make: () -> HTTPURLResponse?) -> HTTPURLResponse? {
        if let made = last.withLockedValue({ $0 }), made.age == age, made.url == url { return made.response }
        guard let response = make() else { return nil }
        last.withLockedValue { $0 = Made(url: url, age: age, response: response) }
        return response
    }
}
