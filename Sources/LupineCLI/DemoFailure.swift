/// Why a demo step did not behave as expected, in one line.
struct DemoFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }

    /// Throws `DemoFailure(reason)` unless `condition` holds.
    static func check(_ condition: Bool, _ reason: @autoclosure () -> String) throws {
        guard condition else { throw DemoFailure(reason()) }
    }
}
