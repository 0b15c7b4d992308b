import Foundation
import Lupine

/// Where a download is saved, and where the state of an interrupted one is kept.
///
/// The name is `-o FILE`, else (without `--continue`) the `filename` of the response's
/// `Content-Disposition`, else the last segment of the URL's path (`index.html` for none). A name
/// the tool chose never replaces an existing file: `-1`, `-2`... is appended, as httpie does. With
/// `--continue`, the name comes from `-o` or the URL only, so that the interrupted download is
/// found again before any response arrives.
///
/// While a download is interrupted, its bytes stay in Lupine's partial file in the temporary
/// directory, and Lupine's resume data (a property list naming that file, the URL and the
/// validators) is kept beside the target as `NAME.lupine-resume`.
struct DownloadTarget: Sendable {
    /// The file named by `-o`, or nil when the name comes from the response or the URL.
    let explicitFile: URL?
    /// The URL requested.
    let url: URL

    /// The file named before any response: `-o`, else the URL's.
    var nameFromURL: URL {
        explicitFile ?? URL(fileURLWithPath: Self.fileName(fromURLPath: url.path))
    }

    /// Where the resume data of an interrupted download of `file` is kept.
    static func resumeFile(for file: URL) -> URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".lupine-resume")
    }

    /// The file for `response`: `-o`, else the response's own name, else the URL's, made unique.
    ///
    /// Without `allowsServerName` (`--continue`), it is `nameFromURL` whatever the response says,
    /// redirects included: the resume file was named after it before any response came.
    func file(for response: HTTPURLResponse, allowsServerName: Bool) -> URL {
        guard allowsServerName else { return nameFromURL }
        if let explicitFile { return explicitFile }
        let fromServer = response.headers["Content-Disposition"].flatMap(Self.fileName(fromContentDisposition:))
        let name = fromServer ?? Self.fileName(fromURLPath: response.url?.path ?? url.path)
        return Self.unused(URL(fileURLWithPath: name))
    }

    /// `file`, or `file-1`, `file-2`... the first that does not exist.
    static func unused(_ file: URL) -> URL {
        var candidate = file
        var number = 0
        while FileManager.default.fileExists(atPath: candidate.path) {
            number += 1
            candidate = file.deletingLastPathComponent().appendingPathComponent("\(file.lastPathComponent)-\(number)")
        }
        return candidate
    }

    /// The last segment of `path`, made safe, or `index.html` when there is none.
    static func fileName(fromURLPath path: String) -> String {
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        return safeName(last) ?? "index.html"
    }

    /// The `filename` parameter of a `Content-Disposition` value (RFC 6266), made safe.
    static func fileName(fromContentDisposition value: String) -> String? {
        for parameter in value.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, parts[0].lowercased() == "filename" else { continue }
            var name = parts[1]
            if name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 { name = String(name.dropFirst().dropLast()) }
            return safeName(name)
        }
        return nil
    }

    /// `name` without any directory part, or nil when nothing usable is left: a server must not
    /// choose where a file lands (`../../.bashrc`), nor hide it (`.profile`).
    static func safeName(_ name: String) -> String? {
        let decoded = name.removingPercentEncoding ?? name
        let last = decoded.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let trimmed = String(last.drop { $0 == "." }).filter { !$0.isNewline && $0 != "\0" }
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The partial file named by Lupine's resume data (its documented `temporaryFile` key), when
    /// it is one of Lupine's download files in the temporary directory.
    static func partialFile(in resumeData: Data) -> URL? {
        guard let plist = try? PropertyListSerialization.propertyList(from: resumeData, format: nil) as? [String: Any],
              let path = plist["temporaryFile"] as? String
        else { return nil }
        let file = URL(fileURLWithPath: path).standardizedFileURL
        let directory = FileManager.default.temporaryDirectory.standardizedFileURL
        guard file.deletingLastPathComponent().path == directory.path,
              file.lastPathComponent.hasPrefix("LupineDownload_")
        else { return nil }
        return file
    }
}
