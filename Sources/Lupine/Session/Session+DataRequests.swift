import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    func makeDataRequest(_ convertible: any URLRequestConvertible,
                         interceptor: (any RequestInterceptor)?,
                         shouldAutomaticallyResume: Bool?) -> DataRequest {
        perform(DataRequest(convertible: convertible,
                            context: requestContext(interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)))
    }

    /// What a new request is made with. Its underlying queue is the root queue, as in Alamofire
    /// (a queue per request cost an allocation and a dispatch wake-up per request, and bought
    /// nothing: request state is lock-protected).
    func requestContext(interceptor: (any RequestInterceptor)?, shouldAutomaticallyResume: Bool?) -> RequestContext {
        RequestContext(underlyingQueue: rootQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
                       interceptor: interceptor, environment: self, shouldAutomaticallyResume: shouldAutomaticallyResume,
                       defaultQueue: callbackQueue, defaults: requestDefaults)
    }
}
