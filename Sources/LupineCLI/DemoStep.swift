/// One step of `lupine demo`: a heading, the Lupine call it shows, and the work, which prints
/// what it observed and throws a `DemoFailure` when the library did not behave as expected.
struct DemoStep: Sendable {
    let title: String
    let code: String
    let run: @Sendable () async throws -> Void
}
