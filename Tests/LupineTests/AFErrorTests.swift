import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Lupine

// MARK: - Fixtures

private struct AFErrorTestCause: LocalizedError, Equatable {
    let text: String
    var errorDescription: String? { text }
}

private let errorFileURL = URL(fileURLWithPath: "/tmp/lupine/part.txt")
private let errorOtherURL = URL(fileURLWithPath: "/tmp/lupine/other.txt")
private let errorCause = AFErrorTestCause(text: "the-errorCause")
private let errorRetryCause = AFErrorTestCause(text: "the-retry-errorCause")

/// Every multipart reason, paired with the URL `AFError.url` must report and the error `underlyingError` must.
private let multipartReasons: [(AFError.MultipartEncodingFailureReason, URL?, AFErrorTestCause?)] = [
    (.bodyPartURLInvalid(url: errorFileURL), errorFileURL, nil),
    (.bodyPartFilenameInvalid(in: errorFileURL), errorFileURL, nil),
    (.bodyPartFileNotReachable(at: errorFileURL), errorFileURL, nil),
    (.bodyPartFileNotReachableWithError(atURL: errorFileURL, error: errorCause), errorFileURL, errorCause),
    (.bodyPartFileIsDirectory(at: errorFileURL), errorFileURL, nil),
    (.bodyPartFileSizeNotAvailable(at: errorFileURL), errorFileURL, nil),
    (.bodyPartFileSizeQueryFailedWithError(forURL: errorFileURL, error: errorCause), errorFileURL, errorCause),
    (.bodyPartInputStreamCreationFailed(for: errorFileURL), errorFileURL, nil),
    (.outputStreamCreationFailed(for: errorFileURL), errorFileURL, nil),
    (.outputStreamFileAlreadyExists(at: errorFileURL), errorFileURL, nil),
    (.outputStreamURLInvalid(url: errorFileURL), errorFileURL, nil),
    (.outputStreamWriteFailed(error: errorCause), nil, errorCause),
    (.inputStreamReadFailed(error: errorCause), nil, errorCause),
]

private let parameterEncodingReasons: [(AFError.ParameterEncodingFailureReason, AFErrorTestCause?)] = [
    (.missingURL, nil),
    (.jsonEncodingFailed(error: errorCause), errorCause),
    (.customEncodingFailed(error: errorCause), errorCause),
]

private let parameterEncoderReasons: [(AFError.ParameterEncoderFailureReason, AFErrorTestCause?)] = [
    (.missingRequiredComponent(.url), nil),
    (.missingRequiredComponent(.httpMethod(rawValue: "BREW")), nil),
    (.encoderFailed(error: errorCause), errorCause),
]

private let validationReasons: [(AFError.ResponseValidationFailureReason, AFErrorTestCause?)] = [
    (.dataFileNil, nil),
    (.dataFileReadFailed(at: errorFileURL), nil),
    (.missingContentType(acceptableContentTypes: ["application/json", "text/plain"]), nil),
    (.unacceptableContentType(acceptableContentTypes: ["application/json", "text/plain"],
                              responseContentType: "image/png"), nil),
    (.unacceptableStatusCode(code: 418), nil),
    (.customValidationFailed(error: errorCause), errorCause),
]

private let serializationReasons: [(AFError.ResponseSerializationFailureReason, AFErrorTestCause?)] = [
    (.inputDataNilOrZeroLength, nil),
    (.inputFileNil, nil),
    (.inputFileReadFailed(at: errorFileURL), nil),
    (.stringSerializationFailed(encoding: .utf16), nil),
    (.jsonSerializationFailed(error: errorCause), errorCause),
    (.decodingFailed(error: errorCause), errorCause),
    (.customSerializationFailed(error: errorCause), errorCause),
    (.invalidEmptyResponse(type: "Widget"), nil),
]

