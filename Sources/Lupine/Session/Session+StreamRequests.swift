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

    /// A DataStreamRequest whose body is made for each hop by `body` (nil there sends none), not
    /// taken from the URLRequest: a body produced while it is sent, with its length when known.
    /// For the integrations of this package (the OpenAPI transport); not Alamofire API.
    package func streamRequest(_ convertible: any URLRequestConvertible,
                               body: @escaping DataStreamRequest.BodySource,
                               interceptor: (any RequestInterceptor)? = nil,
                               shouldAutomaticallyResume: Bool? = nil) -> DataStreamRequest {
        perform(DataStreamRequest(convertible: convertible, automaticallyCancelOnStreamError: false, bodySource: body,
                                  context: requestContext(interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume)))
    }
}
