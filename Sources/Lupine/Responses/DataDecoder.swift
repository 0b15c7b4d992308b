import Foundation

/// A decoder that turns `Data` into a `Decodable` value; `JSONDecoder` and `PropertyListDecoder` conform.
public protocol DataDecoder: Sendable {
    /// Decodes a value of `type` from `data`.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - data: The bytes to decode.
    /// - Returns: The decoded value.
    /// - Throws: Any error met while decoding.
    func decode<D: Decodable>(_ type: D.Type, from data: Data) throws -> D
}

extension JSONDecoder: DataDecoder {}

extension PropertyListDecoder: DataDecoder {}
