import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLRequest {
    /// Creates a request for a URL with a method and optional headers.
    ///
    /// - Parameters:
    ///   - url: The request's URL.
    ///   - method: The HTTP method.
    ///   - headers: The header fields, or nil for none.
    /// - Throws: `AFError.invalidURL(url:)` when `url` cannot produce a URL.
    public init(url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders? = nil) throws {
        let url = try url.asURL()
        self.init(url: url)
        // A new URLRequest is already a GET without fields; corelibs' setters normalise and copy,
        // which cost about 1% of a small GET when done for nothing.
        if method != .get { httpMethod = method.rawValue }
        if let headers { allHTTPHeaderFields = headers.dictionary }
    }

    /// The request's `httpMethod` as an ``HTTPMethod``.
    public var method: HTTPMethod? {
        get { httpMethod.map(HTTPMethod.init(rawValue:)) }
        set { httpMethod = newValue?.rawValue }
    }

    /// Checks the request for mistakes that make it unsendable.
    ///
    /// - Throws: `AFError.urlRequestValidationFailed(reason: .bodyDataInGETRequest(body))` when a GET
    ///   request has a body.
    public func validate() throws {
        if method == .get, let body = httpBody {
            throw AFError.urlRequestValidationFailed(reason: .bodyDataInGETRequest(body))
        }
    }

    /// Checks every header field before the request is handed to the transport.
    ///
    /// A name must be a non-empty RFC 9110 token; a value must not contain CR, LF or NUL (which would
    /// let a caller-supplied value inject extra header lines).
    ///
    /// - Throws: `AFError.createURLRequestFailed(error:)` wrapping an ``InvalidHTTPHeaderError`` for
    ///   the first offending field.
    /// Everything checked before a URLRequest may be sent: `validate()`, the method and the header fields.
    func lupineValidateForSending() throws {
        try validate()
        try lupineValidateMethod()
        try lupineValidateHeaderFields()
    }

    /// Rejects a method that is not an HTTP token (a space or CR LF in it would smuggle a second
    /// request onto the connection), with `AFError.createURLRequestFailed`.
    func lupineValidateMethod() throws {
        let method = httpMethod ?? "GET"
        if InvalidHTTPHeaderError.problem(name: method, value: "") != nil {
            throw AFError.createURLRequestFailed(error: InvalidHTTPMethodError(method: method))
        }
    }

    func lupineValidateHeaderFields() throws {
        try Self.lupineValidateHeaderFields(allHTTPHeaderFields ?? [:])
    }

    /// Throws `createURLRequestFailed` for the first field (by name) that may not be sent.
    static func lupineValidateHeaderFields(_ fields: [String: String]) throws {
        guard fields.contains(where: { InvalidHTTPHeaderError.problem(name: $0.key, value: $0.value) != nil })
        else { return }
        // Sorted so the reported field does not depend on dictionary order (only when one fails:
        // every request is checked).
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            if let problem = InvalidHTTPHeaderError.problem(name: name, value: value) {
                throw AFError.createURLRequestFailed(error: InvalidHTTPHeaderError(name: name, problem: problem))
            }
        }
    }
}
