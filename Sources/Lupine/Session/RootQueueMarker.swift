/// The value a Session's root queue holds under `RootQueueRunner.key`: the runner recognises its
/// own queue by this object's identity.
final class RootQueueMarker: Sendable {}
