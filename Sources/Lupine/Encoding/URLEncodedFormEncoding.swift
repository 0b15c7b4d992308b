import Foundation

/// The value strategies the containers need while encoding (the key and layout strategies are the
/// serializer's).
struct URLEncodedFormEncodingOptions {
    let boolEncoding: URLEncodedFormEncoder.BoolEncoding
    let dataEncoding: URLEncodedFormEncoder.DataEncoding
    let dateEncoding: URLEncodedFormEncoder.DateEncoding
    let nilEncoding: URLEncodedFormEncoder.NilEncoding
}

/// The `Encoder` handed to `encode(to:)`: it writes into one node of the form tree.
struct URLEncodedFormEncoding: Encoder {
    let node: URLEncodedFormNode
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncodingOptions

    /// Always empty: this encoder takes no user info.
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(URLEncodedFormKeyedContainer<Key>(node: node, codingPath: codingPath, options: options))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        URLEncodedFormUnkeyedContainer(node: node, codingPath: codingPath, options: options)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        URLEncodedFormSingleValueContainer(node: node, codingPath: codingPath, options: options)
    }
}

/// The coding key of an array element in coding paths.
struct URLEncodedFormIndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String

    init(_ index: Int) {
        intValue = index
        stringValue = String(index)
    }

    init?(intValue: Int) {
        self.init(intValue)
    }

    init?(stringValue: String) {
        guard let index = Int(stringValue) else { return nil }
        self.init(index)
    }
}
