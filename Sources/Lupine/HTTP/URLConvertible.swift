import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A value that can produce a `URL`: `String`, `URL` and `URLComponents` conform.
public protocol URLConvertible: Sendable {
    /// Returns the URL, or throws `AFError.invalidURL(url:)` when there is none.
    func asURL() throws -> URL
}

extension String: URLConvertible {
    /// `URL(string: self)`; throws `AFError.invalidURL(url: self)` when that is nil.
    public func asURL() throws -> URL {
        if let url = LastParsedURL.url(for: self) { return url }
        guard let url = URL(string: self) else { throw AFError.invalidURL(url: self) }
        LastParsedURL.remember(url, parsedFrom: self)
        return url
    }
}

extension URL: URLConvertible {
    /// Returns `self`.
    public func asURL() throws -> URL { self }
}

extension URLComponents: URLConvertible {
    /// `url`; throws `AFError.invalidURL(url: self)` when that is nil.
    public func asURL() throws -> URL {
        guard let url else { throw AFError.invalidURL(url: self) }
        return url
    }
}

/// A value that can produce a `URLRequest`: the "router" pattern.
public protocol URLRequestConvertible: Sendable {
    /// Returns the request, or throws an error that becomes the request's failure.
    func asURLRequest() throws -> URLRequest
}

extension URLRequestConvertible {
    /// The request, or nil when `asURLRequest()` throws.
    public var urlRequest: URLRequest? { try? asURLRequest() }
}

extension URLRequest: URLRequestConvertible {
    /// Returns `self`.
    public func asURLRequest() throws -> URLRequest { self }
}
