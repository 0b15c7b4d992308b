import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a data response into a value.
///
/// A serializer runs on the Session's serialization queue after the request finishes (and after validation).
/// An error it throws that is not an `AFError` reaches the caller as
/// `AFError.responseSerializationFailed(reason: .customSerializationFailed(error:))`.
public protocol DataResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The type of value produced.
    associatedtype SerializedObject: Sendable

    /// Turns the response into a value.
    ///
    /// - Parameters:
    ///   - request:  The last `URLRequest` sent, if any.
    ///   - response: The response received, if any.
    ///   - data:     The body received, if any.
    ///   - error:    The error the request or its validation failed with, if any.
    /// - Returns: The value.
    /// - Throws: `error` when it is not nil, or any error met while producing the value.
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> SerializedObject
}

/// Turns a download response (the downloaded file) into a value.
public protocol DownloadResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The type of value produced.
    associatedtype SerializedObject: Sendable

    /// Turns the downloaded file into a value.
    ///
    /// - Parameters:
    ///   - request:  The last `URLRequest` sent, if any.
    ///   - response: The response received, if any.
    ///   - fileURL:  Where the downloaded file is, if the download produced one.
    ///   - error:    The error the request or its validation failed with, if any.
    /// - Returns: The value.
    /// - Throws: `error` when it is not nil, or any error met while producing the value.
    func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?) throws
        -> SerializedObject
}

/// A serializer for both data and download responses, with a preprocessor and a policy for empty bodies.
///
/// An empty body is accepted when the request method is in `emptyRequestMethods` or the status code is in
/// `emptyResponseCodes`; otherwise it is `AFError.ResponseSerializationFailureReason.inputDataNilOrZeroLength`.
public protocol ResponseSerializer<SerializedObject>: DataResponseSerializerProtocol & DownloadResponseSerializerProtocol {
    /// Transforms a non-empty body before it is serialized.
    var dataPreprocessor: any DataPreprocessor { get }
    /// Request methods for which an empty body is acceptable.
    var emptyRequestMethods: Set<HTTPMethod> { get }
    /// Status codes for which an empty body is acceptable.
    var emptyResponseCodes: Set<Int> { get }
}

extension ResponseSerializer {
    /// `PassthroughPreprocessor()`: the body is serialized unchanged.
    public static var defaultDataPreprocessor: any DataPreprocessor { PassthroughPreprocessor() }

    /// `[.head]`: a HEAD response never has a body.
    public static var defaultEmptyRequestMethods: Set<HTTPMethod> { ResponseSerializerDefaults.emptyRequestMethods }

    /// `[204, 205]`: No Content and Reset Content have no body.
    public static var defaultEmptyResponseCodes: Set<Int> { ResponseSerializerDefaults.emptyResponseCodes }

    /// `Self.defaultDataPreprocessor`.
    public var dataPreprocessor: any DataPreprocessor { Self.defaultDataPreprocessor }

    /// `Self.defaultEmptyRequestMethods`.
    public var emptyRequestMethods: Set<HTTPMethod> { Self.defaultEmptyRequestMethods }

    /// `Self.defaultEmptyResponseCodes`.
    public var emptyResponseCodes: Set<Int> { Self.defaultEmptyResponseCodes }

    /// Whether the request's method allows an empty body.
    ///
    /// - Parameter request: The request sent, if any.
    /// - Returns: nil when there is no request or it has no `httpMethod`; otherwise whether the method, compared
    ///   exactly as written, is in `emptyRequestMethods`.
    public func requestAllowsEmptyResponseData(_ request: URLRequest?) -> Bool? {
        guard let method = request?.httpMethod else { return nil }
        return emptyRequestMethods.contains(HTTPMethod(rawValue: method))
    }

    /// Whether the response's status code allows an empty body.
    ///
    /// - Parameter response: The response received, if any.
    /// - Returns: nil when there is no response; otherwise whether its status code is in `emptyResponseCodes`.
    public func responseAllowsEmptyResponseData(_ response: HTTPURLResponse?) -> Bool? {
        guard let response else { return nil }
        return emptyResponseCodes.contains(response.statusCode)
    }

    /// Whether either the request's method or the response's status code allows an empty body.
    ///
    /// - Parameters:
    ///   - request:  The request sent, if any.
    ///   - response: The response received, if any.
    /// - Returns: true when `requestAllowsEmptyResponseData(_:)` or `responseAllowsEmptyResponseData(_:)` is true.
    public func emptyResponseAllowed(forRequest request: URLRequest?, response: HTTPURLResponse?) -> Bool {
        requestAllowsEmptyResponseData(request) == true || responseAllowsEmptyResponseData(response) == true
    }
}

extension DownloadResponseSerializerProtocol where Self: DataResponseSerializerProtocol {
    /// Reads the downloaded file and serializes its contents with `serialize(request:response:data:error:)`.
    ///
    /// - Parameters:
    ///   - request:  The last `URLRequest` sent, if any.
    ///   - response: The response received, if any.
    ///   - fileURL:  Where the downloaded file is, if the download produced one.
    ///   - error:    The error the request or its validation failed with, if any.
    /// - Returns: The value `serialize(request:response:data:error:)` produces from the file's contents.
    /// - Throws: `error` unchanged when it is not nil; `AFError.responseSerializationFailed` with `.inputFileNil`
    ///   when there is no file or `.inputFileReadFailed(at:)` when it cannot be read; or what `serialize` throws.
    public func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?)
        throws -> Self.SerializedObject {
        if let error { throw error }

        guard let fileURL else {
            throw AFError.responseSerializationFailed(reason: .inputFileNil)
        }

        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch {
            throw AFError.responseSerializationFailed(reason: .inputFileReadFailed(at: fileURL))
        }

        return try serialize(request: request, response: response, data: data, error: nil)
    }
}

/// The default sets, built once: every serializer a request adds reads them.
enum ResponseSerializerDefaults {
    static let emptyRequestMethods: Set<HTTPMethod> = [.head]
    static let emptyResponseCodes: Set<Int> = [204, 205]
}
