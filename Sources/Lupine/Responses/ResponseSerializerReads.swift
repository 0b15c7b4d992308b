import Foundation

/// Lupine's serializers that read the response only for an empty body (its status code, against
/// `emptyResponseCodes`): for any other body they are given no `HTTPURLResponse`, so none is made.
protocol ReadsResponseOnlyForEmptyBody {}

extension DataResponseSerializer: ReadsResponseOnlyForEmptyBody {}
extension DecodableResponseSerializer: ReadsResponseOnlyForEmptyBody {}

/// Whether a serializer reads the response it is given.
enum ResponseSerializerReads {
    /// False for a serializer of Lupine's that only reads the response of an empty body, when the
    /// body is not empty; true for every other serializer.
    static func response<Serializer>(of serializer: Serializer, data: Data?) -> Bool {
        guard let data, !data.isEmpty else { return true }
        // Asked of the dynamic type first: casting the value to an existential would box it.
        let dynamicType = type(of: serializer)
        if dynamicType is any ReadsResponseOnlyForEmptyBody.Type { return false }
        guard dynamicType is any WrapsResponseSerializer.Type,
              let wrapper = serializer as? any WrapsResponseSerializer else { return true }
        return response(of: wrapper.wrapped, data: data)
    }
}

/// A serializer that hands its work to another.
protocol WrapsResponseSerializer {
    var wrapped: Any { get }
}
