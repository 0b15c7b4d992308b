/// The value `Session.rootQueueKey` holds on a Session's root queue.
final class RootQueueMarker: Sendable {
    let owner: ObjectIdentifier

    init(owner: ObjectIdentifier) {
        self.owner = owner
    }
}
