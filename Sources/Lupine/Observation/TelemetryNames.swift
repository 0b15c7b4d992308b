import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The low-cardinality names that tracing and metrics share: the method as OpenTelemetry's HTTP
/// conventions spell it, the class of a status code, and the kind of an error. Nothing here holds
/// a URL, a host or a free-form message, so a label built from it takes a bounded set of values.
enum TelemetryNames {
    /// The methods of RFC 9110 and RFC 5789 (and QUERY), under their own names.
    private static let knownMethods: Set<String> = [
        "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY", "TRACE",
    ]

    /// `method`, or `_OTHER` for a method outside the known set (as OpenTelemetry asks: a
    /// server-chosen or misspelt method must not create a new label value).
    static func method(_ method: String?) -> String {
        guard let method else { return "GET" }
        return knownMethods.contains(method) ? method : "_OTHER"
    }

    /// `1xx` to `5xx`, or `none` when there was no response.
    static func statusClass(_ statusCode: Int?) -> String {
        guard let statusCode, (100...599).contains(statusCode) else { return "none" }
        return "\(statusCode / 100)xx"
    }

    /// A short, stable name for what went wrong: the status code of a rejected status, the
    /// URLError code's name for a transport failure, or the AFError case.
    static func errorType(_ error: AFError) -> String {
        switch error {
        case let .responseValidationFailed(reason: .unacceptableStatusCode(code)):
            return String(code)
        case let .sessionTaskFailed(error):
            guard let urlError = error as? URLError else { return "sessionTaskFailed" }
            return urlErrorName(urlError.code)
        case .explicitlyCancelled: return "cancelled"
        case .serverTrustEvaluationFailed: return "serverTrustEvaluationFailed"
        case .sessionDeinitialized: return "sessionDeinitialized"
        case .sessionInvalidated: return "sessionInvalidated"
        case .requestAdaptationFailed: return "requestAdaptationFailed"
        case .requestRetryFailed: return "requestRetryFailed"
        case .responseValidationFailed: return "responseValidationFailed"
        case .responseSerializationFailed: return "responseSerializationFailed"
        case .invalidURL: return "invalidURL"
        case .createURLRequestFailed: return "createURLRequestFailed"
        case .urlRequestValidationFailed: return "urlRequestValidationFailed"
        case .parameterEncodingFailed, .parameterEncoderFailed: return "parameterEncodingFailed"
        case .multipartEncodingFailed: return "multipartEncodingFailed"
        case .createUploadableFailed: return "createUploadableFailed"
        case .downloadedFileMoveFailed: return "downloadedFileMoveFailed"
        }
    }

    /// The names of the URLError codes Lupine's transports produce.
    private static func urlErrorName(_ code: URLError.Code) -> String {
        switch code {
        case .timedOut: "timedOut"
        case .cannotConnectToHost: "cannotConnectToHost"
        case .cannotFindHost: "cannotFindHost"
        case .networkConnectionLost: "networkConnectionLost"
        case .notConnectedToInternet: "notConnectedToInternet"
        case .cancelled: "cancelled"
        case .badURL: "badURL"
        case .unsupportedURL: "unsupportedURL"
        case .badServerResponse: "badServerResponse"
        case .cannotDecodeContentData: "cannotDecodeContentData"
        case .cannotDecodeRawData: "cannotDecodeRawData"
        case .dataLengthExceedsMaximum: "dataLengthExceedsMaximum"
        case .httpTooManyRedirects: "httpTooManyRedirects"
        case .redirectToNonExistentLocation: "redirectToNonExistentLocation"
        case .secureConnectionFailed: "secureConnectionFailed"
        case .serverCertificateUntrusted: "serverCertificateUntrusted"
        case .serverCertificateHasBadDate: "serverCertificateHasBadDate"
        case .serverCertificateNotYetValid: "serverCertificateNotYetValid"
        case .serverCertificateHasUnknownRoot: "serverCertificateHasUnknownRoot"
        case .clientCertificateRejected: "clientCertificateRejected"
        case .clientCertificateRequired: "clientCertificateRequired"
        case .userAuthenticationRequired: "userAuthenticationRequired"
        case .appTransportSecurityRequiresSecureConnection: "appTransportSecurityRequiresSecureConnection"
        case .resourceUnavailable: "resourceUnavailable"
        case .fileDoesNotExist: "fileDoesNotExist"
        case .fileIsDirectory: "fileIsDirectory"
        case .cannotOpenFile: "cannotOpenFile"
        case .cannotWriteToFile: "cannotWriteToFile"
        case .zeroByteResource: "zeroByteResource"
        default: "URLError(\(code.rawValue))"
        }
    }
}
