import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `DownloadResponseSerializerProtocol` that returns the downloaded file's URL, without reading the file.
public struct URLResponseSerializer: DownloadResponseSerializerProtocol {
    /// Creates the serializer.
    public init() {}

    /// Returns where the downloaded file is.
    ///
    /// - Parameters:
    ///   - request:  The last `URLRequest` sent, if any.
    ///   - response: The response received, if any.
    ///   - fileURL:  Where the downloaded file is, if the download produced one.
    ///   - error:    The error the request or its validation failed with, if any.
    /// - Returns: `fileURL`.
    /// - Throws: `error` unchanged when it is not nil; `AFError.responseSerializationFailed` with `.inputFileNil`
    ///   when there is no file.
    public func serializeDownload(request: URLRequest?,
                                  response: HTTPURLResponse?,
                                  fileURL: URL?,
                                  error: (any Error)?) throws -> URL {
        if let error { throw error }

        guard let fileURL else {
            throw AFError.responseSerializationFailed(reason: .inputFileNil)
        }
        return fileURL
    }
}

extension DownloadResponseSerializerProtocol where Self == URLResponseSerializer {
    /// A `URLResponseSerializer`.
    public static var url: URLResponseSerializer { URLResponseSerializer() }
}
