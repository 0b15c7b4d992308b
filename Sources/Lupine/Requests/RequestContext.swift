import Foundation

/// What every request of a Session is made with: its identity, its queues and monitors, the
/// interceptor given to the Session's factory method, the Session itself, and what the Session
/// decided once for all its requests (`defaults`).
struct RequestContext {
    var id = RequestIdentifiers.next()
    let underlyingQueue: DispatchQueue
    let serializationQueue: DispatchQueue
    let eventMonitor: CompositeEventMonitor?
    let interceptor: (any RequestInterceptor)?
    /// The Session, through the narrow view its requests need (a test double in the tests).
    let environment: any RequestEnvironment
    let shouldAutomaticallyResume: Bool?
    /// Where handlers given the default queue run.
    let defaultQueue: DispatchQueue
    /// The Session's queues and fallbacks, shared by all its requests.
    let defaults: RequestDefaults
}
