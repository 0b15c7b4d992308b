import Foundation

/// Turns one chunk of a streamed response body into a value.
///
/// Each chunk is serialized on its own, as it arrives: a value split across two chunks is not
/// reassembled. An error thrown here reaches the stream handler as a `.failure`; an error that is
/// not an `AFError` becomes `.responseSerializationFailed(reason: .customSerializationFailed(error:))`.
public protocol DataStreamSerializer: Sendable {
    /// The value made from a chunk.
    associatedtype SerializedObject: Sendable

    /// Serializes one chunk.
    func serialize(_ data: Data) throws -> SerializedObject
}

/// Decodes each chunk, after its preprocessor, as `T`.
public struct DecodableStreamSerializer<T: Decodable>: DataStreamSerializer where T: Sendable {
    /// The decoder used.
    public let decoder: any DataDecoder
    /// Runs on each chunk before decoding.
    public let dataPreprocessor: any DataPreprocessor

    /// Creates a serializer decoding with `decoder` after `dataPreprocessor`.
    public init(decoder: any DataDecoder = JSONDecoder(), dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()) {
        self.decoder = decoder
        self.dataPreprocessor = dataPreprocessor
    }

    /// Decodes `data` as `T`.
    ///
    /// - Throws: `AFError.responseSerializationFailed(reason: .decodingFailed(error:))` when the
    ///   decoder fails; an error of the preprocessor as it was thrown.
    public func serialize(_ data: Data) throws -> T {
        let preprocessed = try dataPreprocessor.preprocess(data)
        do {
            return try decoder.decode(T.self, from: preprocessed)
        } catch {
            throw AFError.responseSerializationFailed(reason: .decodingFailed(error: error))
        }
    }
}

/// Hands each chunk on unchanged.
public struct PassthroughStreamSerializer: DataStreamSerializer {
    /// Creates the serializer.
    public init() {}

    /// Returns `data`.
    public func serialize(_ data: Data) throws -> Data { data }
}

/// Decodes each chunk as UTF-8; invalid sequences become U+FFFD.
public struct StringStreamSerializer: DataStreamSerializer {
    /// Creates the serializer.
    public init() {}

    /// Returns `data` decoded as UTF-8.
    public func serialize(_ data: Data) throws -> String {
        String(decoding: data, as: UTF8.self)
    }
}

extension DataStreamSerializer {
    /// A `DecodableStreamSerializer` for `type`.
    public static func decodable<T: Decodable>(of type: T.Type,
                                               decoder: any DataDecoder = JSONDecoder(),
                                               dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()) -> Self
        where Self == DecodableStreamSerializer<T> {
        DecodableStreamSerializer(decoder: decoder, dataPreprocessor: dataPreprocessor)
    }
}

extension DataStreamSerializer where Self == PassthroughStreamSerializer {
    /// A `PassthroughStreamSerializer`.
    public static var passthrough: PassthroughStreamSerializer { PassthroughStreamSerializer() }
}

extension DataStreamSerializer where Self == StringStreamSerializer {
    /// A `StringStreamSerializer`.
    public static var string: StringStreamSerializer { StringStreamSerializer() }
}
