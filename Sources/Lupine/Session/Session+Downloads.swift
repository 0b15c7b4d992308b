import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    func makeDownloadRequest(_ downloadable: DownloadRequest.Downloadable,
                             interceptor: (any RequestInterceptor)?,
                             shouldAutomaticallyResume: Bool?,
                             destination: DownloadRequest.Destination?) -> DownloadRequest {
        let request = DownloadRequest(downloadable: downloadable,
                                      underlyingQueue: makeUnderlyingQueue(),
                                      serializationQueue: serializationQueue,
                                      eventMonitor: eventMonitor,
                                      interceptor: interceptor,
                                      delegate: self,
                                      shouldAutomaticallyResume: shouldAutomaticallyResume,
                                      defaultQueue: callbackQueue,
                                      destination: destination)
        perform(request)
        return request
    }
}
