import Foundation

extension DispatchQueue {
    /// The queue meant by the `queue: DispatchQueue = .main` defaults of the API.
    ///
    /// On Apple platforms it is `.main`, as in Alamofire. On Linux, servers and command-line tools
    /// often never drain the main queue, so handlers given there would never run: the default is
    /// this placeholder, which each Session replaces with a serial queue of its own. A caller who
    /// passes `.main` explicitly gets `.main`.
    @usableFromInline
    static var lupineDefault: DispatchQueue {
        #if canImport(Darwin)
        .main
        #else
        lupineDefaultPlaceholder
        #endif
    }

    static let lupineDefaultPlaceholder = DispatchQueue(label: "lupine.placeholder.defaultQueue")

    /// `self`, or `sessionQueue` when `self` is the default placeholder.
    func resolvingLupineDefault(to sessionQueue: DispatchQueue) -> DispatchQueue {
        self === DispatchQueue.lupineDefaultPlaceholder ? sessionQueue : self
    }
}
