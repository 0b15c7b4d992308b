/// A finished form value: what the serializer turns into `key=value` segments.
enum URLEncodedFormComponent {
    /// A leaf value, not yet escaped.
    case string(String)
    /// Array elements, in order.
    case array([URLEncodedFormComponent])
    /// Object members, in the order they were first written.
    case object([(key: String, value: URLEncodedFormComponent)])
}