/// Every top-level case (one per reason), with the error `underlyingError` must report.
private let allErrors: [(AFError, AFErrorTestCause?)] = {
    var errors: [(AFError, AFErrorTestCause?)] = [
        (.createUploadableFailed(error: errorCause), errorCause),
        (.createURLRequestFailed(error: errorCause), errorCause),
        (.downloadedFileMoveFailed(error: errorCause, source: errorFileURL, destination: errorOtherURL), errorCause),
        (.explicitlyCancelled, nil),
        (.invalidURL(url: "not a url"), nil),
        (.requestAdaptationFailed(error: errorCause), errorCause),
        (.requestRetryFailed(retryError: errorRetryCause, originalError: errorCause), errorRetryCause),
        (.sessionDeinitialized, nil),
        (.sessionInvalidated(error: errorCause), errorCause),
        (.sessionInvalidated(error: nil), nil),
        (.sessionTaskFailed(error: errorCause), errorCause),
        (.urlRequestValidationFailed(reason: .bodyDataInGETRequest(Data("body-text".utf8))), nil),
    ]
    errors += multipartReasons.map { (.multipartEncodingFailed(reason: $0.0), $0.2) }
    errors += parameterEncodingReasons.map { (.parameterEncodingFailed(reason: $0.0), $0.1) }
    errors += parameterEncoderReasons.map { (.parameterEncoderFailed(reason: $0.0), $0.1) }
    errors += validationReasons.map { (.responseValidationFailed(reason: $0.0), $0.1) }
    errors += serializationReasons.map { (.responseSerializationFailed(reason: $0.0), $0.1) }
    return errors
}()

// MARK: - Casting

@Suite("Error.asAFError")
struct AFErrorCastingTests {
    @Test func asAFErrorReturnsTheAFErrorOrNil() {
        let error: any Error = AFError.explicitlyCancelled
        #expect(error.asAFError?.isExplicitlyCancelledError == true)
        #expect(errorCause.asAFError == nil)
    }

    @Test func asAFErrorOrFailWithReturnsTheAFError() {
        let error: any Error = AFError.sessionDeinitialized
        #expect(error.asAFError(orFailWith: "must be AFError").isSessionDeinitializedError)
    }

    @Test func asAFErrorOrFailWithTrapsForAnotherError() async {
        await #expect(processExitsWith: .failure) {
            let error: any Error = URLError(.timedOut)
            _ = error.asAFError(orFailWith: "not an AFError")
        }
    }
}

// MARK: - Case tests

@Suite("AFError case Bools")
struct AFErrorCaseTests {
    /// The name of each `is...Error` Bool that is true for `error`.
    private func trueFlags(_ error: AFError) -> [String] {
        let flags: [(String, Bool)] = [
            ("sessionDeinitialized", error.isSessionDeinitializedError),
            ("sessionInvalidated", error.isSessionInvalidatedError),
            ("explicitlyCancelled", error.isExplicitlyCancelledError),
            ("invalidURL", error.isInvalidURLError),
            ("parameterEncoding", error.isParameterEncodingError),
            ("parameterEncoder", error.isParameterEncoderError),
            ("multipartEncoding", error.isMultipartEncodingError),
            ("requestAdaptation", error.isRequestAdaptationError),
            ("responseValidation", error.isResponseValidationError),
            ("responseSerialization", error.isResponseSerializationError),
            ("requestRetry", error.isRequestRetryError),
            ("createUploadable", error.isCreateUploadableError),
            ("createURLRequest", error.isCreateURLRequestError),
            ("downloadedFileMove", error.isDownloadedFileMoveError),
            ("sessionTask", error.isSessionTaskError),
        ]
        return flags.filter(\.1).map(\.0)
    }

    @Test func eachCaseSetsExactlyItsOwnBool() {
        let expectations: [(AFError, [String])] = [
            (.sessionDeinitialized, ["sessionDeinitialized"]),
            (.sessionInvalidated(error: nil), ["sessionInvalidated"]),
            (.explicitlyCancelled, ["explicitlyCancelled"]),
            (.invalidURL(url: "x"), ["invalidURL"]),
            (.parameterEncodingFailed(reason: .missingURL), ["parameterEncoding"]),
            (.parameterEncoderFailed(reason: .missingRequiredComponent(.url)), ["parameterEncoder"]),
            (.multipartEncodingFailed(reason: .bodyPartURLInvalid(url: errorFileURL)), ["multipartEncoding"]),
            (.requestAdaptationFailed(error: errorCause), ["requestAdaptation"]),
            (.responseValidationFailed(reason: .dataFileNil), ["responseValidation"]),
            (.responseSerializationFailed(reason: .inputFileNil), ["responseSerialization"]),
            (.requestRetryFailed(retryError: errorCause, originalError: errorCause), ["requestRetry"]),
            (.createUploadableFailed(error: errorCause), ["createUploadable"]),
            (.createURLRequestFailed(error: errorCause), ["createURLRequest"]),
            (.downloadedFileMoveFailed(error: errorCause, source: errorFileURL, destination: errorOtherURL), ["downloadedFileMove"]),
            (.sessionTaskFailed(error: errorCause), ["sessionTask"]),
            (.urlRequestValidationFailed(reason: .bodyDataInGETRequest(Data())), []),
        ]
        for (error, expected) in expectations {
            #expect(trueFlags(error) == expected, "\(error)")
        }
    }
}

