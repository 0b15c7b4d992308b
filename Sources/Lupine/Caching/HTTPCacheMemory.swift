/// The memory tier of an HTTP cache store: URL keys to their stored variants, bounded in bytes,
/// the least recently used key evicted first.
///
/// Lookups, insertions and evictions cost the same whatever the number of entries (a dictionary
/// and a doubly linked recency list). Not synchronized: its store's lock guards it.
final class HTTPCacheMemory {
    /// One URL's variants, and its place in the recency list.
    final class Node {
        let key: HTTPCacheKey
        /// Most recently stored first.
        let variants: [StoredResponse]
        /// What vouches that the configured `URLCache` was not cleared since the node was stored.
        let marker: URLCacheMarker
        let cost: Int
        /// Towards the most recently used node.
        fileprivate var newer: Node?
        /// Towards the least recently used node.
        fileprivate var older: Node?

        fileprivate init(key: HTTPCacheKey, variants: [StoredResponse], marker: URLCacheMarker) {
            self.key = key
            self.variants = variants
            self.marker = marker
            cost = variants.reduce(key.string.utf8.count) { $0 + $1.cost }
        }
    }

    private var nodes: [HTTPCacheKey: Node] = [:]
    private var newest: Node?
    private var oldest: Node?
    /// The bytes all nodes take, as `StoredResponse.cost` counts them.
    private(set) var totalCost = 0

    var count: Int { nodes.count }

    deinit {
        removeAll()
    }

    /// The node for `key`, made the most recently used.
    func node(for key: HTTPCacheKey) -> Node? {
        guard let node = nodes[key] else { return nil }
        moveToFront(node)
        return node
    }

    /// The node for `key`, leaving the recency order alone.
    func peek(_ key: HTTPCacheKey) -> Node? {
        nodes[key]
    }

    /// A node whose entry depends on `marker`, if any; looks at every node (for invalidations,
    /// which are rare).
    func anyNode(dependingOn marker: URLCacheMarker) -> Node? {
        nodes.values.first { $0.marker === marker }
    }

    /// Stores `variants` for `key` (replacing what was there), the most recently used, then
    /// evicts the least recently used keys until everything fits in `capacity` bytes.
    func set(_ variants: [StoredResponse], for key: HTTPCacheKey, marker: URLCacheMarker, capacity: Int) {
        remove(key)
        guard !variants.isEmpty else { return }
        let node = Node(key: key, variants: variants, marker: marker)
        guard node.cost <= capacity else { return }
        nodes[key] = node
        totalCost += node.cost
        link(node)
        evict(toFit: capacity)
    }

    func remove(_ key: HTTPCacheKey) {
        guard let node = nodes.removeValue(forKey: key) else { return }
        unlink(node)
        totalCost -= node.cost
    }

    func removeAll() {
        var node = newest
        while let current = node {
            node = current.older
            current.older = nil
            current.newer = nil
        }
        nodes.removeAll()
        newest = nil
        oldest = nil
        totalCost = 0
    }

    /// Evicts the least recently used keys until the rest takes at most `capacity` bytes.
    func evict(toFit capacity: Int) {
        while totalCost > capacity, let victim = oldest {
            remove(victim.key)
        }
    }

    // MARK: Recency list

    private func link(_ node: Node) {
        node.older = newest
        node.newer = nil
        newest?.newer = node
        newest = node
        if oldest == nil { oldest = node }
    }

    private func unlink(_ node: Node) {
        if let newer = node.newer { newer.older = node.older } else { newest = node.older }
        if let older = node.older { older.newer = node.newer } else { oldest = node.newer }
        node.newer = nil
        node.older = nil
    }

    private func moveToFront(_ node: Node) {
        guard newest !== node else { return }
        unlink(node)
        link(node)
    }
}
