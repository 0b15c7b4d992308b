import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    func makeWebSocketRequest(_ convertible: any URLRequestConvertible,
                              configuration: WebSocketRequest.Configuration,
                              interceptor: (any RequestInterceptor)?,
                              shouldAutomaticallyResume: Bool?) -> WebSocketRequest {
        let request = WebSocketRequest(convertible: convertible,
                                       configuration: configuration,
                                       underlyingQueue: makeUnderlyingQueue(),
                                       serializationQueue: serializationQueue,
                                       eventMonitor: eventMonitor,
                                       interceptor: interceptor,
                                       delegate: self,
                                       shouldAutomaticallyResume: shouldAutomaticallyResume,
                                       defaultQueue: callbackQueue)
        perform(request)
        return request
    }
}
