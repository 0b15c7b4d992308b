import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The URLRequest and body of a multipart upload: the request gets the form's `Content-Type`, and
/// the body is encoded in memory below the threshold or written to a temporary file above it.
///
/// The form is encoded once, on the first attempt, and every later attempt (a retry) sends that
/// same body, as Alamofire does: a form's stream parts can be read only once, and parts appended
/// after the first encoding (by a convertible that appends in `asURLRequest()`) are not sent. A
/// failure to encode is kept too. A temporary file lives until the request is cleaned up.
///
/// `@unchecked Sendable`: the form is complete before the upload overload returns; afterwards it is
/// only read, once, on the Session's serial request queue, under `encoded`'s lock.
final class MultipartUpload: UploadConvertible, @unchecked Sendable {
    let multipartFormData: MultipartFormData
    let encodingMemoryThreshold: UInt64
    let request: any URLRequestConvertible
    let fileManager: FileManager

    /// The outcome of the first `createUploadable()`.
    private let encoded = Mutex<Result<UploadRequest.Uploadable, any Error>?>(nil)

    init(multipartFormData: MultipartFormData, encodingMemoryThreshold: UInt64,
         request: any URLRequestConvertible, fileManager: FileManager) {
        self.multipartFormData = multipartFormData
        self.encodingMemoryThreshold = encodingMemoryThreshold
        self.request = request
        self.fileManager = fileManager
    }

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

    /// Whether the next `createUploadable()` encodes the form, which reads its file parts and may
    /// write a temporary file (the first one does; later ones reuse its outcome).
    var encodesOnNextUse: Bool { encoded.withLock { $0 == nil } }

    func createUploadable() throws -> UploadRequest.Uploadable {
        try encoded.withLock { encoded -> Result<UploadRequest.Uploadable, any Error> in
            if let encoded { return encoded }
            let result = Result {
                try multipartFormData.encodedUploadable(threshold: encodingMemoryThreshold,
                                                        temporaryDirectory: temporaryDirectory)
            }
            encoded = result
            return result
        }.get()
    }
}
