import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// The download and upload suites run one test at a time: the memory bound of a large transfer is
/// measured on the whole process, which parallel transfers would blur.
@Suite(.serialized) enum TransferSuites {}

/// A new empty directory for one test's destinations; `remove()` deletes it.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("lupine-download-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ path: String) -> URL { url.appendingPathComponent(path) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Names in the temporary directory that belong to the downloads of `requests` (their temporary
/// files are named after the request's id).
func temporaryFilesLeft(by requests: [Request]) -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
    let ids = requests.map(\.id.uuidString)
    return names.filter { name in ids.contains { name.contains($0) } }
}

/// The body of `/bytes/<count>?seed=<seed>`, fetched into memory.
func freshBytes(_ server: LupineTestServer, count: Int, seed: Int) async throws -> Data {
    try await AF.request(server.url("/bytes/\(count)?seed=\(seed)")).serializingData().value
}

/// The contents of `url`, or empty data when it cannot be read.
func contents(of url: URL?) -> Data {
    guard let url else { return Data() }
    return (try? Data(contentsOf: url)) ?? Data()
}

/// Whether two files hold the same bytes, compared 1 MiB at a time.
func filesHaveEqualContents(_ first: URL, _ second: URL) -> Bool {
    guard let a = try? FileHandle(forReadingFrom: first), let b = try? FileHandle(forReadingFrom: second) else { return false }
    defer {
        try? a.close()
        try? b.close()
    }
    while true {
        let left = try? a.read(upToCount: 1 << 20)
        let right = try? b.read(upToCount: 1 << 20)
        guard left == right else { return false }
        if left?.isEmpty ?? true { return true }
    }
}

/// Waits until `request` has received at least `bytes` body bytes.
func waitForDownload(of request: Request, atLeast bytes: Int64, timeout: TimeInterval = 10) async -> Bool {
    await waitUntil(timeout: timeout) { request.downloadProgress.completedUnitCount >= bytes }
}

/// Resume data with one entry of its property list replaced (the format is documented).
func editedResumeData(_ data: Data, replacing key: String, with value: Any?) throws -> Data {
    var format = PropertyListSerialization.PropertyListFormat.xml
    guard var plist = try PropertyListSerialization.propertyList(from: data, options: [], format: &format) as? [String: Any] else {
        return data
    }
    plist[key] = value
    return try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
}
