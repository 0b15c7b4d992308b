import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Resume data is produced when a download stops before its end and can be continued: after
// `cancel(producingResumeData: true)`, and after a transport failure (as URLSession puts resume
// data in the error of a failed download task). The partial file is kept for it; in every other
// case the partial file is removed.
extension DownloadRequest {
    /// The attempt ended with `error`: keeps the partial file with resume data, or removes it.
    /// `writer` wrote this attempt's file, now closed with `closedBytes` on disk; nil when the
    /// attempt had no response. Runs on `DiskIO`'s threads or the writer's queue.
    func keepOrRemovePartialFile(bytesOnDisk closedBytes: Int64?, writer: DownloadFileWriter?, error: AFError?) {
        let state = downloadState.withLockedValue { $0 }
        let fileURL = writer?.url ?? state.temporaryURL
        // No response this attempt: the kept partial file (of resumed data) is untouched.
        let bytesOnDisk = writer == nil ? (state.resumeOffset > 0 ? state.resumeOffset : nil) : closedBytes
        let isTransportFailure = Self.isResumableFailure(error)
        let wanted = state.shouldProduceResumeData || isTransportFailure
        guard wanted, !state.writeFailed, let bytesOnDisk, bytesOnDisk > 0, let fileURL,
              let resume = resumeDescription(bytesOnDisk: bytesOnDisk, file: fileURL, attemptHadResponse: writer != nil, state: state),
              let data = resume.encoded()
        else {
            DownloadFiles.remove(fileURL)
            downloadState.withLockedValue { state in
                state.temporaryURL = nil
                state.resumeOffset = 0
            }
            return
        }
        downloadState.withLockedValue { $0.resumeData = data }
        if isTransportFailure, case let .sessionTaskFailed(underlying as URLError) = error {
            var userInfo = underlying.userInfo
            userInfo[AFError.downloadResumeDataKey] = data
            self.error = .sessionTaskFailed(error: URLError(underlying.code, userInfo: userInfo))
        }
    }

    /// A transport failure after which the same bytes can be asked for again.
    private static func isResumableFailure(_ error: AFError?) -> Bool {
        guard case let .sessionTaskFailed(underlying as URLError) = error else { return false }
        return ![.cancelled, .cannotWriteToFile, .badServerResponse].contains(underlying.code)
    }

    /// The resume data for the bytes on disk, or nil when the response cannot be resumed: not a
    /// GET, not 200/206, no strong `ETag` nor `Last-Modified`, or a content coding (the bytes on
    /// disk are decoded ones, which a byte range of the encoded body does not continue).
    private func resumeDescription(bytesOnDisk: Int64, file: URL, attemptHadResponse: Bool, state: DownloadState) -> ResumeData? {
        guard attemptHadResponse else {
            // Nothing arrived this attempt: what was resumable before still is.
            guard var resume = state.resume else { return nil }
            resume.bytesOnDisk = bytesOnDisk
            resume.temporaryFile = file.path
            return resume
        }
        guard let response, let url = response.url,
              (request?.httpMethod ?? "GET").uppercased() == "GET",
              response.statusCode == 200 || response.statusCode == 206
        else { return nil }
        let headers = response.headers
        if let coding = headers["Content-Encoding"], coding.lowercased() != "identity" { return nil }
        let entityTag = headers["ETag"].flatMap { $0.hasPrefix("W/") ? nil : $0 }
        let lastModified = headers["Last-Modified"]
        guard entityTag != nil || lastModified != nil else { return nil }
        let requestHeaders = (request?.allHTTPHeaderFields ?? [:]).filter { !ResumeRequestConvertible.isRangeField($0.key) }
        return ResumeData(url: url, headers: requestHeaders, entityTag: entityTag, lastModified: lastModified,
                          bytesOnDisk: bytesOnDisk, expectedLength: state.expectedTotal, temporaryFile: file)
    }
}
