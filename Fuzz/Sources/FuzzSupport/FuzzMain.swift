import CFuzzDriver
import Foundation

/// The signature of `LLVMFuzzerTestOneInput`.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Hands the command line to libFuzzer and runs `target` on every input; returns libFuzzer's
/// exit status.
///
/// SwiftPM links a Linux executable with its entry point renamed to `<module>_main`, which leaves
/// libFuzzer's own `main` out; each target therefore has a Swift `@main` that calls this.
public func runFuzzer(_ target: FuzzTarget) -> CInt {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    return withUnsafeMutablePointer(to: &argv) { argvPointer in
        LLVMFuzzerRunDriver(&argc, argvPointer, target)
    }
}
