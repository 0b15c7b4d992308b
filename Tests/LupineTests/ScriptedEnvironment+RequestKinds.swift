import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine

// The request kinds beside DataRequest, made by ScriptedEnvironment as a Session makes them: the
// same context (root queue, a serialization queue targeting it, the environment's defaults), no
// interceptor and no monitor of the environment's own.
extension ScriptedEnvironment {
    /// A download of `url` to `destination` (the default destination when nil).
    func downloadRequest(_ url: URL, to destination: DownloadRequest.Destination? = nil) -> DownloadRequest {
        DownloadRequest(downloadable: .request(URLRequest(url: url)), destination: destination, context: requestContext())
    }

    /// A download continuing from `resumeData`, to `destination`.
    func downloadRequest(resumingWith resumeData: Data, to destination: DownloadRequest.Destination? = nil) -> DownloadRequest {
        DownloadRequest(downloadable: .resumeData(resumeData), destination: destination, context: requestContext())
    }

    /// A POST to `url` of the body `uploadable` makes for each attempt.
    func uploadRequest(_ uploadable: any UploadableConvertible, to url: URL) -> UploadRequest {
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = "POST"
        return UploadRequest(convertible: Upload(request: urlRequest, uploadable: uploadable), fileManager: .default,
                             context: requestContext())
    }

    /// A POST of `form` to `url`, encoded in memory up to `threshold` bytes and to a file in
    /// `fileManager`'s temporary directory above it.
    func uploadRequest(multipartFormData form: MultipartFormData, usingThreshold threshold: UInt64, to url: URL,
                       fileManager: FileManager) -> UploadRequest {
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = "POST"
        let upload = MultipartUpload(multipartFormData: form, encodingMemoryThreshold: threshold, request: urlRequest,
                                     fileManager: fileManager)
        return UploadRequest(convertible: upload, fileManager: fileManager, context: requestContext())
    }

    /// A stream request for `url`.
    func dataStreamRequest(_ url: URL) -> DataStreamRequest {
        DataStreamRequest(convertible: URLRequest(url: url), automaticallyCancelOnStreamError: false, context: requestContext())
    }

    private func requestContext() -> RequestContext {
        RequestContext(underlyingQueue: rootQueue,
                       serializationQueue: DispatchQueue(label: "lupine.tests.serialization", target: rootQueue),
                       eventMonitor: nil, interceptor: nil, environment: self, shouldAutomaticallyResume: nil,
                       defaultQueue: rootQueue, defaults: defaults)
    }
}
