/// Writes the members of an object into a node.
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
        var container = URLEncodedFormSingleValueContainer(node: node.member(forKey: key.stringValue),
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
        KeyedEncodingContainer(URLEncodedFormKeyedContainer<NestedKey>(node: node.member(forKey: key.stringValue),
                                                                       codingPath: codingPath + [key],
                                                                       options: options))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        URLEncodedFormUnkeyedContainer(node: node.member(forKey: key.stringValue),
                                       codingPath: codingPath + [key],
                                       options: options)
    }

    /// An encoder for this same object, so a superclass's members join the subclass's (as in Alamofire).
    mutating func superEncoder() -> any Encoder {
        URLEncodedFormEncoding(node: node, codingPath: codingPath, options: options)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        URLEncodedFormEncoding(node: node.member(forKey: key.stringValue), codingPath: codingPath + [key], options: options)
    }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value {
            try encode(value, forKey: key)
        } else {
            try encodeNil(forKey: key)
        }
    }
}
