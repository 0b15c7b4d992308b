import Foundation

/// What a `ResponseHandler` reads of its request and how: a serializer's value (on the
/// serialization queue, its failure asking the retriers) or the outcome as it is.
protocol ResponseReading: Sendable {
    /// The request kind read.
    associatedtype Owner: Request
    /// The response delivered (`DataResponse` or `DownloadResponse`).
    associatedtype Response: HandlerResponse

    /// Whether a serializer runs: on the serialization queue, and a failure of it asks the
    /// retriers. An unserialized read runs on the request's queue and asks nobody.
    var serializes: Bool { get }
    /// The monitor event that reports the response.
    var parsedEvent: MonitorEvent { get }

    /// Reads the request's outcome into a response.
    func read(_ request: Owner) -> Response
    /// Tells `monitor` that `request` parsed `response`.
    func report(_ response: Response, of request: Owner, to monitor: any EventMonitor)
}

/// A response a handler delivers: its failure can be read and replaced.
protocol HandlerResponse: Sendable {
    /// The failure, if any.
    var error: AFError? { get }
    /// The same response with `error` as its result (a retrier's `.requestRetryFailed`).
    func replacingResult(with error: AFError) -> Self
}

extension DataResponse: HandlerResponse where Failure == AFError {
    func replacingResult(with error: AFError) -> DataResponse {
        DataResponse(request: request, responseSource: responseSource, data: data, metrics: nil,
                     serializationDuration: serializationDuration, result: .failure(error), timeline: timeline)
    }
}

extension DownloadResponse: HandlerResponse where Failure == AFError {
    func replacingResult(with error: AFError) -> DownloadResponse {
        DownloadResponse(request: request, response: response, fileURL: fileURL, resumeData: resumeData, metrics: nil,
                         serializationDuration: serializationDuration, result: .failure(error), timeline: timeline)
    }
}
