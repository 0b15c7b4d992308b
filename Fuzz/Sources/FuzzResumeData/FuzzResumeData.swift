import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
@testable import Lupine

/// Resume-data decoding: any bytes handed to `download(resumingWith:)` either decode into resume
/// data whose partial file can only be one of Lupine's files in the temporary directory and whose
/// request passes or fails the sending checks cleanly, or are refused; nothing crashes.
@main
enum FuzzResumeDataMain {
    static func main() {
        exit(runFuzzer(fuzzResumeData))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResumeData(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let bytes = Data(input.rest())
    guard let resumeData = ResumeData(data: bytes) else { return 0 }
    fuzzRequire(resumeData.bytesOnDisk >= 0, "negative bytesOnDisk decoded")
    if let file = resumeData.usablePartialFile {
        let directory = DownloadFiles.directory.standardizedFileURL.path
        fuzzRequire(file.deletingLastPathComponent().path == directory, "partial file \(file.path) outside \(directory)")
    }
    let convertible = ResumeRequestConvertible(resumeData: resumeData, offset: resumeData.bytesOnDisk)
    do {
        let request = try convertible.asURLRequest()
        try request.lupineValidateForSending()
        if resumeData.bytesOnDisk > 0, resumeData.ifRangeValidator != nil, let range = request.value(forHTTPHeaderField: "Range") {
            fuzzRequire(range == "bytes=\(resumeData.bytesOnDisk)-", "Range \(range)")
        }
    } catch {
        fuzzRequire(error is AFError, "resume request threw \(error)")
    }
    _ = resumeData.encoded()
    return 0
}
