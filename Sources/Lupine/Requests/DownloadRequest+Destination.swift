import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DownloadRequest {
    /// A destination in a standard directory, named after the response.
    ///
    /// The file goes to the first URL of `directory` in `domain`, named with the response's
    /// `suggestedFilename`; when either is missing, the file stays at its temporary URL.
    ///
    /// - Parameters:
    ///   - directory: The search path directory; `.documentDirectory` by default.
    ///   - domain:    The search path domain; `.userDomainMask` by default.
    ///   - options:   How the file is placed; none by default.
    /// - Returns: The `Destination` closure.
    public class func suggestedDownloadDestination(for directory: FileManager.SearchPathDirectory = .documentDirectory,
                                                   in domain: FileManager.SearchPathDomainMask = .userDomainMask,
                                                   options: Options = []) -> Destination {
        { temporaryURL, response in
            let directoryURL = FileManager.default.urls(for: directory, in: domain).first
            let destination = suggestedFilename(for: response).flatMap { directoryURL?.appendingPathComponent($0) }
            return (destination ?? temporaryURL, options)
        }
    }

    /// `response.suggestedFilename`, except where FoundationNetworking answers "Unknown" although
    /// the URL can name the file: as on Apple platforms, the URL's last path component, else
    /// (a URL without a path, such as `https://example.com/`) its host.
    static func suggestedFilename(for response: HTTPURLResponse) -> String? {
        let suggested = response.suggestedFilename
        guard suggested == nil || suggested == "Unknown", let url = response.url else { return suggested }
        let lastComponent = url.lastPathComponent
        if !lastComponent.isEmpty, lastComponent != "/" { return lastComponent }
        if let host = url.host, !host.isEmpty { return host }
        return suggested
    }

    /// Where a download goes when no destination is given: beside the temporary file, named
    /// `Alamofire_<temporary file name>` (Alamofire's name, kept so that code looking for it works).
    static let defaultDestination: Destination = { temporaryURL, _ in
        let name = "Alamofire_\(temporaryURL.lastPathComponent)"
        return (temporaryURL.deletingLastPathComponent().appendingPathComponent(name), [])
    }

    /// The body is complete and its file closed: the file goes to its destination. Runs on the
    /// root queue (the destination is the user's closure); the move runs on `DiskIO`'s threads,
    /// then `next` on the root queue. Before the validators, so that they (and the response
    /// handlers) see the final `fileURL`.
    func finishDownload(from temporaryURL: URL, closed: Result<Int64, any Error>, then next: @escaping @Sendable () -> Void) {
        let destination = downloadState.withLockedValue { state in
            state.temporaryURL = nil
            state.resumeOffset = 0
            return state.destination ?? Self.defaultDestination
        }
        guard case .success = closed, let response else {
            if error == nil {
                error = .sessionTaskFailed(error: URLError(.cannotWriteToFile, userInfo: [
                    NSLocalizedDescriptionKey: TransportErrorMapping.description(of: .cannotWriteToFile),
                ]))
            }
            DiskIO.run {
                DownloadFiles.remove(temporaryURL)
                self.onRootQueue(next)
            }
            return
        }
        ThreadContract.userCode("a download destination")
        let (destinationURL, options) = destination(temporaryURL, response)
        notify(.didCreateDestinationURL) { $0.request(self, didCreateDestinationURL: destinationURL) }
        DiskIO.run {
            let moved = Result { try Self.move(temporaryURL, to: destinationURL, options: options) }
            if case .failure = moved { DownloadFiles.remove(temporaryURL) }
            self.onRootQueue {
                switch moved {
                case .success:
                    self.attemptTaskDidFinishDownloading(with: .success(destinationURL))
                    self.downloadState.withLockedValue { $0.fileURL = destinationURL }
                case let .failure(error):
                    let moveError = AFError.downloadedFileMoveFailed(error: error, source: temporaryURL, destination: destinationURL)
                    self.attemptTaskDidFinishDownloading(with: .failure(moveError))
                    self.error = moveError
                }
                next()
            }
        }
    }

    /// Removes a previous file and creates the parent directories when the options say so, then moves.
    static func move(_ source: URL, to destination: URL, options: Options) throws {
        ThreadContract.diskIO("moving a download's file")
        // A destination that is the temporary file itself (suggestedDownloadDestination's fallback): it stays.
        guard source.standardizedFileURL.path != destination.standardizedFileURL.path else { return }
        let fileManager = FileManager.default
        if options.contains(.removePreviousFile), fileManager.fileExists(atPath: destination.path) {
            try fileManager.removeItem(at: destination)
        }
        if options.contains(.createIntermediateDirectories) {
            try fileManager.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        try fileManager.moveItem(at: source, to: destination)
    }
}
