import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// The response a `URLCacheMarker` keeps in the configured `URLCache`: it shows the response
/// Lupine last stored for the marker's group, with its body and header fields, to code that reads
/// the cache with `cachedResponse(for:)`.
///
/// What it shows changes in place, without storing anew in the `URLCache`: storing anew would
/// first remove the marker, and corelibs' removal also deletes the group's marker file on disk,
/// which the entries of Lupine's disk tier depend on.
final class ShownCachedURLResponse: CachedURLResponse, @unchecked Sendable {
    private struct Shown {
        let url: URL
        let stored: StoredResponse
    }

    // Guards what is shown; the rest is corelibs' and immutable once made.
    private let shown = NIOLockedValueBox<Shown?>(nil)

    /// A response for `url` showing nothing yet, kept in memory only.
    init(url: URL, userInfo: [AnyHashable: Any]) {
        super.init(response: URLResponse(url: url, mimeType: nil, expectedContentLength: 0, textEncodingName: nil),
                   data: Data(), userInfo: userInfo, storagePolicy: .allowedInMemoryOnly)
    }

    /// Shows `stored`, the response received for `url`.
    func show(_ stored: StoredResponse, of url: URL) {
        shown.withLockedValue { $0 = Shown(url: url, stored: stored) }
    }

    func isShowing(_ url: URL) -> Bool {
        shown.withLockedValue { $0?.url == url }
    }

    /// The stored response's head, as an `HTTPURLResponse` for the URL it was received for.
    override var response: URLResponse {
        guard let current = shown.withLockedValue({ $0 }),
              let response = HTTPURLResponse(url: current.url, statusCode: current.stored.entry.statusCode,
                                             httpVersion: current.stored.httpVersion,
                                             headerFields: current.stored.entry.headerFields) else { return super.response }
        return response
    }

    /// The stored response's body.
    override var data: Data {
        shown.withLockedValue { $0?.stored.data } ?? super.data
    }
}
