import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every error Lupine produces: request creation, encoding, adaptation, transport, validation,
/// serialization and retry failures each have a case, with a reason enum where there is more to say.
///
/// Transport failures are `.sessionTaskFailed(error:)` wrapping a `URLError` whose code says what
/// happened (`.timedOut`, `.cannotConnectToHost`, `.networkConnectionLost`, ...), as with Alamofire.
public enum AFError: Error, Sendable {
    /// Why building a multipart/form-data body failed.
    public enum MultipartEncodingFailureReason: Sendable {
        /// The body part URL is not a file URL.
        case bodyPartURLInvalid(url: URL)
        /// The file name of the body part URL has no name or no extension.
        case bodyPartFilenameInvalid(in: URL)
        /// The file of the body part is not reachable.
        case bodyPartFileNotReachable(at: URL)
        /// Checking whether the file of the body part is reachable failed.
        case bodyPartFileNotReachableWithError(atURL: URL, error: any Error)
        /// The body part URL is a directory, or no file exists there.
        case bodyPartFileIsDirectory(at: URL)
        /// The size of the body part file could not be read.
        case bodyPartFileSizeNotAvailable(at: URL)
        /// Reading the size of the body part file failed.
        case bodyPartFileSizeQueryFailedWithError(forURL: URL, error: any Error)
        /// No input stream could be opened for the body part file.
        case bodyPartInputStreamCreationFailed(for: URL)
        /// No output stream could be created for the destination file.
        case outputStreamCreationFailed(for: URL)
        /// A file already exists where the encoded body was to be written.
        case outputStreamFileAlreadyExists(at: URL)
        /// The destination of the encoded body is not a file URL.
        case outputStreamURLInvalid(url: URL)
        /// Writing the encoded body failed.
        case outputStreamWriteFailed(error: any Error)
        /// Reading a body part's input stream failed.
        case inputStreamReadFailed(error: any Error)
    }

    /// Wrapped in `.inputStreamReadFailed` when a part's stream length differs from the declared one.
    public struct UnexpectedInputStreamLength: Error {
        /// Bytes the part declared.
        public var bytesExpected: UInt64
        /// Bytes the stream actually produced.
        public var bytesRead: UInt64

        init(bytesExpected: UInt64, bytesRead: UInt64) {
            self.bytesExpected = bytesExpected
            self.bytesRead = bytesRead
        }
    }

    /// Why a `ParameterEncoding` failed.
    public enum ParameterEncodingFailureReason: Sendable {
        /// The request has no URL to put the query in.
        case missingURL
        /// `JSONSerialization` failed.
        case jsonEncodingFailed(error: any Error)
        /// A custom encoding failed.
        case customEncodingFailed(error: any Error)
    }

    /// Why a `ParameterEncoder` failed.
    public enum ParameterEncoderFailureReason: Sendable {
        /// A part of the request the encoder needs.
        public enum RequiredComponent: Sendable {
            /// The URL.
            case url
            /// The HTTP method, with the raw value found.
            case httpMethod(rawValue: String)
        }

        /// The request lacks a component the encoder needs.
        case missingRequiredComponent(RequiredComponent)
        /// The underlying encoder threw.
        case encoderFailed(error: any Error)
    }

    /// Why response validation failed.
    public enum ResponseValidationFailureReason: Sendable {
        /// A download produced no file to validate.
        case dataFileNil
        /// The downloaded file could not be read.
        case dataFileReadFailed(at: URL)
        /// The response has no `Content-Type` and none of the acceptable types is `*/*`.
        case missingContentType(acceptableContentTypes: [String])
        /// The response `Content-Type` matches none of the acceptable types.
        case unacceptableContentType(acceptableContentTypes: [String], responseContentType: String)
        /// The status code is not acceptable.
        case unacceptableStatusCode(code: Int)
        /// A custom validation closure failed with this error.
        case customValidationFailed(error: any Error)
    }

    /// Why response serialization failed.
    public enum ResponseSerializationFailureReason: Sendable {
        /// The body was empty and the request or status does not allow an empty body.
        case inputDataNilOrZeroLength
        /// A download produced no file.
        case inputFileNil
        /// The downloaded file could not be read.
        case inputFileReadFailed(at: URL)
        /// The body could not be decoded as a string in this encoding.
        case stringSerializationFailed(encoding: String.Encoding)
        /// `JSONSerialization` failed.
        case jsonSerializationFailed(error: any Error)
        /// The `DataDecoder` threw.
        case decodingFailed(error: any Error)
        /// A custom serializer threw.
        case customSerializationFailed(error: any Error)
        /// The body was allowed to be empty but the type has no empty value (see `EmptyResponse`).
        case invalidEmptyResponse(type: String)
    }

    /// Why the URLRequest failed validation before it was sent.
    public enum URLRequestValidationFailureReason: Sendable {
        /// A GET request carries a body.
        case bodyDataInGETRequest(Data)
    }

    /// Creating the uploadable body failed.
    case createUploadableFailed(error: any Error)
    /// `asURLRequest()` or the request's validation threw a non-AFError.
    case createURLRequestFailed(error: any Error)
    /// Moving a downloaded file to its destination failed.
    case downloadedFileMoveFailed(error: any Error, source: URL, destination: URL)
    /// `cancel()` was called.
    case explicitlyCancelled
    /// The value could not be turned into a URL.
    case invalidURL(url: any URLConvertible)
    /// Building a multipart/form-data body failed.
    case multipartEncodingFailed(reason: MultipartEncodingFailureReason)
    /// A `ParameterEncoding` failed.
    case parameterEncodingFailed(reason: ParameterEncodingFailureReason)
    /// A `ParameterEncoder` failed.
    case parameterEncoderFailed(reason: ParameterEncoderFailureReason)
    /// An adapter failed, or the adapted request is invalid.
    case requestAdaptationFailed(error: any Error)
    /// A retrier answered `.doNotRetryWithError`.
    case requestRetryFailed(retryError: any Error, originalError: any Error)
    /// A validation failed.
    case responseValidationFailed(reason: ResponseValidationFailureReason)
    /// A response serializer failed.
    case responseSerializationFailed(reason: ResponseSerializationFailureReason)
    /// The server was not trusted: its evaluator threw during the TLS handshake, or the
    /// `ServerTrustManager` has no evaluator for the host. Nothing was sent.
    case serverTrustEvaluationFailed(reason: ServerTrustFailureReason)
    /// The Session was released while the request was in flight.
    case sessionDeinitialized
    /// The Session's transport was shut down.
    case sessionInvalidated(error: (any Error)?)
    /// The HTTP exchange failed; the error is a `URLError` with the matching code.
    case sessionTaskFailed(error: any Error)
    /// The URLRequest is invalid.
    case urlRequestValidationFailed(reason: URLRequestValidationFailureReason)
}
