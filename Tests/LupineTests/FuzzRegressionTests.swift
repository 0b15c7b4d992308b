import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// One test per finding of the libFuzzer targets in Fuzz/ (run by Fuzz/run.sh): the input, cut
/// down to what triggers it, and the behaviour after the fix.
@Suite struct FuzzRegressionTests {
    // MARK: FuzzResumeData

    /// Resume data as Lupine writes it, with bytes that are not UTF-8 inside an `<integer>`:
    /// PropertyListDecoder traps on it (a crash of the whole process, from data a caller may have
    /// read back from disk). It must be refused like any other undecodable resume data.
    static let resumeDataWithNonUTF8Integer: Data = {
        var data = Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>bytesOnDisk</key>
            \t<integer>
            """.utf8)
        data.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF])
        data.append(contentsOf: Data("""
            1024</integer>
            \t<key>expectedLength</key>
            \t<integer>4096</integer>
            \t<key>headers</key>
            \t<dict/>
            \t<key>temporaryFile</key>
            \t<string>/tmp/LupineDownload_0000_1234.tmp</string>
            \t<key>url</key>
            \t<string>http://127.0.0.1:9/bytes/4096</string>
            \t<key>version</key>
            \t<integer>1</integer>
            </dict>
            </plist>

            """.utf8))
        return data
    }()

    @Test func resumeDataWithNonUTF8BytesIsRefusedInsteadOfCrashing() async throws {
        #expect(ResumeData(data: Self.resumeDataWithNonUTF8Integer) == nil)
        let response = await AF.download(resumingWith: Self.resumeDataWithNonUTF8Integer)
            .serializingDownloadedFileURL().response
        #expect(response.error?.sessionTaskURLErrorCode == .cannotDecodeRawData)
    }

    @Test func resumeDataLupineWroteStillDecodes() throws {
        let url = try #require(URL(string: "http://127.0.0.1:9/bytes/4096"))
        let written = ResumeData(url: url, headers: ["Accept": "*/*"], entityTag: "\"abc\"", lastModified: nil,
                                 bytesOnDisk: 1024, expectedLength: 4096,
                                 temporaryFile: DownloadFiles.newTemporaryURL(for: UUID()))
        let data = try #require(written.encoded())
        #expect(ResumeData(data: data) == written)
    }

    // MARK: FuzzMultipart

    /// A field name holding CR LF ended the part's header block early (and could add header lines);
    /// a `"` ended the quoted name. Both are percent-encoded as browsers do; so are CR and LF in a
    /// MIME type or a caller's part headers.
    @Test func lineBreaksAndQuotesInPartHeadersCannotBreakTheFraming() throws {
        let form = MultipartFormData(boundary: "b")
        form.append(Data("v".utf8), withName: "a\"\r\nX-Injected: 1\r\n\r\nbody", fileName: "f\r\n\"x",
                    mimeType: "text/plain\r\nX-Evil: 1")
        form.append(InputStream(data: Data("w".utf8)), withLength: 1,
                    headers: ["Content-Disposition": "form-data; name=\"s\"", "X-Custom\n": "a\r\nb"])

        let expected = "--b\r\n"
            + "Content-Disposition: form-data; name=\"a%22%0D%0AX-Injected: 1%0D%0A%0D%0Abody\"; filename=\"f%0D%0A%22x\"\r\n"
            + "Content-Type: text/plain%0D%0AX-Evil: 1\r\n\r\nv"
            + "\r\n--b\r\nContent-Disposition: form-data; name=\"s\"\r\nX-Custom%0A: a%0D%0Ab\r\n\r\nw"
            + "\r\n--b--\r\n"
        #expect(String(decoding: try form.encode(), as: UTF8.self) == expected)
    }
}
