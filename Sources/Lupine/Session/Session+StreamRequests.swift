import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    func makeDataStreamRequest(_ convertible: any URLRequestConvertible,
                               automaticallyCancelOnStreamError: Bool,
                               interceptor: (any RequestInterceptor)?,
                               shouldAutomaticallyResume: Bool?) -> DataStreamRequest {
        let request = DataStreamRequest(convertible: convertible,
                                        automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
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
