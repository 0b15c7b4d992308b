import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import Synchronization

/// The URLProtocol classes registered with `URLProtocol.registerClass(_:)`, as Lupine sees them.
///
/// corelibs keeps its own registry private, so Lupine offers an overload of `registerClass` that
/// takes a `URLProtocol.Type` (what `URLProtocol.registerClass(MyStub.self)` passes): Swift picks
/// it over Foundation's `AnyClass` one, and it records the class here before registering it with
/// Foundation too. A class handed over as a plain `AnyClass` reaches Foundation's registry only.
enum URLProtocolRegistry {
    /// Most recently registered first: a registered class is consulted before those registered
    /// earlier, as Apple documents.
    private static let classes = NIOLockedValueBox<[URLProtocol.Type]>([])
    /// Whether `classes` holds any: the check every request makes, without a lock.
    private static let isPopulated = Synchronization.Atomic<Bool>(false)

    static var registered: [URLProtocol.Type] {
        guard isPopulated.load(ordering: .acquiring) else { return [] }
        return classes.withLockedValue { $0 }
    }

    static func register(_ protocolClass: URLProtocol.Type) {
        classes.withLockedValue { classes in
            classes.removeAll { $0 == protocolClass }
            classes.insert(protocolClass, at: 0)
            isPopulated.store(true, ordering: .releasing)
        }
    }

    static func unregister(_ protocolClass: URLProtocol.Type) {
        classes.withLockedValue { classes in
            classes.removeAll { $0 == protocolClass }
            isPopulated.store(!classes.isEmpty, ordering: .releasing)
        }
    }

    /// Lupine's loader of `data:` URLs (RFC 2397), consulted for every request though no
    /// configuration lists it, after the user's classes, as URLSession consults its own.
    static let dataURLClass: URLProtocol.Type = DataURLProtocol.self

    /// The classes of a configuration's `protocolClasses` that Lupine consults: Foundation's own
    /// (its HTTP, FTP, data and WebSocket loaders) are left out, since Lupine's transport is the
    /// HTTP loader here.
    static func userClasses(in configuration: URLSessionConfiguration) -> [URLProtocol.Type] {
        (configuration.protocolClasses ?? []).compactMap { candidate in
            guard let protocolClass = candidate as? URLProtocol.Type,
                  !String(reflecting: protocolClass).hasPrefix("FoundationNetworking.")
            else { return nil }
            return protocolClass
        }
    }
}

extension URLProtocol {
    /// Registers `protocolClass` so that it is asked, after the classes of a Session's
    /// configuration, whether it answers each request (most recently registered first); it is
    /// registered with Foundation too.
    ///
    /// - Returns: Whether Foundation registered the class.
    @discardableResult
    public class func registerClass(_ protocolClass: URLProtocol.Type) -> Bool {
        URLProtocolRegistry.register(protocolClass)
        // An `AnyClass` argument selects Foundation's own method.
        return URLProtocol.registerClass(protocolClass as AnyClass)
    }

    /// Unregisters `protocolClass`, from Lupine and from Foundation.
    public class func unregisterClass(_ protocolClass: URLProtocol.Type) {
        URLProtocolRegistry.unregister(protocolClass)
        URLProtocol.unregisterClass(protocolClass as AnyClass)
    }
}
