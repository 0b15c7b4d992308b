import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    func makeWebSocketRequest(_ convertible: any URLRequestConvertible,
                              configuration: WebSocketRequest.Configuration,
                              interceptor: (any RequestInterceptor)?,
                              shouldAutomaticallyResume: Bool?) -> WebSocketRequest {
        perform(WebSocketRequest(convertible: convertible, configuration: configuration,
                                 context: requestContext(interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)))
    }
}
