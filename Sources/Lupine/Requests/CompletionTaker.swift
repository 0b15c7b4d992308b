/// A task awaiting a request's response that can run the end of the request's exchange itself
/// (`Request.offerToRunCompletion(_:)`).
protocol CompletionTaker: AnyObject, Sendable {
    /// Wakes the awaiting task to run the end of the exchange; false when no task awaits.
    func wakeToRunCompletion() -> Bool
}
