import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DownloadRequest {
    /// A validation closure: the request, the response and the downloaded file's URL in; success or
    /// the error out.
    public typealias Validation = @Sendable (_ request: URLRequest?,
                                             _ response: HTTPURLResponse,
                                             _ fileURL: URL?)
        -> ValidationResult

    /// Fails with `.unacceptableStatusCode(code:)` unless the status code is in `acceptableStatusCodes`.
    @preconcurrency
    @discardableResult
    public func validate<S: Sequence>(statusCode acceptableStatusCodes: S) -> Self where S.Iterator.Element == Int, S: Sendable {
        validate { _, response, _ in
            ResponseValidation.statusCode(response, acceptable: acceptableStatusCodes)
        }
    }

    /// Fails unless the response MIME type matches one of `acceptableContentTypes` (evaluated
    /// lazily). An empty file always passes; without a file the validation fails with `.dataFileNil`,
    /// and with a file whose size cannot be read with `.dataFileReadFailed(at:)`.
    @preconcurrency
    @discardableResult
    public func validate<S: Sequence>(contentType acceptableContentTypes: @escaping @Sendable @autoclosure () -> S) -> Self where S.Iterator.Element == String, S: Sendable {
        validate { _, response, fileURL in
            Self.validateContentType(response, fileURL: fileURL, acceptable: acceptableContentTypes())
        }
    }

    /// Status code in 200..<300, and content type acceptable for the request's `Accept` header
    /// (or anything without one).
    @discardableResult
    public func validate() -> Self {
        validate(statusCode: ResponseValidation.acceptableStatusCodes)
        // The Accept header is read when validating: with lazy setup there is no request yet now.
        return validate { [unowned self] _, response, fileURL in
            Self.validateContentType(response, fileURL: fileURL,
                                     acceptable: ResponseValidation.acceptableContentTypes(for: self.request))
        }
    }

    private static func validateContentType<S: Sequence>(_ response: HTTPURLResponse, fileURL: URL?, acceptable: S)
        -> ValidationResult where S.Iterator.Element == String {
        guard let fileURL else {
            return .failure(AFError.responseValidationFailed(reason: .dataFileNil))
        }
        guard let size = DownloadFiles.size(of: fileURL) else {
            return .failure(AFError.responseValidationFailed(reason: .dataFileReadFailed(at: fileURL)))
        }
        return ResponseValidation.contentType(response, acceptable: acceptable, bodyIsEmpty: size == 0)
    }
}
