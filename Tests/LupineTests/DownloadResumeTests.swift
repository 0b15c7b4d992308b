import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

extension TransferSuites {
    @Suite struct DownloadResumeTests {
        static let size = 4 << 20
        static let cut = 1 << 20

        /// The first byte asked for by the `Range` of the request's last attempt.
        static func rangeStart(of request: Request) -> Int? {
            guard let range = request.performedRequests.last?.value(forHTTPHeaderField: "Range"),
                  range.hasPrefix("bytes="), range.hasSuffix("-")
            else { return nil }
            return Int(range.dropFirst("bytes=".count).dropLast())
        }

        // MARK: Producing resume data

        @Test func cancelByProducingResumeDataThenResumingGivesTheFreshFile() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let first = AF.download(server.url("/bytes/\(Self.size)?seed=21&stall-after=\(Self.cut)"))
            let firstTask = first.serializingDownloadedFileURL()
            #expect(await waitForDownload(of: first, atLeast: Int64(Self.cut)))

            let handed: Data? = await withCheckedContinuation { continuation in
                first.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
            }
            let firstResponse = await firstTask.response
            let resumeData = try #require(handed)
            #expect(firstResponse.error?.isExplicitlyCancelledError == true)
            #expect(firstResponse.resumeData == resumeData)
            #expect(first.resumeData == resumeData)

            let resumed = AF.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            let response = await resumed.serializingDownloadedFileURL().response

