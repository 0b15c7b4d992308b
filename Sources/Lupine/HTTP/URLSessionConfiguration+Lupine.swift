import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionConfiguration: AlamofireExtended {}

extension AlamofireExtension where ExtendedType: URLSessionConfiguration {
    /// A new `URLSessionConfiguration.default` whose `headers` are ``HTTPHeaders/default``.
    ///
    /// This is the configuration a `Session` uses unless it is given another.
    public static var `default`: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.headers = .default
        return configuration
    }

    /// A new `URLSessionConfiguration.ephemeral` whose `headers` are ``HTTPHeaders/default``.
    public static var ephemeral: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.headers = .default
        return configuration
    }
}
