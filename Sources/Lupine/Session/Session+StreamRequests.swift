import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    func makeDataStreamRequest(_ convertible: any URLRequestConvertible,
                               automaticallyCancelOnStreamError: Bool,
                               interceptor: (any RequestInterceptor)?,
                               shouldAutomaticallyResume: Bool?) -> DataStreamRequest {
        perform(DataStreamRequest(convertible: convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
                                  context: requestContext(interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)))
    }
}
