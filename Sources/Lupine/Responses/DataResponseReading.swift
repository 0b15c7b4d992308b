import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A DataRequest's outcome serialized by `serializer` into a `DataResponse`.
struct DataResponseReading<Serializer: DataResponseSerializerProtocol>: ResponseReading {
    typealias Response = DataResponse<Serializer.SerializedObject, AFError>

    let serializer: Serializer

    var serializes: Bool { true }
    var parsedEvent: MonitorEvent { .didParseSerializedDataResponse }

    // Specialized for the non-generic serializers Lupine ships (as `ResponseHandler`'s steps are):
    // generic code looks up the metadata of each generic type it touches, on every response.
    @_specialize(exported: false, kind: full, where Serializer == DataResponseSerializer)
    @_specialize(exported: false, kind: full, where Serializer == StringResponseSerializer)
    func read(_ request: DataRequest) -> Response {
        let urlRequest = request.request, lazyResponse = request.lazyResponse, data = request.data, error = request.error
        let start = Date()
        // Lupine's data and decodable serializers read the response only for an empty body.
        let response = ResponseSerializerReads.response(of: serializer, data: data) ? lazyResponse?.response : nil
        let result = Result<Serializer.SerializedObject, any Error> {
            try serializer.serialize(request: urlRequest, response: response, data: data, error: error)
        }.mapError { error -> AFError in
            error.asAFError ?? .responseSerializationFailed(reason: .customSerializationFailed(error: error))
        }
        let end = Date()
        return DataResponse(request: urlRequest, responseSource: .lazy(lazyResponse), data: data, metrics: nil,
                            serializationDuration: end.timeIntervalSince(start), result: result,
                            timeline: request.timeline.serialized(at: end))
    }

    func report(_ response: Response, of request: DataRequest, to monitor: any EventMonitor) {
        monitor.request(request, didParseResponse: response)
    }
}

/// A DataRequest's outcome as it is: the body received (`Data?`) or the request's error.
struct UnserializedDataReading: ResponseReading {
    typealias Response = DataResponse<Data?, AFError>

    var serializes: Bool { false }
    var parsedEvent: MonitorEvent { .didParseDataResponse }

    func read(_ request: DataRequest) -> Response {
        let data = request.data
        let result: AFResult<Data?> = request.error.map { .failure($0) } ?? .success(data)
        return DataResponse(request: request.request, responseSource: .lazy(request.lazyResponse), data: data, metrics: nil,
                            serializationDuration: 0, result: result, timeline: request.timeline.serialized(at: Date()))
    }

    func report(_ response: Response, of request: DataRequest, to monitor: any EventMonitor) {
        monitor.request(request, didParseResponse: response)
    }
}