            #expect(response.response?.statusCode == 206)
            #expect(resumed.performedRequests.last?.value(forHTTPHeaderField: "Range") == "bytes=\(Self.cut)-")
            #expect(resumed.performedRequests.last?.value(forHTTPHeaderField: "If-Range")
                == "\"bytes-\(Self.size)-21\"")
            #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 21)))
            #expect(resumed.downloadProgress.completedUnitCount == Int64(Self.size))
            #expect(resumed.downloadProgress.totalUnitCount == Int64(Self.size))
            #expect(temporaryFilesLeft(by: [first, resumed]).isEmpty)
        }

        @Test func cancelProducingResumeDataWithLastModifiedOnlyResumesWithTheDate() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let query = "seed=22&validator=last-modified"
            let first = AF.download(server.url("/bytes/\(Self.size)?\(query)&stall-after=\(Self.cut + 3)"))
            let firstTask = first.serializingDownloadedFileURL()
            #expect(await waitForDownload(of: first, atLeast: Int64(Self.cut + 3)))
            first.cancel(producingResumeData: true)
            _ = await firstTask.response
            let resumeData = try #require(first.resumeData)

            let resumed = AF.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            let response = await resumed.serializingDownloadedFileURL().response

            #expect(response.response?.statusCode == 206)
            #expect(resumed.performedRequests.last?.value(forHTTPHeaderField: "If-Range") == RangeSupportDate.lastModified)
            #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 22)))
            #expect(temporaryFilesLeft(by: [first, resumed]).isEmpty)
        }

        @Test func failureMidBodyPutsResumeDataInTheErrorAndResumes() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let first = AF.download(server.url("/bytes/\(Self.size)?seed=23&close-after=\(Self.cut)"))
            let failed = await first.serializingDownloadedFileURL().response

            #expect(failed.error?.sessionTaskURLErrorCode == .networkConnectionLost)
            let resumeData = try #require(failed.error?.downloadResumeData)
            #expect(failed.resumeData == resumeData)
            #expect(first.resumeData == resumeData)

            let resumed = AF.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            let response = await resumed.serializingDownloadedFileURL().response

            #expect(response.response?.statusCode == 206)
            // The connection may close before every byte the server wrote was delivered: the range
            // starts where the file on disk ends.
            let rangeStart = Self.rangeStart(of: resumed)
            #expect(rangeStart.map { $0 > 0 && $0 <= Self.cut } == true)
            #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 23)))
            #expect(temporaryFilesLeft(by: [first, resumed]).isEmpty)
        }

        // MARK: Restarting cleanly

        @Test func serverIgnoringTheRangeRestartsTheFileFromZero() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let first = AF.download(server.url("/range-ignored/\(Self.size)?seed=24&close-after=\(Self.cut)"))
            let failed = await first.serializingDownloadedFileURL().response
            let resumeData = try #require(failed.error?.downloadResumeData)

            let resumed = AF.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            let response = await resumed.serializingDownloadedFileURL().response

            #expect(Self.rangeStart(of: resumed) != nil)
            #expect(response.response?.statusCode == 200)
            #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 24)))
            #expect(temporaryFilesLeft(by: [first, resumed]).isEmpty)
        }

        @Test func changedResourceIsDownloadedWholeNeverSpliced() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            for (validator, key, stale) in [("etag", "entityTag", "\"bytes-old\""),
                                            ("last-modified", "lastModified", "Thu, 01 Jan 2015 00:00:00 GMT")] {
                let first = AF.download(server.url("/bytes/\(Self.size)?seed=25&validator=\(validator)&close-after=\(Self.cut)"))
                let failed = await first.serializingDownloadedFileURL().response
                // The resource changed since: the validator kept in the resume data no longer matches.
                let resumeData = try editedResumeData(#require(failed.error?.downloadResumeData), replacing: key, with: stale)

                let resumed = AF.download(resumingWith: resumeData, to: { _, _ in (scratch.file(validator), []) })
                let response = await resumed.serializingDownloadedFileURL().response

                #expect(resumed.performedRequests.last?.value(forHTTPHeaderField: "If-Range") == stale)
                #expect(response.response?.statusCode == 200)
                #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 25)))
                #expect(temporaryFilesLeft(by: [first, resumed]).isEmpty)
            }
        }

        @Test func missingPartialFileStartsFromZero() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let first = AF.download(server.url("/bytes/\(Self.size)?seed=26&close-after=\(Self.cut)"))
            let failed = await first.serializingDownloadedFileURL().response
            // Without a partial file there is no Range, so the resource must not cut the body again.
            let resumeData = try editedResumeData(#require(failed.error?.downloadResumeData),
                                            replacing: "url", with: server.url("/bytes/\(Self.size)?seed=26"))
            for name in temporaryFilesLeft(by: [first]) {
                try FileManager.default.removeItem(at: FileManager.default.temporaryDirectory.appendingPathComponent(name))
            }

            let resumed = AF.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            let response = await resumed.serializingDownloadedFileURL().response

            #expect(resumed.performedRequests.last?.value(forHTTPHeaderField: "Range") == nil)
            #expect(response.response?.statusCode == 200)
            #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 26)))
        }

        @Test func resumeDataPointingOutsideTheTemporaryDirectoryIsNotTouched() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let victim = scratch.file("LupineDownload_victim.tmp")
            try Data(repeating: 7, count: Self.cut).write(to: victim)
            let first = AF.download(server.url("/bytes/\(Self.size)?seed=27&close-after=\(Self.cut)"))
            let failed = await first.serializingDownloadedFileURL().response
            var resumeData = try editedResumeData(#require(failed.error?.downloadResumeData), replacing: "temporaryFile", with: victim.path)
            resumeData = try editedResumeData(resumeData, replacing: "url", with: server.url("/bytes/\(Self.size)?seed=27"))
            for name in temporaryFilesLeft(by: [first]) {
                try FileManager.default.removeItem(at: FileManager.default.temporaryDirectory.appendingPathComponent(name))
            }

            let resumed = AF.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            let response = await resumed.serializingDownloadedFileURL().response

            #expect(contents(of: victim) == Data(repeating: 7, count: Self.cut))
            #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 27)))
        }

        @Test func retryAfterAFailureMidBodyStartsOverAndKeepsOnlyTheLastPartialFile() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let first = AF.download(server.url("/bytes/\(Self.size)?seed=30&close-after=\(Self.cut)"),
                                    interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01))
            let failed = await first.serializingDownloadedFileURL().response

            #expect(first.retryCount == 1)
            #expect(first.performedRequests.allSatisfy { $0.value(forHTTPHeaderField: "Range") == nil })
            #expect(temporaryFilesLeft(by: [first]).count == 1)
            let resumeData = try #require(failed.error?.downloadResumeData)

            let resumed = AF.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            let response = await resumed.serializingDownloadedFileURL().response
            #expect(contents(of: response.value) == (try await freshBytes(server, count: Self.size, seed: 30)))
            #expect(temporaryFilesLeft(by: [first, resumed]).isEmpty)
        }

        @Test func undecodableResumeDataFailsWithCannotDecodeRawData() async throws {
            let response = await AF.download(resumingWith: Data("not resume data".utf8)).serializingDownloadedFileURL().response
            #expect(response.error?.sessionTaskURLErrorCode == .cannotDecodeRawData)
        }

        @Test func plainCancelProducesNoResumeData() async throws {
            let server = try await testServer()
            let first = AF.download(server.url("/bytes/\(Self.size)?seed=28&stall-after=\(Self.cut)"))
            let task = first.serializingDownloadedFileURL()
            #expect(await waitForDownload(of: first, atLeast: Int64(Self.cut)))
            first.cancel(producingResumeData: false)
            let response = await task.response

            #expect(response.resumeData == nil)
            #expect(first.resumeData == nil)
            #expect(temporaryFilesLeft(by: [first]).isEmpty)
        }

        @Test func cancellingAResumedDownloadBeforeItStartsRemovesThePartialFile() async throws {
            let server = try await testServer()
            let first = AF.download(server.url("/bytes/\(Self.size)?seed=29&close-after=\(Self.cut)"))
            let failed = await first.serializingDownloadedFileURL().response
            let resumeData = try #require(failed.error?.downloadResumeData)
            #expect(!temporaryFilesLeft(by: [first]).isEmpty)

            let resumed = AF.download(resumingWith: resumeData)
            resumed.cancel()
            _ = await resumed.serializingDownloadedFileURL().response
            #expect(await waitUntil { temporaryFilesLeft(by: [first, resumed]).isEmpty })
        }
    }
}

/// The `Last-Modified` of `/bytes/N` in LupineTestServer.
enum RangeSupportDate {
    static let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"
}
