import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    func makeDownloadRequest(_ downloadable: DownloadRequest.Downloadable,
                             interceptor: (any RequestInterceptor)?,
                             shouldAutomaticallyResume: Bool?,
                             destination: DownloadRequest.Destination?) -> DownloadRequest {
        perform(DownloadRequest(downloadable: downloadable, destination: destination,
                                context: requestContext(interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)))
    }
}
