import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLRequest and body of a multipart upload: the request gets the form's `Content-Type`, and
/// the body is encoded in memory below the threshold or written to a temporary file above it.
///
/// `@unchecked Sendable`: the form is complete before the upload overload returns; afterwards it is
/// only read, once per attempt, on the Session's serial request queue.
struct MultipartUpload: UploadConvertible, @unchecked Sendable {
    let multipartFormData: MultipartFormData
    let encodingMemoryThreshold: UInt64
    let request: any URLRequestConvertible
    let fileManager: FileManager

    /// Where large forms are written: `<temporary directory>/org.alamofire.manager/multipart.form.data`.
    var temporaryDirectory: URL {
        fileManager.temporaryDirectory
            .appendingPathComponent("org.alamofire.manager")
            .appendingPathComponent("multipart.form.data")
    }

    func asURLRequest() throws -> URLRequest {
        var urlRequest = try request.asURLRequest()
        urlRequest.headers.add(.contentType(multipartFormData.contentType))
        return urlRequest
    }

    func createUploadable() throws -> UploadRequest.Uploadable {
        try multipartFormData.encodedUploadable(threshold: encodingMemoryThreshold, temporaryDirectory: temporaryDirectory)
    }
}
