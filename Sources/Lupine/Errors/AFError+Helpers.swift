import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Error {
    /// The error as an `AFError`, or nil when it is some other error.
    public var asAFError: AFError? {
        self as? AFError
    }

    /// The error as an `AFError`; traps when it is some other error.
    ///
    /// Use this only where an `AFError` is guaranteed, such as `DataResponse<_, AFError>.error`:
    /// any other error here is a programming mistake, so the process stops with `message`.
    ///
    /// - Parameters:
    ///   - message: What went wrong, shown when the process stops.
    ///   - file:    The file the call is in. Leave the default.
    ///   - line:    The line the call is on. Leave the default.
    /// - Returns: The error cast to `AFError`.
    public func asAFError(orFailWith message: @autoclosure () -> String,
                          file: StaticString = #fileID,
                          line: UInt = #line) -> AFError {
        guard let afError = self as? AFError else {
            // Caller misuse by contract: the caller promised this error is an AFError.
            fatalError(message(), file: file, line: line)
        }
        return afError
    }
}

// MARK: - Case tests

extension AFError {
    /// Whether the error is `.sessionDeinitialized`.
    public var isSessionDeinitializedError: Bool {
        if case .sessionDeinitialized = self { return true }
        return false
    }

    /// Whether the error is `.sessionInvalidated`; `underlyingError` then holds its error, if any.
    public var isSessionInvalidatedError: Bool {
        if case .sessionInvalidated = self { return true }
        return false
    }

    /// Whether the error is `.explicitlyCancelled`.
    public var isExplicitlyCancelledError: Bool {
        if case .explicitlyCancelled = self { return true }
        return false
    }

    /// Whether the error is `.invalidURL`; `urlConvertible` then holds the value.
    public var isInvalidURLError: Bool {
        if case .invalidURL = self { return true }
        return false
    }

    /// Whether the error is `.parameterEncodingFailed`; `underlyingError` then holds the cause, if any.
    public var isParameterEncodingError: Bool {
        if case .parameterEncodingFailed = self { return true }
        return false
    }

    /// Whether the error is `.parameterEncoderFailed`; `underlyingError` then holds the cause, if any.
    public var isParameterEncoderError: Bool {
        if case .parameterEncoderFailed = self { return true }
        return false
    }

    /// Whether the error is `.multipartEncodingFailed`; `url` and `underlyingError` then hold what the reason carries.
    public var isMultipartEncodingError: Bool {
        if case .multipartEncodingFailed = self { return true }
        return false
    }

    /// Whether the error is `.requestAdaptationFailed`; `underlyingError` then holds the adapter's error.
    public var isRequestAdaptationError: Bool {
        if case .requestAdaptationFailed = self { return true }
        return false
    }

    /// Whether the error is `.responseValidationFailed`; `acceptableContentTypes`, `responseContentType`,
    /// `responseCode` and `underlyingError` then hold what the reason carries.
    public var isResponseValidationError: Bool {
        if case .responseValidationFailed = self { return true }
        return false
    }

    /// Whether the error is `.responseSerializationFailed`; `failedStringEncoding` and `underlyingError` then hold
    /// what the reason carries.
    public var isResponseSerializationError: Bool {
        if case .responseSerializationFailed = self { return true }
        return false
    }

    /// Whether the error is `.requestRetryFailed`; `underlyingError` then holds the retrier's error.
    public var isRequestRetryError: Bool {
        if case .requestRetryFailed = self { return true }
        return false
    }

    /// Whether the error is `.createUploadableFailed`; `underlyingError` then holds the cause.
    public var isCreateUploadableError: Bool {
        if case .createUploadableFailed = self { return true }
        return false
    }

    /// Whether the error is `.createURLRequestFailed`; `underlyingError` then holds the cause.
    public var isCreateURLRequestError: Bool {
        if case .createURLRequestFailed = self { return true }
        return false
    }

    /// Whether the error is `.downloadedFileMoveFailed`; `sourceURL`, `destinationURL` and `underlyingError`
    /// then hold its values.
    public var isDownloadedFileMoveError: Bool {
        if case .downloadedFileMoveFailed = self { return true }
        return false
    }

    /// Whether the error is `.serverTrustEvaluationFailed`.
    public var isServerTrustEvaluationError: Bool {
        if case .serverTrustEvaluationFailed = self { return true }
        return false
    }

    /// Whether the error is `.sessionTaskFailed`; `underlyingError` then holds the transport error (a `URLError`).
    public var isSessionTaskError: Bool {
        if case .sessionTaskFailed = self { return true }
        return false
    }
}

// MARK: - Payloads

extension AFError {
    /// The value that could not be turned into a URL, for `.invalidURL`; nil otherwise.
    public var urlConvertible: (any URLConvertible)? {
        guard case let .invalidURL(url) = self else { return nil }
        return url
    }

    /// The file URL a `.multipartEncodingFailed` reason carries; nil for every other case and for the
    /// `.outputStreamWriteFailed` and `.inputStreamReadFailed` reasons.
    public var url: URL? {
        guard case let .multipartEncodingFailed(reason) = self else { return nil }
        return reason.url
    }

    /// The error that caused this one, where the case or its reason carries one.
    ///
    /// For `.requestRetryFailed` this is the retrier's error, not the original one.
    public var underlyingError: (any Error)? {
        switch self {
        case let .multipartEncodingFailed(reason):
            return reason.underlyingError
        case let .parameterEncodingFailed(reason):
            return reason.underlyingError
        case let .parameterEncoderFailed(reason):
            return reason.underlyingError
        case let .responseValidationFailed(reason):
            return reason.underlyingError
        case let .responseSerializationFailed(reason):
            return reason.underlyingError
        case let .requestAdaptationFailed(error),
             let .createUploadableFailed(error),
             let .createURLRequestFailed(error),
             let .downloadedFileMoveFailed(error, _, _),
             let .sessionTaskFailed(error),
             let .requestRetryFailed(error, _):
            return error
        case let .sessionInvalidated(error):
            return error
        case let .serverTrustEvaluationFailed(reason):
            return reason.underlyingError
        case .explicitlyCancelled, .invalidURL, .sessionDeinitialized, .urlRequestValidationFailed:
            return nil
        }
    }

