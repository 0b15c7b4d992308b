import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Compresses request bodies with deflate before they are sent: a `RequestInterceptor` that
/// replaces `httpBody` with its zlib stream (RFC 1950) and sets `Content-Encoding: deflate`.
///
/// Only a body held in `URLRequest.httpBody` is compressed (parameters encoded into the body, a
/// `Data` set by a `RequestModifier`...). Upload bodies (`upload(_:to:)` with Data, a file, a
/// stream or a multipart form) are not part of the URLRequest and are sent as they are, as in
/// Alamofire. The server must accept `Content-Encoding: deflate` on requests.
///
/// On Linux it runs on the system zlib; Alamofire offers it on Apple platforms only.
@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
public struct DeflateRequestCompressor: Sendable, RequestInterceptor {
    /// What to do with a request that already has a `Content-Encoding` header.
    public enum DuplicateHeaderBehavior: Sendable {
        /// Fail the adaptation with `DuplicateHeaderError`
        /// (the request fails with `AFError.requestAdaptationFailed`).
        case error
        /// Compress the body anyway and overwrite the header with `deflate`.
        case replace
        /// Leave the request as it is.
        case skip
    }

    /// The request already had a `Content-Encoding` header and `duplicateHeaderBehavior` is `.error`.
    public struct DuplicateHeaderError: Error {}

    /// What happens when the request already has a `Content-Encoding` header.
    public let duplicateHeaderBehavior: DuplicateHeaderBehavior
    /// Decides per body whether it is compressed (for example, only above some size).
    public let shouldCompressBodyData: @Sendable (_ bodyData: Data) -> Bool

    /// Creates a compressor.
    ///
    /// - Parameters:
    ///   - duplicateHeaderBehavior: What to do when `Content-Encoding` is already set. `.error` by default.
    ///   - shouldCompressBodyData: Called with each body before it is compressed, on the queue the
    ///     adapter runs on (the Session's root queue); `false` sends that body as it is. Every body
    ///     is compressed by default.
    public init(duplicateHeaderBehavior: DuplicateHeaderBehavior = .error,
                shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }) {
        self.duplicateHeaderBehavior = duplicateHeaderBehavior
        self.shouldCompressBodyData = shouldCompressBodyData
    }

    /// Compresses the body of `urlRequest`, if any and if `shouldCompressBodyData` agrees.
    ///
    /// `completion` is called before this method returns with the compressed request, the request
    /// unchanged (no body, body declined, or `.skip` with an existing `Content-Encoding`), or an
    /// error: `DuplicateHeaderError`, or the zlib failure.
    public func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping (Result<URLRequest, any Error>) -> Void) {
        // A declined body is sent as it is before any header check, as in Alamofire: `.error`
        // only fails requests whose body would have been compressed.
        guard let body = urlRequest.httpBody, shouldCompressBodyData(body) else {
            completion(.success(urlRequest))
            return
        }
        if urlRequest.value(forHTTPHeaderField: "Content-Encoding") != nil {
            switch duplicateHeaderBehavior {
            case .error:
                completion(.failure(DuplicateHeaderError()))
                return
            case .replace:
                break
            case .skip:
                completion(.success(urlRequest))
                return
            }
        }
        do {
            var compressed = urlRequest
            compressed.httpBody = try ZlibDeflate.compress(body)
            compressed.setValue("deflate", forHTTPHeaderField: "Content-Encoding")
            completion(.success(compressed))
        } catch {
            completion(.failure(error))
        }
    }
}

@available(macOS 10.15, iOS 13, tvOS 13, watchOS 6, *)
extension RequestInterceptor where Self == DeflateRequestCompressor {
    /// A `DeflateRequestCompressor` that fails on an existing `Content-Encoding` and compresses every body.
    public static var deflateCompressor: DeflateRequestCompressor { DeflateRequestCompressor() }

    /// A `DeflateRequestCompressor` with the given behaviours.
    ///
    /// - Parameters:
    ///   - duplicateHeaderBehavior: What to do when `Content-Encoding` is already set.
    ///   - shouldCompressBodyData: Whether a given body is compressed.
    public static func deflateCompressor(
        duplicateHeaderBehavior: DeflateRequestCompressor.DuplicateHeaderBehavior = .error,
        shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }
    ) -> DeflateRequestCompressor {
        DeflateRequestCompressor(duplicateHeaderBehavior: duplicateHeaderBehavior,
                                 shouldCompressBodyData: shouldCompressBodyData)
    }
}
