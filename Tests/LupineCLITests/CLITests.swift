import Testing

/// The tests that run the `lupine` executable, one at a time: each starts processes, and the
/// machine that runs the whole suite runs the library's timing-sensitive tests beside them.
@Suite(.serialized) struct CLITests {}
