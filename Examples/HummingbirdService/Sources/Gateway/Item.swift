import Hummingbird

/// An item of the upstream's catalogue, as the gateway passes it on.
public struct Item: Codable, Sendable, Equatable, ResponseEncodable {
    /// The item's id.
    public var id: String
    /// The item's name.
    public var name: String

    /// Creates an item.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}
