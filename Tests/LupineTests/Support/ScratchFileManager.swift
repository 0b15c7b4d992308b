import Foundation

/// A FileManager whose temporary directory is a scratch directory of the test's own, so that a
/// multipart form encoded to disk (under `org.alamofire.manager/multipart.form.data`, as
/// Alamofire places it) leaves nothing in the machine's temporary directory. `remove()` deletes
/// the scratch directory with everything under it.
final class ScratchFileManager: FileManager, @unchecked Sendable {
    let scratch: URL

    /// Uses `scratch`, which the caller owns and removes.
    init(scratch: URL) {
        self.scratch = scratch
        super.init()
    }

    /// A FileManager with a scratch directory of its own; `remove()` deletes it.
    static func make() throws -> ScratchFileManager {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("lupine-scratch-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return ScratchFileManager(scratch: directory)
    }

    override var temporaryDirectory: URL { scratch }

    func remove() { try? FileManager.default.removeItem(at: scratch) }
}
