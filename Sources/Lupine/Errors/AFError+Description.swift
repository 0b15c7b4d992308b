import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AFError: LocalizedError {
    /// A sentence saying what failed, with the values that matter: URLs, codes, content types and the
    /// `localizedDescription` of any underlying error. Never nil.
    public var errorDescription: String? {
        switch self {
        case let .createUploadableFailed(error):
            return "The upload body could not be created: \(error.localizedDescription)"
        case let .createURLRequestFailed(error):
            return "The URLRequest could not be created: \(error.localizedDescription)"
        case let .downloadedFileMoveFailed(error, source, destination):
            return "The downloaded file could not be moved from \(source.path) to \(destination.path): "
                + error.localizedDescription
        case .explicitlyCancelled:
            return "The request was explicitly cancelled."
        case let .invalidURL(url):
            return "The URL is not valid: \(url)"
        case let .multipartEncodingFailed(reason):
            return reason.localizedDescription
        case let .parameterEncodingFailed(reason):
            return reason.localizedDescription
        case let .parameterEncoderFailed(reason):
            return reason.localizedDescription
        case let .requestAdaptationFailed(error):
            return "The request could not be adapted: \(error.localizedDescription)"
        case let .requestRetryFailed(retryError, originalError):
            return "The request failed with \"\(originalError.localizedDescription)\" and was not retried: "
                + retryError.localizedDescription
        case let .responseValidationFailed(reason):
            return reason.localizedDescription
        case let .responseSerializationFailed(reason):
            return reason.localizedDescription
        case let .serverTrustEvaluationFailed(reason):
            return "The server was not trusted; nothing was sent. \(reason.localizedDescription)"
        case .sessionDeinitialized:
            return "The Session was released while its request was in flight. Keep a strong reference to the "
                + "Session (for example in a property) for as long as its requests run."
        case let .sessionInvalidated(error):
            return "The Session was invalidated: \(error?.localizedDescription ?? "no error was given.")"
        case let .sessionTaskFailed(error):
            return "The request failed: \(error.localizedDescription)"
        case let .urlRequestValidationFailed(reason):
            return reason.localizedDescription
        }
    }
}

extension AFError.MultipartEncodingFailureReason {
    /// What went wrong, in one sentence.
    var localizedDescription: String {
        switch self {
        case let .bodyPartURLInvalid(url):
            return "The multipart body part URL is not a file URL: \(url)"
        case let .bodyPartFilenameInvalid(url):
            return "The multipart body part file name has no name or no extension: \(url)"
        case let .bodyPartFileNotReachable(url):
            return "The multipart body part file is not reachable: \(url)"
        case let .bodyPartFileNotReachableWithError(url, error):
            return "Checking that the multipart body part file \(url) is reachable failed: "
                + error.localizedDescription
        case let .bodyPartFileIsDirectory(url):
            return "The multipart body part URL is a directory, or no file exists there: \(url)"
        case let .bodyPartFileSizeNotAvailable(url):
            return "The size of the multipart body part file is not available: \(url)"
        case let .bodyPartFileSizeQueryFailedWithError(url, error):
            return "Reading the size of the multipart body part file \(url) failed: \(error.localizedDescription)"
        case let .bodyPartInputStreamCreationFailed(url):
            return "No input stream could be opened for the multipart body part file: \(url)"
        case let .outputStreamCreationFailed(url):
            return "No output stream could be created for the multipart body file: \(url)"
        case let .outputStreamFileAlreadyExists(url):
            return "A file already exists where the multipart body was to be written: \(url)"
        case let .outputStreamURLInvalid(url):
            return "The multipart body destination is not a file URL: \(url)"
        case let .outputStreamWriteFailed(error):
            return "Writing the multipart body failed: \(error.localizedDescription)"
        case let .inputStreamReadFailed(error):
            return "Reading a multipart body part failed: \(error.localizedDescription)"
        }
    }
}

extension AFError.ParameterEncodingFailureReason {
    /// What went wrong, in one sentence.
    var localizedDescription: String {
        switch self {
        case .missingURL:
            return "The parameters could not be encoded: the request has no URL."
        case let .jsonEncodingFailed(error):
            return "The parameters could not be encoded as JSON: \(error.localizedDescription)"
        case let .customEncodingFailed(error):
            return "The custom parameter encoding failed: \(error.localizedDescription)"
        }
    }
}

extension AFError.ParameterEncoderFailureReason {
    /// What went wrong, in one sentence.
    var localizedDescription: String {
        switch self {
        case .missingRequiredComponent(.url):
            return "The parameters could not be encoded: the request has no URL."
        case let .missingRequiredComponent(.httpMethod(rawValue)):
            return "The parameters could not be encoded: the HTTP method \"\(rawValue)\" is not usable."
        case let .encoderFailed(error):
            return "The parameter encoder failed: \(error.localizedDescription)"
        }
    }
}

extension AFError.ResponseValidationFailureReason {
    /// What went wrong, in one sentence.
    var localizedDescription: String {
        switch self {
        case .dataFileNil:
            return "The response could not be validated: the download produced no file."
        case let .dataFileReadFailed(url):
            return "The response could not be validated: the downloaded file could not be read: \(url.path)"
        case let .missingContentType(types):
            return "The response has no Content-Type; acceptable types are: \(types.joined(separator: ","))"
        case let .unacceptableContentType(types, responseType):
            return "The response Content-Type \"\(responseType)\" is not acceptable; acceptable types are: "
                + types.joined(separator: ",")
        case let .unacceptableStatusCode(code):
            return "The response status code was not acceptable: \(code)"
        case let .customValidationFailed(error):
            return "The custom response validation failed: \(error.localizedDescription)"
        }
    }
}

extension AFError.ResponseSerializationFailureReason {
    /// What went wrong, in one sentence.
    var localizedDescription: String {
        switch self {
        case .inputDataNilOrZeroLength:
            return "The response could not be serialized: the body is empty, and neither the request method "
                + "nor the status code allows an empty body."
        case .inputFileNil:
            return "The response could not be serialized: the download produced no file."
        case let .inputFileReadFailed(url):
            return "The response could not be serialized: the downloaded file could not be read: \(url.path)"
        case let .stringSerializationFailed(encoding):
            return "The response body could not be decoded as a string in the encoding \(encoding)."
        case let .jsonSerializationFailed(error):
            return "The response body could not be read as JSON: \(error.localizedDescription)"
        case let .decodingFailed(error):
            return "The response body could not be decoded: \(error.localizedDescription)"
        case let .customSerializationFailed(error):
            return "The custom response serializer failed: \(error.localizedDescription)"
        case let .invalidEmptyResponse(type):
            return "The body was empty, which the request allows, but \(type) has no empty value. Make it "
                + "conform to EmptyResponse, or decode Empty instead."
        }
    }
}

extension AFError.URLRequestValidationFailureReason {
    /// What went wrong, in one sentence.
    var localizedDescription: String {
        switch self {
        case let .bodyDataInGETRequest(data):
            return "A GET request must not have a body; this one has: \(String(decoding: data, as: UTF8.self))"
        }
    }
}
