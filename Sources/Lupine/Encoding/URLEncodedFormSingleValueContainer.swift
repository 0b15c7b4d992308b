import Foundation

/// Writes one value into a node. Each container accepts one value only, as `Encodable` requires.
///
/// `Date`, `Data` and `Decimal` are intercepted here, wherever they appear, so the encoder's date and
/// data strategies apply and a `Decimal` is written as its description rather than as its own
/// keyed representation.
struct URLEncodedFormSingleValueContainer: SingleValueEncodingContainer {
    let node: URLEncodedFormNode
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncodingOptions
    private var hasEncodedValue = false

    init(node: URLEncodedFormNode, codingPath: [any CodingKey], options: URLEncodedFormEncodingOptions) {
        self.node = node
        self.codingPath = codingPath
        self.options = options
    }

    mutating func encodeNil() throws {
        // A dropped nil writes nothing, so it does not use up the container (as in Alamofire).
        guard let nilValue = options.nilEncoding.encodeNil() else { return }
        try encode(nilValue)
    }

    mutating func encode(_ value: Bool) throws { try write(options.boolEncoding.encode(value), for: value) }
    mutating func encode(_ value: String) throws { try write(value, for: value) }
    mutating func encode(_ value: Double) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Float) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int8) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int16) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int32) throws { try write(String(value), for: value) }
    mutating func encode(_ value: Int64) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt8) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt16) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt32) throws { try write(String(value), for: value) }
    mutating func encode(_ value: UInt64) throws { try write(String(value), for: value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if let date = value as? Date, let string = try options.dateEncoding.encode(date) {
            try write(string, for: value)
        } else if let data = value as? Data, let string = try options.dataEncoding.encode(data) {
            try write(string, for: value)
        } else if let decimal = value as? Decimal {
            try write(String(describing: decimal), for: value)
        } else {
            try markEncoded(value)
            try value.encode(to: URLEncodedFormEncoding(node: node, codingPath: codingPath, options: options))
        }
    }

    private mutating func write(_ string: String, for value: Any) throws {
        try markEncoded(value)
        node.set(string)
    }

    private mutating func markEncoded(_ value: Any) throws {
        guard !hasEncodedValue else {
            let context = EncodingError.Context(
                codingPath: codingPath,
                debugDescription: "A single value container can encode only one value; a value was already encoded."
            )
            throw EncodingError.invalidValue(value, context)
        }
        hasEncodedValue = true
    }
}
