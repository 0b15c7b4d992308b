import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataStreamRequest {
    /// A validation closure: request and response in (a stream keeps no body); success or the
    /// error out.
    public typealias Validation = @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse) -> ValidationResult

    /// Fails with `.unacceptableStatusCode(code:)` unless the status code is in `acceptableStatusCodes`.
    @preconcurrency
    @discardableResult
    public func validate<S: Sequence>(statusCode acceptableStatusCodes: S) -> Self where S.Iterator.Element == Int, S: Sendable {
        validate { _, response in
            ResponseValidation.statusCode(response, acceptable: acceptableStatusCodes)
        }
    }

    /// Fails unless the response MIME type matches one of `acceptableContentTypes` (evaluated
    /// lazily). There is no body check: a stream keeps no body.
    @preconcurrency
    @discardableResult
    public func validate<S: Sequence>(contentType acceptableContentTypes: @escaping @Sendable @autoclosure () -> S) -> Self where S.Iterator.Element == String, S: Sendable {
        validate { _, response in
            ResponseValidation.contentType(response, acceptable: acceptableContentTypes(), bodyIsEmpty: false)
        }
    }

    /// Status code in 200..<300, and content type acceptable for the request's `Accept` header
    /// (or anything without one).
    @discardableResult
    public func validate() -> Self {
        validate(statusCode: ResponseValidation.acceptableStatusCodes)
        // The Accept header is read when validating: with lazy setup there is no request yet now.
        return validate { [unowned self] _, response in
            ResponseValidation.contentType(response,
                                           acceptable: ResponseValidation.acceptableContentTypes(for: self.request),
                                           bodyIsEmpty: false)
        }
    }
}
