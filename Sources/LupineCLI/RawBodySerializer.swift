import Lupine

/// Hands the body over as it arrived, empty or not, whatever the status: the request commands
/// print every response, so no status or empty body is an error here. A failed request still
/// fails with its `AFError`.
struct RawBodySerializer: DataResponseSerializerProtocol {
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Data {
        if let error { throw error }
        return data ?? Data()
    }
}
