/// A type that has a value to stand for an empty body.
///
/// `DecodableResponseSerializer` returns `emptyValue()` when the body is empty and the request method or
/// status code allows that; a type without this conformance gets
/// `AFError.ResponseSerializationFailureReason.invalidEmptyResponse(type:)` instead.
public protocol EmptyResponse: Sendable {
    /// The value that stands for an empty body.
    ///
    /// - Returns: The empty value of `Self`.
    static func emptyValue() -> Self
}

/// The value of a response that has no body, such as a 204 No Content: decode `Empty.self` when no body is
/// expected.
public struct Empty: Hashable, Codable, Sendable {
    /// The one `Empty` value.
    public static let value = Empty()
}

extension Empty: EmptyResponse {
    /// `Empty.value`.
    ///
    /// - Returns: `Empty.value`.
    public static func emptyValue() -> Empty {
        value
    }
}
