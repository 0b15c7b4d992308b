/// A list that holds its first element without an array.
///
/// A request's lists (its URLRequests, the work deferred after its root-queue work, the tasks
/// awaiting its response) almost always hold one element: an array would cost an allocation
/// each time, this costs one only from the second element on.
struct SmallList<Element> {
    private var first: Element?
    private var more: [Element] = []

    init() {}

    var isEmpty: Bool { first == nil }

    var count: Int { first == nil ? 0 : 1 + more.count }

    /// The element at `index`, which must be below `count` (as an array's).
    subscript(index: Int) -> Element {
        if index == 0, let first { return first }
        return more[index - 1]
    }

    mutating func removeAll() {
        first = nil
        more.removeAll()
    }

    var last: Element? { more.last ?? first }

    /// The elements, in order, as an array (made when read).
    var array: [Element] {
        guard let first else { return [] }
        return [first] + more
    }

    mutating func append(_ element: Element) {
        if first == nil { first = element } else { more.append(element) }
    }

    /// Takes the first element out; nil when empty.
    mutating func removeFirst() -> Element? {
        guard let taken = first else { return nil }
        first = more.isEmpty ? nil : more.removeFirst()
        return taken
    }

    mutating func removeLast() {
        if more.isEmpty { first = nil } else { more.removeLast() }
    }

    /// Calls `body` with each element, in order.
    func forEach(_ body: (Element) throws -> Void) rethrows {
        guard let first else { return }
        try body(first)
        for element in more { try body(element) }
    }
}

extension SmallList: Sendable where Element: Sendable {}
