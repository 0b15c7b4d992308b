import Foundation

/// Transforms a response body before a `ResponseSerializer` serializes it.
///
/// Serializers call it only for a non-empty body.
public protocol DataPreprocessor: Sendable {
    /// Transforms the body.
    ///
    /// - Parameter data: The body as received.
    /// - Returns: The body to serialize.
    /// - Throws: Any error; the serializer rethrows it.
    func preprocess(_ data: Data) throws -> Data
}

/// A `DataPreprocessor` that returns the body unchanged.
public struct PassthroughPreprocessor: DataPreprocessor {
    /// Creates the preprocessor.
    public init() {}

    /// Returns `data` unchanged.
    ///
    /// - Parameter data: The body as received.
    /// - Returns: `data`.
    public func preprocess(_ data: Data) throws -> Data {
        data
    }
}

/// A `DataPreprocessor` that removes the `)]}',` line Google prefixes JSON with to defeat cross-site script
/// inclusion (XSSI).
public struct GoogleXSSIPreprocessor: DataPreprocessor {
    /// The six bytes removed when the body starts with them: `)]}',` and a newline.
    static let prefix = Data(")]}',\n".utf8)

    /// Creates the preprocessor.
    public init() {}

    /// Removes a leading `)]}',\n` when present.
    ///
    /// - Parameter data: The body as received.
    /// - Returns: The body without the prefix, or `data` unchanged when it does not start with it.
    public func preprocess(_ data: Data) throws -> Data {
        guard data.starts(with: Self.prefix) else { return data }
        return Data(data.dropFirst(Self.prefix.count))
    }
}

extension DataPreprocessor where Self == PassthroughPreprocessor {
    /// A `PassthroughPreprocessor`.
    public static var passthrough: PassthroughPreprocessor { PassthroughPreprocessor() }
}

extension DataPreprocessor where Self == GoogleXSSIPreprocessor {
    /// A `GoogleXSSIPreprocessor`.
    public static var googleXSSI: GoogleXSSIPreprocessor { GoogleXSSIPreprocessor() }
}
