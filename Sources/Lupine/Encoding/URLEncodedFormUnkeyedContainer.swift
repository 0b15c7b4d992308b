/// Appends the elements of an array to a node.
struct URLEncodedFormUnkeyedContainer: UnkeyedEncodingContainer {
    let node: URLEncodedFormNode
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncodingOptions

    /// The number of elements encoded through this container.
    private(set) var count = 0

    init(node: URLEncodedFormNode, codingPath: [any CodingKey], options: URLEncodedFormEncodingOptions) {
        self.node = node
        self.codingPath = codingPath
        self.options = options
    }

    mutating func encodeNil() throws {
        // A dropped nil leaves no element, so the following elements' indices close up.
        guard let nilValue = options.nilEncoding.encodeNil() else { return }
        try encode(nilValue)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let (element, path) = nextElement()
        var container = URLEncodedFormSingleValueContainer(node: element, codingPath: path, options: options)
        try container.encode(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let (element, path) = nextElement()
        return KeyedEncodingContainer(URLEncodedFormKeyedContainer<NestedKey>(node: element, codingPath: path, options: options))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let (element, path) = nextElement()
        return URLEncodedFormUnkeyedContainer(node: element, codingPath: path, options: options)
    }

    /// An encoder for the array's own node, as Alamofire gives it: what it encodes lands where
    /// the array is (a keyed container makes it an object), not in a new element. The element
    /// count still advances.
    mutating func superEncoder() -> any Encoder {
        count += 1
        return URLEncodedFormEncoding(node: node, codingPath: codingPath, options: options)
    }

    private mutating func nextElement() -> (URLEncodedFormNode, [any CodingKey]) {
        defer { count += 1 }
        return (node.appendElement(), codingPath + [URLEncodedFormIndexKey(count)])
    }
}
