import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A DownloadRequest's outcome serialized by `serializer` into a `DownloadResponse`.
struct DownloadResponseReading<Serializer: DownloadResponseSerializerProtocol>: ResponseReading {
    typealias Response = DownloadResponse<Serializer.SerializedObject, AFError>

    let serializer: Serializer

    var serializes: Bool { true }
    var parsedEvent: MonitorEvent { .didParseSerializedDownloadResponse }

    func read(_ request: DownloadRequest) -> Response {
        let urlRequest = request.request, response = request.response, fileURL = request.fileURL, error = request.error
        let start = Date()
        let result = Result<Serializer.SerializedObject, any Error> {
            try serializer.serializeDownload(request: urlRequest, response: response, fileURL: fileURL, error: error)
        }.mapError { error -> AFError in
            error.asAFError ?? .responseSerializationFailed(reason: .customSerializationFailed(error: error))
        }
        let end = Date()
        return DownloadResponse(request: urlRequest, response: response, fileURL: fileURL, resumeData: request.resumeData,
                                metrics: nil, serializationDuration: end.timeIntervalSince(start), result: result,
                                timeline: request.timeline.serialized(at: end))
    }

    func report(_ response: Response, of request: DownloadRequest, to monitor: any EventMonitor) {
        monitor.request(request, didParseResponse: response)
    }
}

/// A DownloadRequest's outcome as it is: the file's URL (nil when no file was produced) or the
/// request's error.
struct UnserializedDownloadReading: ResponseReading {
    typealias Response = DownloadResponse<URL?, AFError>

    var serializes: Bool { false }
    var parsedEvent: MonitorEvent { .didParseDownloadResponse }

    func read(_ request: DownloadRequest) -> Response {
        let fileURL = request.fileURL
        let result: AFResult<URL?> = request.error.map { .failure($0) } ?? .success(fileURL)
        return DownloadResponse(request: request.request, response: request.response, fileURL: fileURL,
                                resumeData: request.resumeData, metrics: nil, serializationDuration: 0,
                                result: result, timeline: request.timeline.serialized(at: Date()))
    }

    func report(_ response: Response, of request: DownloadRequest, to monitor: any EventMonitor) {
        monitor.request(request, didParseResponse: response)
    }
}
