import Foundation
import FuzzSupport
import Lupine
@testable import LupineTestServer

/// Multipart boundary handling: a form of arbitrary parts encoded by `MultipartFormData` must parse
/// back (with the test server's strict `MultipartParser`) into the same parts, each with exactly the
/// header fields Lupine wrote, so no name, file name or MIME type can inject a header line or a
/// boundary. Arbitrary bytes fed to the parser must not crash it.
@main
enum FuzzMultipartMain {
    static func main() {
        exit(runFuzzer(fuzzMultipart))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipart(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    if input.byte() % 4 == 0 {
        let boundary = input.string()
        _ = MultipartParser.parse(input.rest(), boundary: boundary)
        _ = MultipartParser.boundary(ofContentType: boundary)
    } else {
        checkRoundTrip(&input)
    }
    return 0
}

struct FuzzPart {
    var name: String
    var fileName: String?
    var mimeType: String?
    var body: [UInt8]
}

func checkRoundTrip(_ input: inout FuzzInput) {
    let form = MultipartFormData()
    var parts: [FuzzPart] = []
    for _ in 0..<(1 + Int(input.byte() % 4)) {
        let flags = input.byte()
        var part = FuzzPart(name: input.string(), body: input.chunk())
        // A file name comes with a MIME type, as in Alamofire's append(_:withName:fileName:mimeType:).
        if flags & 1 == 1 { part.fileName = input.string(); part.mimeType = input.string() }
        if flags & 2 == 2, part.fileName == nil { part.mimeType = input.string() }
        form.append(Data(part.body), withName: part.name, fileName: part.fileName, mimeType: part.mimeType)
        parts.append(part)
    }
    guard let encoded = try? form.encode() else { return }
    let boundaryText = Array(form.boundary.utf8)
    // A body holding the (random) boundary cannot be framed by any encoder: not a finding.
    if parts.contains(where: { contains($0.body, boundaryText) }) { return }

    guard let parsed = MultipartParser.parse(Array(encoded), boundary: form.boundary) else {
        fuzzRequire(false, "encoded form does not parse: \(parts.map(\.name))")
        return
    }
    fuzzRequire(parsed.count == parts.count, "\(parts.count) parts encoded, \(parsed.count) parsed")
    for (part, back) in zip(parts, parsed) {
        fuzzRequire(Array(back.body) == part.body, "body of part \(part.name.debugDescription) changed")
        let expectedHeaders = part.mimeType == nil ? 1 : 2
        fuzzRequire(back.headers.count == expectedHeaders,
                    "part \(part.name.debugDescription) has headers \(back.headers), expected \(expectedHeaders)")
        // Compared as bytes: a quote followed by a combining mark is one Character in Swift.
        fuzzRequire(back.header("content-disposition")?.utf8.starts(with: "form-data; name=\"".utf8) == true,
                    "bad disposition \(back.headers)")
    }
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
        return true
    }
    return false
}
