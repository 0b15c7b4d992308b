/// A mutable node of the form being encoded; containers write into it by reference.
///
/// A node starts unset and takes the shape of the first write: a string, an array (elements are
/// appended) or an object (members are added by key). A later write of another shape replaces the
/// earlier content. Unset nodes, and arrays or objects with nothing set inside them, produce no
/// component, so dropped `nil`s and empty collections leave no trace in the form.
final class URLEncodedFormNode {
    private enum Kind {
        case unset, string, array, object
    }

    private var kind = Kind.unset
    private var string = ""
    private var elements: [URLEncodedFormNode] = []
    private var memberKeys: [String] = []
    private var members: [String: URLEncodedFormNode] = [:]

    /// Makes this node a leaf with the given value.
    func set(_ value: String) {
        reset(to: .string)
        string = value
    }

    /// Appends a new, unset element, making this node an array first if it is not one.
    func appendElement() -> URLEncodedFormNode {
        if kind != .array { reset(to: .array) }
        let element = URLEncodedFormNode()
        elements.append(element)
        return element
    }

    /// The element at `index` when the array has one, or a new element appended after the last;
    /// makes this node an array first if it is not one.
    ///
    /// This is how a keyed container writes a named key that has an integer value, as Alamofire
    /// does: the key addresses an array element, written as `key[]` (or, with `.indexInBrackets`, by
    /// its position in the array, not by the key's number).
    func element(at index: Int) -> URLEncodedFormNode {
        if kind != .array { reset(to: .array) }
        if elements.indices.contains(index) { return elements[index] }
        return appendElement()
    }

    /// The member for `key`, added unset if absent, making this node an object first if it is not one.
    ///
    /// Writing the same key again reuses the member in place, so the key keeps its first position.
    func member(forKey key: String) -> URLEncodedFormNode {
        if kind != .object { reset(to: .object) }
        if let existing = members[key] { return existing }
        let member = URLEncodedFormNode()
        memberKeys.append(key)
        members[key] = member
        return member
    }

    /// The finished value, or nil when nothing was set in this node.
    var component: URLEncodedFormComponent? {
        switch kind {
        case .unset:
            return nil
        case .string:
            return .string(string)
        case .array:
            let components = elements.compactMap(\.component)
            return components.isEmpty ? nil : .array(components)
        case .object:
            let pairs = memberKeys.compactMap { key in
                members[key]?.component.map { (key: key, value: $0) }
            }
            return pairs.isEmpty ? nil : .object(pairs)
        }
    }

    private func reset(to newKind: Kind) {
        kind = newKind
        string = ""
        elements = []
        memberKeys = []
        members = [:]
    }
}
