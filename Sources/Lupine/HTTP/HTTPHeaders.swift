/// An ordered collection of HTTP headers whose names are compared case-insensitively.
///
/// It never holds two entries whose names differ only by case: adding a header whose name is
/// already present replaces that entry in place. Iteration follows insertion order. Equality and
/// hashing compare the ordered entries, so order and name casing matter.
public struct HTTPHeaders: Equatable, Hashable, Sendable {
    private var headers: [HTTPHeader] = []

    /// Creates an empty collection.
    public init() {}

    /// Creates a collection from an array of headers.
    ///
    /// A later header whose name matches an earlier one (case-insensitively) replaces it in place.
    ///
    /// - Parameter headers: The headers, in order.
    public init(_ headers: [HTTPHeader]) {
        for header in headers {
            update(header)
        }
    }

    /// Creates a collection from a name-to-value dictionary; order follows the dictionary's iteration.
    ///
    /// - Parameter dictionary: The headers as name → value.
    public init(_ dictionary: [String: String]) {
        for (name, value) in dictionary {
            update(HTTPHeader(name: name, value: value))
        }
    }

    /// Adds a header, replacing any entry with the same case-insensitive name; same as `update(name:value:)`.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    public mutating func add(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Adds a header, replacing any entry with the same case-insensitive name; same as `update(_:)`.
    ///
    /// - Parameter header: The header to add.
    public mutating func add(_ header: HTTPHeader) {
        update(header)
    }

    /// Sets a header: replaces the entry with the same case-insensitive name at its position (taking
    /// the new name's casing), or appends it.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    public mutating func update(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Sets a header: replaces the entry with the same case-insensitive name at its position (taking
    /// the new name's casing), or appends it.
    ///
    /// - Parameter header: The header to set.
    public mutating func update(_ header: HTTPHeader) {
        if let index = index(ofName: header.name) {
            headers[index] = header
        } else {
            headers.append(header)
        }
    }

    /// Removes the entry with this case-insensitive name, if there is one.
    ///
    /// - Parameter name: The field name.
    public mutating func remove(name: String) {
        if let index = index(ofName: name) {
            headers.remove(at: index)
        }
    }

    /// Sorts the headers in place by lowercased name.
    public mutating func sort() {
        headers.sort { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// Returns a copy sorted by lowercased name.
    ///
    /// - Returns: The sorted headers.
    public func sorted() -> HTTPHeaders {
        var copy = self
        copy.sort()
        return copy
    }

    /// Looks up a value by case-insensitive name.
    ///
    /// - Parameter name: The field name.
    /// - Returns: The value, or nil when no entry has that name.
    public func value(for name: String) -> String? {
        index(ofName: name).map { headers[$0].value }
    }

    /// The value for a case-insensitive name; setting a value updates the entry, setting nil removes it.
    ///
    /// - Parameter name: The field name.
    public subscript(_ name: String) -> String? {
        get { value(for: name) }
        set {
            if let newValue {
                update(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// The headers as a name → value dictionary.
    public var dictionary: [String: String] {
        Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    private func index(ofName name: String) -> Int? {
        headers.firstIndex { $0.name.lupineEqualsIgnoringCase(name) }
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// Creates a collection from a dictionary literal, in the literal's order.
    ///
    /// - Parameter elements: The name/value pairs; a repeated name replaces the earlier entry.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements {
            update(name: name, value: value)
        }
    }
}

extension HTTPHeaders: ExpressibleByArrayLiteral {
    /// Creates a collection from an array literal of headers.
    ///
    /// - Parameter elements: The headers; a repeated name replaces the earlier entry.
    public init(arrayLiteral elements: HTTPHeader...) {
        self.init(elements)
    }
}

extension HTTPHeaders: Sequence {
    /// Returns an iterator over the headers in order.
    public func makeIterator() -> IndexingIterator<[HTTPHeader]> {
        headers.makeIterator()
    }
}

extension HTTPHeaders: Collection {
    /// The position of the first header.
    public var startIndex: Int {
        headers.startIndex
    }

    /// The position one past the last header.
    public var endIndex: Int {
        headers.endIndex
    }

    /// The header at a position.
    ///
    /// - Parameter position: A valid index.
    public subscript(position: Int) -> HTTPHeader {
        headers[position]
    }

    /// The position after `i`.
    ///
    /// - Parameter i: A valid index.
    /// - Returns: The next index.
    public func index(after i: Int) -> Int {
        headers.index(after: i)
    }
}

extension HTTPHeaders: CustomStringConvertible {
    /// Each header's `"<name>: <value>"`, one per line.
    public var description: String {
        headers.map(\.description).joined(separator: "\n")
    }
}