    /// The acceptable content types of a `.missingContentType` or `.unacceptableContentType` validation failure.
    public var acceptableContentTypes: [String]? {
        guard case let .responseValidationFailed(reason) = self else { return nil }
        switch reason {
        case let .missingContentType(types), let .unacceptableContentType(types, _):
            return types
        case .dataFileNil, .dataFileReadFailed, .unacceptableStatusCode, .customValidationFailed:
            return nil
        }
    }

    /// The response's content type in an `.unacceptableContentType` validation failure.
    public var responseContentType: String? {
        guard case let .responseValidationFailed(.unacceptableContentType(_, responseType)) = self else { return nil }
        return responseType
    }

    /// The status code of an `.unacceptableStatusCode` validation failure.
    public var responseCode: Int? {
        guard case let .responseValidationFailed(.unacceptableStatusCode(code)) = self else { return nil }
        return code
    }

    /// The encoding of a `.stringSerializationFailed` serialization failure.
    public var failedStringEncoding: String.Encoding? {
        guard case let .responseSerializationFailed(.stringSerializationFailed(encoding)) = self else { return nil }
        return encoding
    }

    /// The file that could not be moved, for `.downloadedFileMoveFailed`.
    public var sourceURL: URL? {
        guard case let .downloadedFileMoveFailed(_, source, _) = self else { return nil }
        return source
    }

    /// Where the file was to be moved, for `.downloadedFileMoveFailed`.
    public var destinationURL: URL? {
        guard case let .downloadedFileMoveFailed(_, _, destination) = self else { return nil }
        return destination
    }

    /// The resume data of a failed download: the `NSURLSessionDownloadTaskResumeData` entry of an underlying
    /// `URLError`'s `userInfo`, when there is one.
    ///
    /// Pass it to `Session.download(resumingWith:)` to continue the download.
    public var downloadResumeData: Data? {
        (underlyingError as? URLError)?.userInfo[AFError.downloadResumeDataKey] as? Data
    }

    /// The `userInfo` key under which a `URLError` carries download resume data.
    ///
    /// FoundationNetworking has no `NSURLSessionDownloadTaskResumeData` constant; its value is this string.
    static let downloadResumeDataKey = "NSURLSessionDownloadTaskResumeData"
}

// MARK: - Reason payloads

extension AFError.MultipartEncodingFailureReason {
    /// The URL the reason carries, if any.
    var url: URL? {
        switch self {
        case let .bodyPartURLInvalid(url),
             let .bodyPartFilenameInvalid(url),
             let .bodyPartFileNotReachable(url),
             let .bodyPartFileNotReachableWithError(url, _),
             let .bodyPartFileIsDirectory(url),
             let .bodyPartFileSizeNotAvailable(url),
             let .bodyPartFileSizeQueryFailedWithError(url, _),
             let .bodyPartInputStreamCreationFailed(url),
             let .outputStreamCreationFailed(url),
             let .outputStreamFileAlreadyExists(url),
             let .outputStreamURLInvalid(url):
            return url
        case .outputStreamWriteFailed, .inputStreamReadFailed:
            return nil
        }
    }

    /// The error the reason carries, if any.
    var underlyingError: (any Error)? {
        switch self {
        case let .bodyPartFileNotReachableWithError(_, error),
             let .bodyPartFileSizeQueryFailedWithError(_, error),
             let .outputStreamWriteFailed(error),
             let .inputStreamReadFailed(error):
            return error
        case .bodyPartURLInvalid,
             .bodyPartFilenameInvalid,
             .bodyPartFileNotReachable,
             .bodyPartFileIsDirectory,
             .bodyPartFileSizeNotAvailable,
             .bodyPartInputStreamCreationFailed,
             .outputStreamCreationFailed,
             .outputStreamFileAlreadyExists,
             .outputStreamURLInvalid:
            return nil
        }
    }
}

extension AFError.ParameterEncodingFailureReason {
    /// The error the reason carries, if any.
    var underlyingError: (any Error)? {
        switch self {
        case let .jsonEncodingFailed(error), let .customEncodingFailed(error):
            return error
        case .missingURL:
            return nil
        }
    }
}

extension AFError.ParameterEncoderFailureReason {
    /// The error the reason carries, if any.
    var underlyingError: (any Error)? {
        switch self {
        case let .encoderFailed(error):
            return error
        case .missingRequiredComponent:
            return nil
        }
    }
}

extension AFError.ResponseValidationFailureReason {
    /// The error the reason carries, if any.
    var underlyingError: (any Error)? {
        switch self {
        case let .customValidationFailed(error):
            return error
        case .dataFileNil, .dataFileReadFailed, .missingContentType, .unacceptableContentType, .unacceptableStatusCode:
            return nil
        }
    }
}

extension AFError.ResponseSerializationFailureReason {
    /// The error the reason carries, if any.
    var underlyingError: (any Error)? {
        switch self {
        case let .jsonSerializationFailed(error), let .decodingFailed(error), let .customSerializationFailed(error):
            return error
        case .inputDataNilOrZeroLength,
             .inputFileNil,
             .inputFileReadFailed,
             .stringSerializationFailed,
             .invalidEmptyResponse:
            return nil
        }
    }
}