// MARK: - Payloads

@Suite("AFError payload accessors")
struct AFErrorPayloadTests {
    @Test func underlyingErrorFollowsTheMappingTableForEveryCase() {
        for (error, expected) in allErrors {
            #expect(error.underlyingError as? AFErrorTestCause == expected, "\(error)")
            if expected == nil {
                #expect(error.underlyingError == nil, "\(error)")
            }
        }
    }

    @Test func urlConvertibleIsTheInvalidURLValue() {
        #expect(AFError.invalidURL(url: "bad url").urlConvertible as? String == "bad url")
        #expect(AFError.explicitlyCancelled.urlConvertible == nil)
    }

    @Test func urlIsTheMultipartReasonsURLOnly() {
        for (reason, url, _) in multipartReasons {
            #expect(AFError.multipartEncodingFailed(reason: reason).url == url, "\(reason)")
        }
        #expect(AFError.responseSerializationFailed(reason: .inputFileReadFailed(at: errorFileURL)).url == nil)
        #expect(AFError.invalidURL(url: errorFileURL).url == nil)
        #expect(AFError.sessionTaskFailed(error: URLError(.timedOut, userInfo: [:])).url == nil)
    }

    @Test func contentTypeAccessorsReadValidationReasons() {
        let types = ["application/json", "text/plain"]
        let missing = AFError.responseValidationFailed(reason: .missingContentType(acceptableContentTypes: types))
        let unacceptable = AFError.responseValidationFailed(
            reason: .unacceptableContentType(acceptableContentTypes: types, responseContentType: "image/png"))
        #expect(missing.acceptableContentTypes == types)
        #expect(missing.responseContentType == nil)
        #expect(unacceptable.acceptableContentTypes == types)
        #expect(unacceptable.responseContentType == "image/png")
        #expect(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 500)).acceptableContentTypes
            == nil)
        #expect(AFError.explicitlyCancelled.acceptableContentTypes == nil)
    }

    @Test func responseCodeComesFromUnacceptableStatusCodeOnly() {
        #expect(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 503)).responseCode == 503)
        #expect(AFError.responseValidationFailed(reason: .dataFileNil).responseCode == nil)
        #expect(AFError.sessionTaskFailed(error: errorCause).responseCode == nil)
    }

    @Test func failedStringEncodingComesFromStringSerializationFailed() {
        #expect(AFError.responseSerializationFailed(reason: .stringSerializationFailed(encoding: .utf32))
            .failedStringEncoding == .utf32)
        #expect(AFError.responseSerializationFailed(reason: .inputFileNil).failedStringEncoding == nil)
        #expect(AFError.explicitlyCancelled.failedStringEncoding == nil)
    }

    @Test func sourceAndDestinationURLsComeFromDownloadedFileMoveFailed() {
        let error = AFError.downloadedFileMoveFailed(error: errorCause, source: errorFileURL, destination: errorOtherURL)
        #expect(error.sourceURL == errorFileURL)
        #expect(error.destinationURL == errorOtherURL)
        #expect(AFError.explicitlyCancelled.sourceURL == nil)
        #expect(AFError.explicitlyCancelled.destinationURL == nil)
    }

    @Test func downloadResumeDataIsReadFromAnUnderlyingURLError() {
        let resumeData = Data("resume".utf8)
        let urlError = URLError(.networkConnectionLost,
                                userInfo: ["NSURLSessionDownloadTaskResumeData": resumeData])
        #expect(AFError.sessionTaskFailed(error: urlError).downloadResumeData == resumeData)
        #expect(AFError.requestAdaptationFailed(error: urlError).downloadResumeData == resumeData)
    }

    @Test func downloadResumeDataIsNilWithoutResumeData() {
        #expect(AFError.sessionTaskFailed(error: URLError(.timedOut)).downloadResumeData == nil)
        #expect(AFError.sessionTaskFailed(error: errorCause).downloadResumeData == nil)
        #expect(AFError.explicitlyCancelled.downloadResumeData == nil)
    }
}

