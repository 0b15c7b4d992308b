import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the cache does for one hop.
enum HTTPCacheAction: @unchecked Sendable {
    /// Use the network; the response may be stored.
    case load
    /// Answer from the stored response; nothing is sent.
    case replay(StoredResponse)
    /// Send a conditional request; a 304 answer is replaced by the stored response.
    case revalidate(StoredResponse, conditionalHeaders: [HTTPHeader])
    /// Nothing stored and the policy forbids loading (`returnCacheDataDontLoad`, `only-if-cached`).
    case fail

    /// The stored response that answers the hop without the network, if any.
    var replayed: StoredResponse? {
        if case let .replay(stored) = self { return stored }
        return nil
    }

    /// The fields that make the hop's request conditional; empty unless revalidating.
    var conditionalHeaders: [HTTPHeader] {
        if case let .revalidate(_, headers) = self { return headers }
        return []
    }
}
