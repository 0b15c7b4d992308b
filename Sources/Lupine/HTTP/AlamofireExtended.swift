/// A namespace for Lupine's extensions of another type, reached through `.af`
/// (for example `URLSessionConfiguration.af.default`).
public struct AlamofireExtension<ExtendedType> {
    /// The extended value.
    public private(set) var type: ExtendedType

    /// Wraps a value.
    ///
    /// - Parameter type: The value to extend.
    public init(_ type: ExtendedType) {
        self.type = type
    }
}

/// A type that offers Lupine's extensions through an `af` namespace.
public protocol AlamofireExtended {
    /// The type being extended.
    associatedtype ExtendedType

    /// The static `af` namespace.
    static var af: AlamofireExtension<ExtendedType>.Type { get set }
    /// The instance `af` namespace.
    var af: AlamofireExtension<ExtendedType> { get set }
}

extension AlamofireExtended {
    /// The static `af` namespace; setting it does nothing.
    public static var af: AlamofireExtension<Self>.Type {
        get { AlamofireExtension<Self>.self }
        // The setter exists so mutating members can be declared on the namespace.
        set {}
    }

    /// The instance `af` namespace wrapping `self`; setting it does nothing.
    public var af: AlamofireExtension<Self> {
        get { AlamofireExtension(self) }
        // The setter exists so mutating members can be declared on the namespace.
        set {}
    }
}
