import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a response value (`DataResponse`, `DownloadResponse`) gets its `HTTPURLResponse`: one
/// given to its initializer, or the pipeline's, made only if someone reads it.
enum ResponseSource: Sendable {
    case made(HTTPURLResponse?)
    case lazy(LazyHTTPResponse?)

    var response: HTTPURLResponse? {
        switch self {
        case let .made(response): response
        case let .lazy(response): response?.response
        }
    }
}
