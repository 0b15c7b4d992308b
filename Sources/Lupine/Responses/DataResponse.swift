import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `DataResponse` whose failure is an `AFError`: what every built-in `response...` handler delivers.
public typealias AFDataResponse<Success> = DataResponse<Success, AFError>

/// Everything known about a finished data or upload request, together with the serialized result.
public struct DataResponse<Success, Failure: Error>: Sendable where Success: Sendable, Failure: Sendable {
    /// The last `URLRequest` sent, if one was created.
    public let request: URLRequest?
    /// The last response received, if any.
    public var response: HTTPURLResponse? { responseSource.response }
    /// Where `response` comes from: made by the pipeline only when read (see `LazyHTTPResponse`).
    let responseSource: ResponseSource
    /// The body received, if any.
    public let data: Data?
    /// Always nil in Lupine: there is no `URLSessionTask` to collect metrics from. Kept so code written for
    /// Alamofire compiles.
    public let metrics: URLSessionTaskMetrics?
    /// The seconds the serializer took; 0 for an unserialized response.
    public let serializationDuration: TimeInterval
    /// When each stage of the request happened (Lupine's stand-in for `metrics`).
    public let timeline: Timeline
    /// The serialized value, or the failure.
    public let result: Result<Success, Failure>

    /// The serialized value, or nil when the result is a failure.
    public var value: Success? {
        guard case let .success(value) = result else { return nil }
        return value
    }

    /// The failure, or nil when the result is a success.
    public var error: Failure? {
        guard case let .failure(error) = result else { return nil }
        return error
    }

    /// Creates a response from its parts.
    ///
    /// - Parameters:
    ///   - request:               The last `URLRequest` sent.
    ///   - response:              The last response received.
    ///   - data:                  The body received.
    ///   - metrics:               Task metrics; Lupine passes nil.
    ///   - serializationDuration: The seconds the serializer took.
    ///   - result:                The serialized value or the failure.
    public init(request: URLRequest?,
                response: HTTPURLResponse?,
                data: Data?,
                metrics: URLSessionTaskMetrics?,
                serializationDuration: TimeInterval,
                result: Result<Success, Failure>) {
        self.init(request: request,
                  response: response,
                  data: data,
                  metrics: metrics,
                  serializationDuration: serializationDuration,
                  result: result,
                  timeline: Timeline())
    }

    /// Creates a response from its parts and the request's `timeline`.
    public init(request: URLRequest?,
                response: HTTPURLResponse?,
                data: Data?,
                metrics: URLSessionTaskMetrics?,
                serializationDuration: TimeInterval,
                result: Result<Success, Failure>,
                timeline: Timeline) {
        self.init(request: request, responseSource: .made(response), data: data, metrics: metrics,
                  serializationDuration: serializationDuration, result: result, timeline: timeline)
    }

    init(request: URLRequest?,
         responseSource: ResponseSource,
         data: Data?,
         metrics: URLSessionTaskMetrics?,
         serializationDuration: TimeInterval,
         result: Result<Success, Failure>,
         timeline: Timeline) {
        self.request = request
        self.responseSource = responseSource
        self.data = data
        self.metrics = metrics
        self.serializationDuration = serializationDuration
        self.result = result
        self.timeline = timeline
    }
}

extension DataResponse: CustomStringConvertible, CustomDebugStringConvertible {
    /// The result alone, for example `success(42)` or `failure(...)`.
    public var description: String {
        "\(result)"
    }

    /// A multi-line dump of the request (method, URL, sorted headers, body), the response (status code, sorted
    /// headers, body when it is short text), the network and serialization durations, and the result.
    ///
    /// A body is printed only when it is at most 100 000 bytes and its `Content-Type` contains `json`, `xml`
    /// or `text`; otherwise its size is printed.
    public var debugDescription: String {
        ResponseDescription.debugDescription(request: request,
                                             response: response,
                                             responseBody: .data(data),
                                             metrics: metrics,
                                             serializationDuration: serializationDuration,
                                             result: "\(result)")
    }
}

extension DataResponse {
    /// Transforms the success value, keeping the failure and every other property.
    ///
    /// - Parameter transform: Called with the success value, if there is one.
    /// - Returns: A response holding the transformed value, or the same failure.
    public func map<NewSuccess>(_ transform: (Success) -> NewSuccess) -> DataResponse<NewSuccess, Failure> {
        DataResponse<NewSuccess, Failure>(request: request,
                                          responseSource: responseSource,
                                          data: data,
                                          metrics: metrics,
                                          serializationDuration: serializationDuration,
                                          result: result.map(transform),
                                        timeline: timeline)
    }

    /// Transforms the success value with a closure that may throw; a thrown error becomes the failure.
    ///
    /// - Parameter transform: Called with the success value, if there is one.
    /// - Returns: A response holding the transformed value, the thrown error, or the same failure.
    public func tryMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> DataResponse<NewSuccess, any Error> {
        DataResponse<NewSuccess, any Error>(request: request,
                                            responseSource: responseSource,
                                            data: data,
                                            metrics: metrics,
                                            serializationDuration: serializationDuration,
                                            result: result.tryMap(transform),
                                        timeline: timeline)
    }

    /// Transforms the failure, keeping the success value and every other property.
    ///
    /// - Parameter transform: Called with the failure, if there is one.
    /// - Returns: A response holding the same value, or the transformed failure.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DataResponse<Success, NewFailure> {
        DataResponse<Success, NewFailure>(request: request,
                                          responseSource: responseSource,
                                          data: data,
                                          metrics: metrics,
                                          serializationDuration: serializationDuration,
                                          result: result.mapError(transform),
                                        timeline: timeline)
    }

    /// Transforms the failure with a closure that may throw; a thrown error becomes the new failure.
    ///
    /// - Parameter transform: Called with the failure, if there is one.
    /// - Returns: A response holding the same value, the transformed failure, or the thrown error.
    public func tryMapError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure)
        -> DataResponse<Success, any Error> {
        DataResponse<Success, any Error>(request: request,
                                         responseSource: responseSource,
                                         data: data,
                                         metrics: metrics,
                                         serializationDuration: serializationDuration,
                                         result: result.tryMapError(transform),
                                        timeline: timeline)
    }
}
