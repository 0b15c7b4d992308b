import Foundation
import Testing

/// The built `lupine` executable: beside the test bundle in the build folder (the test target
/// depends on the executable's target, so `swift build --build-tests` and `swift test` build it),
/// or wherever `LUPINE_EXECUTABLE` says.
enum LupineExecutable {
    static var url: URL {
        get throws {
            if let path = ProcessInfo.processInfo.environment["LUPINE_EXECUTABLE"] {
                return URL(fileURLWithPath: path)
            }
            // The test process is the bundle's executable in the build folder (.build/debug/...).
            let testExecutable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            let candidate = testExecutable.deletingLastPathComponent().appendingPathComponent("lupine")
            try #require(FileManager.default.isExecutableFile(atPath: candidate.path),
                         "no lupine executable at \(candidate.path): build it first (swift build)")
            return candidate
        }
    }
}
