import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Produces the body of an upload.
///
/// Called once per attempt, on the Session's request queue, after the URLRequest is built and
/// adapted and before it is sent. A thrown error fails the request with
/// `AFError.createUploadableFailed(error:)` (an `AFError` is passed through unchanged), which the
/// retriers may retry.
public protocol UploadableConvertible: Sendable {
    /// The body to send for this attempt.
    func createUploadable() throws -> UploadRequest.Uploadable
}

extension UploadRequest.Uploadable: UploadableConvertible {
    /// Returns `self`.
    public func createUploadable() throws -> UploadRequest.Uploadable { self }
}

/// Both the source of an upload's URLRequest and of its body.
public protocol UploadConvertible: UploadableConvertible & URLRequestConvertible {}

/// A URLRequestConvertible paired with a body, as the upload overloads of Session build it.
struct Upload: UploadConvertible {
    let request: any URLRequestConvertible
    let uploadable: any UploadableConvertible

    func createUploadable() throws -> UploadRequest.Uploadable {
        try uploadable.createUploadable()
    }

    func asURLRequest() throws -> URLRequest {
        try request.asURLRequest()
    }
}
