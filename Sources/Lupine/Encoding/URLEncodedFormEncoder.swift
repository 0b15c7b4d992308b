import Foundation

/// Encodes an `Encodable` value as an `application/x-www-form-urlencoded` string.
///
/// The value must encode as a keyed container (a struct, a class or a `[String: ...]` dictionary).
/// Nested objects become key paths (`nested[key]` by default), arrays repeat their key
/// (`list[]` by default), and every key and value is percent-escaped with ``allowedCharacters``.
///
/// ```swift
/// struct Search: Encodable { let query: String; let tags: [String] }
/// let form: String = try URLEncodedFormEncoder().encode(Search(query: "a b", tags: ["x", "y"]))
/// // "query=a%20b&tags%5B%5D=x&tags%5B%5D=y"
/// ```
///
/// Not `Sendable`: its custom strategies are non-`@Sendable` closures.
public final class URLEncodedFormEncoder {
    /// The error thrown when the encoded value is not a keyed container.
    public enum Error: Swift.Error {
        /// The top-level value encoded as something other than an object; the string describes it.
        case invalidRootObject(String)
    }

    /// Whether the serialized `key=value` segments are sorted at each level; `true` by default.
    ///
    /// Sorting makes dictionaries encode the same way every time; without it, `Encodable` types keep
    /// their declaration order and dictionaries their (unstable) iteration order.
    public let alphabetizeKeyValuePairs: Bool
    /// How array element keys are written.
    public let arrayEncoding: ArrayEncoding
    /// How `Bool` values are written.
    public let boolEncoding: BoolEncoding
    /// How `Data` values are written.
    public let dataEncoding: DataEncoding
    /// How `Date` values are written.
    public let dateEncoding: DateEncoding
    /// How the full key of each value is transformed.
    public let keyEncoding: KeyEncoding
    /// How nested object keys are appended to their parent's key.
    public let keyPathEncoding: KeyPathEncoding
    /// How `nil` values are written.
    public let nilEncoding: NilEncoding
    /// How spaces are written.
    public let spaceEncoding: SpaceEncoding
    /// The characters left unescaped in keys and values.
    public var allowedCharacters: CharacterSet

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - alphabetizeKeyValuePairs: Whether segments are sorted at each level; `true` by default.
    ///   - arrayEncoding: How array element keys are written; `.brackets` by default.
    ///   - boolEncoding: How `Bool` values are written; `.numeric` by default.
    ///   - dataEncoding: How `Data` values are written; `.base64` by default.
    ///   - dateEncoding: How `Date` values are written; `.deferredToDate` by default.
    ///   - keyEncoding: How keys are transformed; `.useDefaultKeys` by default.
    ///   - keyPathEncoding: How nested keys are appended; `.brackets` by default.
    ///   - nilEncoding: How `nil` values are written; `.dropKey` by default.
    ///   - spaceEncoding: How spaces are written; `.percentEscaped` by default.
    ///   - allowedCharacters: The characters left unescaped; `.afURLQueryAllowed` by default.
    public init(alphabetizeKeyValuePairs: Bool = true,
                arrayEncoding: ArrayEncoding = .brackets,
                boolEncoding: BoolEncoding = .numeric,
                dataEncoding: DataEncoding = .base64,
                dateEncoding: DateEncoding = .deferredToDate,
                keyEncoding: KeyEncoding = .useDefaultKeys,
                keyPathEncoding: KeyPathEncoding = .brackets,
                nilEncoding: NilEncoding = .dropKey,
                spaceEncoding: SpaceEncoding = .percentEscaped,
                allowedCharacters: CharacterSet = .afURLQueryAllowed) {
        self.alphabetizeKeyValuePairs = alphabetizeKeyValuePairs
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dataEncoding = dataEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
        self.keyPathEncoding = keyPathEncoding
        self.nilEncoding = nilEncoding
        self.spaceEncoding = spaceEncoding
        self.allowedCharacters = allowedCharacters
    }

    /// Encodes a value as a form string.
    ///
    /// - Parameter value: The value; it must encode as a keyed container.
    /// - Returns: The form string, for example `a=1&b=2`.
    /// - Throws: ``Error/invalidRootObject(_:)`` when the value is not keyed, an `EncodingError`, or
    ///   the error of a custom strategy or of the value's own `encode(to:)`.
    public func encode(_ value: any Encodable) throws -> String {
        let root = URLEncodedFormNode()
        let encoding = URLEncodedFormEncoding(
            node: root,
            codingPath: [],
            options: URLEncodedFormEncodingOptions(boolEncoding: boolEncoding,
                                                   dataEncoding: dataEncoding,
                                                   dateEncoding: dateEncoding,
                                                   nilEncoding: nilEncoding)
        )
        try value.encode(to: encoding)

        let pairs: [(key: String, value: URLEncodedFormComponent)]
        switch root.component {
        case nil:
            // Nothing was written (an empty struct, dictionary or array): an empty form.
            pairs = []
        case let .object(object)?:
            pairs = object
        case let component?:
            throw Error.invalidRootObject("\(component)")
        }

        let serializer = URLEncodedFormSerializer(alphabetizeKeyValuePairs: alphabetizeKeyValuePairs,
                                                  arrayEncoding: arrayEncoding,
                                                  keyEncoding: keyEncoding,
                                                  keyPathEncoding: keyPathEncoding,
                                                  spaceEncoding: spaceEncoding,
                                                  allowedCharacters: allowedCharacters)
        return serializer.serialize(pairs)
    }

    /// Encodes a value as the UTF-8 bytes of its form string.
    ///
    /// - Parameter value: The value; it must encode as a keyed container.
    /// - Returns: The form string's UTF-8 bytes.
    /// - Throws: The same errors as the `String`-returning `encode(_:)`.
    public func encode(_ value: any Encodable) throws -> Data {
        let string: String = try encode(value)
        return Data(string.utf8)
    }
}