// MARK: - Descriptions

@Suite("AFError errorDescription")
struct AFErrorDescriptionTests {
    private func description(_ error: AFError) -> String {
        error.errorDescription ?? ""
    }

    @Test func everyCaseAndReasonHasANonEmptyDescription() {
        for (error, _) in allErrors {
            #expect(!description(error).isEmpty, "\(error)")
            #expect(error.localizedDescription == description(error))
        }
    }

    @Test func everyDescriptionWithAnUnderlyingErrorIncludesItsLocalizedDescription() {
        for (error, underlying) in allErrors {
            guard let underlying else { continue }
            #expect(description(error).contains(underlying.text), "\(error)")
        }
    }

    @Test func cancellationSaysSo() {
        #expect(description(.explicitlyCancelled).lowercased().contains("cancel"))
    }

    @Test func invalidURLIncludesTheValue() {
        #expect(description(.invalidURL(url: "ht tp://bad")).contains("ht tp://bad"))
    }

    @Test func retryFailureIncludesBothErrors() {
        let text = description(.requestRetryFailed(retryError: errorRetryCause, originalError: errorCause))
        #expect(text.contains("the-retry-errorCause"))
        #expect(text.contains("the-errorCause"))
    }

    @Test func moveFailureIncludesSourceDestinationAndError() {
        let text = description(.downloadedFileMoveFailed(error: errorCause, source: errorFileURL, destination: errorOtherURL))
        #expect(text.contains(errorFileURL.path))
        #expect(text.contains(errorOtherURL.path))
        #expect(text.contains("the-errorCause"))
    }

    @Test func unacceptableStatusCodeIncludesTheCode() {
        #expect(description(.responseValidationFailed(reason: .unacceptableStatusCode(code: 418))).contains("418"))
    }

    @Test func contentTypeFailuresIncludeTheAcceptableListAndTheResponseType() {
        let types = ["application/json", "text/plain"]
        let missing = description(.responseValidationFailed(reason: .missingContentType(acceptableContentTypes: types)))
        #expect(missing.contains("application/json,text/plain"))
        let unacceptable = description(.responseValidationFailed(
            reason: .unacceptableContentType(acceptableContentTypes: types, responseContentType: "image/png")))
        #expect(unacceptable.contains("application/json,text/plain"))
        #expect(unacceptable.contains("image/png"))
    }

    @Test func stringSerializationFailureIncludesTheEncoding() {
        let text = description(.responseSerializationFailed(reason: .stringSerializationFailed(encoding: .utf16)))
        #expect(text.contains("\(String.Encoding.utf16)"))
    }

    @Test func invalidEmptyResponseNamesTheTypeAndSuggestsEmpty() {
        let text = description(.responseSerializationFailed(reason: .invalidEmptyResponse(type: "Widget")))
        #expect(text.contains("Widget"))
        #expect(text.contains("Empty"))
    }

    @Test func bodyDataInGETRequestIncludesTheBodyAsUTF8() {
        let text = description(.urlRequestValidationFailed(reason: .bodyDataInGETRequest(Data("body-text".utf8))))
        #expect(text.contains("body-text"))
    }

    @Test func sessionDeinitializedHintsTheSessionMustBeRetained() {
        let text = description(.sessionDeinitialized).lowercased()
        #expect(text.contains("session"))
        #expect(text.contains("reference"))
    }

    @Test func multipartDescriptionsIncludeTheirURL() {
        for (reason, url, _) in multipartReasons {
            guard let url else { continue }
            #expect(description(.multipartEncodingFailed(reason: reason)).contains(url.path), "\(reason)")
        }
    }

    @Test func fileReadFailuresIncludeThePath() {
        #expect(description(.responseSerializationFailed(reason: .inputFileReadFailed(at: errorFileURL)))
            .contains(errorFileURL.path))
        #expect(description(.responseValidationFailed(reason: .dataFileReadFailed(at: errorFileURL)))
            .contains(errorFileURL.path))
    }
}
