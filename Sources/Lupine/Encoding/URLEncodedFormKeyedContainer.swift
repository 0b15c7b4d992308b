/// Writes the members of an object into a node.
///
/// A named key with an integer value (`URL`'s own keys, an `Int`-backed `CodingKey` enum) writes an
/// array element rather than a member, as in Alamofire: a `URL` property `link` is sent as
/// `link[]=...`, and such a value at the top level is not a keyed root object. A key whose name is a
/// number (a dictionary key such as `"1"` or `7`) stays a member: Alamofire makes those array
/// elements too and so drops or overwrites dictionary entries, which Lupine does not copy.
///
/// Optional members go through `encodeNil(forKey:)` when nil (the `encodeIfPresent` overloads are
/// implemented for that), so ``URLEncodedFormEncoder/NilEncoding`` applies to them; the standard
/// library's defaults would skip them silently.
struct URLEncodedFormKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: URLEncodedFormNode
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncodingOptions

    mutating func encodeNil(forKey key: Key) throws {
        guard let nilValue = options.nilEncoding.encodeNil() else { return }
        try encode(nilValue, forKey: key)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        var container = URLEncodedFormSingleValueContainer(node: child(for: key),
                                                           codingPath: codingPath + [key],
                                                           options: options)
        try container.encode(value)
    }

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }

    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try encodeOptional(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(URLEncodedFormKeyedContainer<NestedKey>(node: child(for: key),
                                                                       codingPath: codingPath + [key],
                                                                       options: options))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        URLEncodedFormUnkeyedContainer(node: child(for: key),
                                       codingPath: codingPath + [key],
                                       options: options)
    }

    /// An encoder for this same object, so a superclass's members join the subclass's (as in Alamofire).
    mutating func superEncoder() -> any Encoder {
        URLEncodedFormEncoding(node: node, codingPath: codingPath, options: options)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        URLEncodedFormEncoding(node: child(for: key), codingPath: codingPath + [key], options: options)
    }

    /// The node a key writes into: an array element for a named key with an integer value, else a member.
    private func child(for key: Key) -> URLEncodedFormNode {
        if let index = key.intValue, Int(key.stringValue) == nil { return node.element(at: index) }
        return node.member(forKey: key.stringValue)
    }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value {
            try encode(value, forKey: key)
        } else {
            try encodeNil(forKey: key)
        }
    }
}
