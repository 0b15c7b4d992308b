import Foundation

/// Turns a finished form tree into `key=value` segments joined by `&`.
///
/// Keys are composed from the top down (nested object keys per ``URLEncodedFormEncoder/KeyPathEncoding``,
/// array elements per ``URLEncodedFormEncoder/ArrayEncoding``); the key encoding is applied to the full
/// composed key of each leaf, then key and value are escaped.
struct URLEncodedFormSerializer {
    let alphabetizeKeyValuePairs: Bool
    let arrayEncoding: URLEncodedFormEncoder.ArrayEncoding
    let keyEncoding: URLEncodedFormEncoder.KeyEncoding
    let keyPathEncoding: URLEncodedFormEncoder.KeyPathEncoding
    let spaceEncoding: URLEncodedFormEncoder.SpaceEncoding
    /// Escapes with the caller's allowed characters plus the space, which ``spaceEncoding`` writes
    /// afterwards.
    private let escaper: PercentEscaper

    init(alphabetizeKeyValuePairs: Bool,
         arrayEncoding: URLEncodedFormEncoder.ArrayEncoding,
         keyEncoding: URLEncodedFormEncoder.KeyEncoding,
         keyPathEncoding: URLEncodedFormEncoder.KeyPathEncoding,
         spaceEncoding: URLEncodedFormEncoder.SpaceEncoding,
         allowedCharacters: CharacterSet) {
        self.alphabetizeKeyValuePairs = alphabetizeKeyValuePairs
        self.arrayEncoding = arrayEncoding
        self.keyEncoding = keyEncoding
        self.keyPathEncoding = keyPathEncoding
        self.spaceEncoding = spaceEncoding
        var allowed = allowedCharacters
        allowed.insert(" ")
        // Made for each form: its table costs less than one escape through Foundation.
        escaper = PercentEscaper(allowing: allowed)
    }

    /// Serializes the members of the top-level object.
    func serialize(_ object: [(key: String, value: URLEncodedFormComponent)]) -> String {
        joined(object.map { serialize($0.value, forKey: $0.key) })
    }

    private func serialize(_ component: URLEncodedFormComponent, forKey key: String) -> String {
        switch component {
        case let .string(value):
            return "\(escape(keyEncoding.encode(key)))=\(escape(value))"
        case let .array(elements):
            return joined(elements.enumerated().map { index, element in
                serialize(element, forKey: arrayEncoding.encode(key, atIndex: index))
            })
        case let .object(members):
            return joined(members.map { member in
                serialize(member.value, forKey: key + keyPathEncoding.encodeKeyPath(member.key))
            })
        }
    }

    /// Joins one level's segments with `&`, sorted first when the encoder alphabetizes.
    private func joined(_ segments: [String]) -> String {
        (alphabetizeKeyValuePairs ? segments.sorted() : segments).joined(separator: "&")
    }

    private func escape(_ string: String) -> String {
        let escaped = escaper.escape(string) ?? string
        return spaceEncoding.encode(escaped)
    }
}
