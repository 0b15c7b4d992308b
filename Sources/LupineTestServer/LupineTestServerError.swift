/// Errors thrown by ``LupineTestServer``.
public enum LupineTestServerError: Error, Sendable {
    /// The listening socket reported no local port after binding.
    case noBoundPort
}
