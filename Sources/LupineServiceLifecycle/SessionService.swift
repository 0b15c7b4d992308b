import Lupine
import ServiceLifecycle

/// Runs a Lupine `Session` as a swift-service-lifecycle `Service`: when the `ServiceGroup` shuts
/// down gracefully (SIGTERM, for example), the Session stops taking requests, lets those in
/// flight finish for `gracePeriod`, cancels the rest, and closes its connections.
///
/// ```swift
/// let session = Session()
/// let group = ServiceGroup(services: [SessionService(session: session), myServer],
///                          gracefulShutdownSignals: [.sigterm],
///                          logger: logger)
/// try await group.run()
/// ```
///
/// A `ServiceGroup` shuts its services down in the reverse of their order, so list the
/// `SessionService` before the services that make requests with the Session: they stop first,
/// and their last requests still go out.
///
/// If the service's task is cancelled instead (another service failed, say), the requests still
/// running are cancelled at once.
public struct SessionService: Service {
    /// The Session shut down when the service group stops.
    public let session: Session
    /// How long requests in flight may take to finish once the graceful shutdown begins.
    public let gracePeriod: Duration

    /// Creates a service for `session`.
    ///
    /// - Parameters:
    ///   - session: The Session to shut down with the service group.
    ///   - gracePeriod: How long requests in flight may take to finish; 10 seconds by default.
    public init(session: Session, gracePeriod: Duration = .seconds(10)) {
        self.session = session
        self.gracePeriod = gracePeriod
    }

    /// Waits for the graceful shutdown (or the cancellation) of the service group, then shuts
    /// the Session down. Never throws.
    public func run() async throws {
        // Throws CancellationError when the task is cancelled; either way the Session shuts down.
        try? await gracefulShutdown()
        await session.shutdown(gracePeriod: gracePeriod)
    }
}
