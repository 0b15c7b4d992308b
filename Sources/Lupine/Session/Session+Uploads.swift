import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    func makeUploadRequest(_ convertible: any UploadConvertible,
                           interceptor: (any RequestInterceptor)?,
                           shouldAutomaticallyResume: Bool?,
                           fileManager: FileManager) -> UploadRequest {
        perform(UploadRequest(convertible: convertible, fileManager: fileManager,
                              context: requestContext(interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)))
    }

    func makeUploadRequest(_ uploadable: UploadRequest.Uploadable,
                           with convertible: any URLRequestConvertible,
                           interceptor: (any RequestInterceptor)?,
                           shouldAutomaticallyResume: Bool?,
                           fileManager: FileManager) -> UploadRequest {
        makeUploadRequest(Upload(request: convertible, uploadable: uploadable), interceptor: interceptor,
                          shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    func makeMultipartUploadRequest(_ multipartFormData: MultipartFormData,
                                    with convertible: any URLRequestConvertible,
                                    threshold: UInt64,
                                    interceptor: (any RequestInterceptor)?,
                                    shouldAutomaticallyResume: Bool?,
                                    fileManager: FileManager) -> UploadRequest {
        let upload = MultipartUpload(multipartFormData: multipartFormData, encodingMemoryThreshold: threshold,
                                     request: convertible, fileManager: fileManager)
        return makeUploadRequest(upload, interceptor: interceptor,
                                 shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }
}
