import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

extension TransferSuites {
    @Suite struct DownloadRequestTests {
        // MARK: Destination and options

        @Test func downloadWithoutDestinationLandsBesideTheTemporaryFileWithAlamofirePrefix() async throws {
            let server = try await testServer()
            let request = AF.download(server.url("/bytes/100000?seed=1"))
            let response = await request.serializingDownloadedFileURL().response
            let fileURL = try #require(response.value)
            defer { try? FileManager.default.removeItem(at: fileURL) }

            #expect(fileURL.lastPathComponent.hasPrefix("Alamofire_"))
            #expect(fileURL.deletingLastPathComponent().standardizedFileURL.path
                == FileManager.default.temporaryDirectory.standardizedFileURL.path)
            #expect(request.fileURL == fileURL)
            #expect(contents(of: fileURL) == (try await freshBytes(server, count: 100_000, seed: 1)))
            try FileManager.default.removeItem(at: fileURL)
            #expect(temporaryFilesLeft(by: [request]).isEmpty)
        }

        @Test func customDestinationCreatesIntermediateDirectories() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let destination = scratch.file("a/b/c/body.bin")
            let request = AF.download(server.url("/bytes/5000?seed=2"), to: { _, _ in (destination, [.createIntermediateDirectories]) })
            let response = await request.serializingDownloadedFileURL().response

            #expect(response.value == destination)
            #expect(contents(of: destination) == (try await freshBytes(server, count: 5000, seed: 2)))
            #expect(temporaryFilesLeft(by: [request]).isEmpty)
        }

        @Test func removePreviousFileReplacesAnExistingFile() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let destination = scratch.file("body.bin")
            try Data("old".utf8).write(to: destination)
            let response = await AF.download(server.url("/bytes/64?seed=3"), to: { _, _ in (destination, [.removePreviousFile]) })
                .serializingData().response

            #expect(response.value == (try await freshBytes(server, count: 64, seed: 3)))
            #expect(contents(of: destination) == response.value)
        }

        @Test func existingDestinationWithoutRemovePreviousFileFailsWithDownloadedFileMoveFailed() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let destination = scratch.file("body.bin")
            try Data("old".utf8).write(to: destination)
            let request = AF.download(server.url("/bytes/64"), to: { _, _ in (destination, []) })
            let response = await request.serializingDownloadedFileURL().response

            guard case let .downloadedFileMoveFailed(_, source, failedDestination)? = response.error else {
                Issue.record("expected downloadedFileMoveFailed, got \(String(describing: response.error))")
                return
            }
            #expect(failedDestination == destination)
            #expect(!FileManager.default.fileExists(atPath: source.path))
            #expect(contents(of: destination) == Data("old".utf8))
            #expect(request.fileURL == nil)
            #expect(temporaryFilesLeft(by: [request]).isEmpty)
        }

        @Test func missingParentDirectoryWithoutCreateIntermediateDirectoriesFails() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let request = AF.download(server.url("/bytes/64"), to: { _, _ in (scratch.file("missing/body.bin"), []) })
            let response = await request.serializingDownloadedFileURL().response

            #expect(response.error?.isDownloadedFileMoveError == true)
            #expect(temporaryFilesLeft(by: [request]).isEmpty)
        }

        @Test func suggestedDownloadDestinationUsesTheResponseFileName() async throws {
            let server = try await testServer()
            let name = "lupine-\(UUID().uuidString).json"
            let destination = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory,
                                                                           options: [.createIntermediateDirectories, .removePreviousFile])
            let response = await AF.download(server.url("/anything/\(name)"), to: destination).serializingDownloadedFileURL().response
            let fileURL = try #require(response.value)
            defer { try? FileManager.default.removeItem(at: fileURL) }

            #expect(fileURL.lastPathComponent == name)
            #expect(fileURL.deletingLastPathComponent() == FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first)
        }

        @Test func suggestedDownloadDestinationNamesAFileAfterTheHostWhenTheURLHasNoPath() throws {
            let destination = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory)
            let temporaryURL = FileManager.default.temporaryDirectory.appendingPathComponent("unused.tmp")
            for address in ["https://files.example.com/", "https://files.example.com"] {
                let url = try #require(URL(string: address))
                let response = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:]))
                let placed = destination(temporaryURL, response).destinationURL

                #expect(placed.lastPathComponent == "files.example.com", "for \(address)")
                #expect(placed.deletingLastPathComponent() == FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first)
            }
        }

        // MARK: Serializers

        @Test func responseSerializersReadTheDownloadedFile() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let destination: DownloadRequest.Destination = { _, _ in (scratch.file("\(UUID().uuidString).json"), []) }

            let echo = try await AF.download(server.url("/get"), parameters: ["q": "lupine"], to: destination)
                .serializingDecodable(HTTPBinResponse.self).value
            #expect(echo.args["q"] == .string("lupine"))

            let text = try await AF.download(server.url("/encoding/utf8"), to: destination).serializingString().value
            #expect(!text.isEmpty)

            let data: AFDownloadResponse<Data> = await withCheckedContinuation { continuation in
                AF.download(server.url("/bytes/300?seed=4"), to: destination).responseData { continuation.resume(returning: $0) }
            }
            #expect(data.value == (try await freshBytes(server, count: 300, seed: 4)))
            #expect(data.fileURL.map { contents(of: $0) } == data.value)

            let url: AFDownloadResponse<URL> = await withCheckedContinuation { continuation in
                AF.download(server.url("/bytes/10"), to: destination).responseURL { continuation.resume(returning: $0) }
            }
            #expect(url.value.map { FileManager.default.fileExists(atPath: $0.path) } == true)

            let plain: AFDownloadResponse<URL?> = await withCheckedContinuation { continuation in
                AF.download(server.url("/bytes/10"), to: destination).response { continuation.resume(returning: $0) }
            }
            #expect(plain.value??.path == plain.fileURL?.path)
            #expect(plain.response?.statusCode == 200)
            #expect(plain.resumeData == nil)
        }

        // MARK: Progress

        @Test func downloadProgressIsMonotonicAndEndsAtContentLength() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let seen = Locked<[(Int64, Int64)]>([])
            let size: Int64 = 3 << 20
            let request = AF.download(server.url("/bytes/\(size)"), to: { _, _ in (scratch.file("body"), []) })
                .downloadProgress { progress in
                    seen.withValue { $0.append((progress.completedUnitCount, progress.totalUnitCount)) }
                }
            _ = await request.serializingDownloadedFileURL().response
            #expect(await waitUntil { seen.current.last?.0 == size })

            let values = seen.current
            #expect(values.allSatisfy { $0.1 == size })
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.0 <= $1.0 })
            #expect(request.downloadProgress.fractionCompleted == 1)
        }

        @Test func downloadProgressTotalIsUnknownWithoutContentLength() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let request = AF.download(server.url("/stream/20"), to: { _, _ in (scratch.file("body"), []) })
            let response = await request.serializingData().response

            #expect(request.downloadProgress.totalUnitCount == -1)
            #expect(request.downloadProgress.completedUnitCount == Int64(response.value?.count ?? -1))
        }

        @Test func suspendedDownloadStopsReadingAndResumesToTheSameFile() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            // Sent over 3 seconds, so that the body cannot arrive whole before suspend() acts
            // (64 MiB at loopback speed sometimes did on a loaded machine).
            let size = 4 << 20
            let request = AF.download(server.url("/drip?numbytes=\(size)&duration=3"), to: { _, _ in (scratch.file("body"), []) })
            let task = request.serializingDownloadedFileURL()
            #expect(await waitForDownload(of: request, atLeast: 1))
            request.suspend()

            // Once the bytes already in flight have arrived, nothing more is read while suspended,
            // though the server goes on sending.
            let pausedAt = await valueOnceStill { request.downloadProgress.completedUnitCount }
            try await Task.sleep(nanoseconds: 500_000_000)
            #expect(request.downloadProgress.completedUnitCount == pausedAt)
            #expect(pausedAt < Int64(size))

            request.resume()
            let response = await task.response
            #expect(response.error == nil)
            let written = try response.value.map { try Data(contentsOf: $0) }
            #expect(written?.count == size)
            #expect(written?.allSatisfy { $0 == UInt8(ascii: "*") } == true)
        }

        // MARK: Validation

        @Test func validateFailsOnUnacceptableStatusCode() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let response = await AF.download(server.url("/status/404"), to: { _, _ in (scratch.file("body"), []) })
                .validate().serializingDownloadedFileURL().response

            #expect(response.error?.responseCode == 404)
        }

        @Test func validateContentTypeChecksTheFile() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let destination: DownloadRequest.Destination = { _, _ in (scratch.file(UUID().uuidString), []) }

            let rejected = await AF.download(server.url("/json"), to: destination)
                .validate(contentType: ["text/plain"]).serializingDownloadedFileURL().response
            guard case let .responseValidationFailed(.unacceptableContentType(acceptable, actual))? = rejected.error else {
                Issue.record("expected unacceptableContentType, got \(String(describing: rejected.error))")
                return
            }
            #expect(acceptable == ["text/plain"])
            #expect(actual == "application/json")

            let accepted = await AF.download(server.url("/json"), to: destination)
                .validate(contentType: ["application/*"]).serializingDownloadedFileURL().response
            #expect(accepted.error == nil)

            // A 0-byte file passes whatever its content type.
            let empty = await AF.download(server.url("/bytes/0"), to: destination)
                .validate(contentType: ["text/plain"]).serializingDownloadedFileURL().response
            #expect(empty.error == nil)
        }

        @Test func customValidationSeesTheFileAtItsDestination() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let destination = scratch.file("body")
            let seenFile = Locked<URL?>(nil)
            let response = await AF.download(server.url("/bytes/10"), to: { _, _ in (destination, []) })
                .validate { _, _, fileURL in
                    seenFile.withValue { $0 = fileURL }
                    let exists = fileURL.map { FileManager.default.fileExists(atPath: $0.path) } == true
                    return exists ? .success(()) : .failure(AFError.explicitlyCancelled)
                }
                .serializingDownloadedFileURL().response

            #expect(response.error == nil)
            #expect(seenFile.current == destination)
        }

        // MARK: Cleanup

        @Test func cancelRemovesTheTemporaryFile() async throws {
            let server = try await testServer()
            let request = AF.download(server.url("/bytes/\(4 << 20)?seed=5&stall-after=\(1 << 20)"))
            let task = request.serializingDownloadedFileURL()
            #expect(await waitForDownload(of: request, atLeast: 1 << 20))
            // Progress counts bytes as they arrive; the file is made on the writer's queue, which
            // may run a moment later on a loaded machine.
            #expect(await waitUntil { !temporaryFilesLeft(by: [request]).isEmpty })

            request.cancel()
            let response = await task.response
            #expect(response.error?.isExplicitlyCancelledError == true)
            #expect(response.resumeData == nil)
            #expect(request.resumeData == nil)
            #expect(temporaryFilesLeft(by: [request]).isEmpty)
        }

        @Test func transportFailureWithoutValidatorsRemovesTheTemporaryFile() async throws {
            let server = try await testServer()
            let request = AF.download(server.url("/fault/close-mid-body?bytes=200000"))
            let response = await request.serializingDownloadedFileURL().response

            #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
            #expect(response.error?.downloadResumeData == nil)
            #expect(temporaryFilesLeft(by: [request]).isEmpty)
        }

        // MARK: Events

        @Test func eventMonitorsSeeDestinationValidationAndParsing() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let destination = scratch.file("body")
            let events = Locked<[String]>([])
            let monitor = ClosureEventMonitor()
            monitor.requestDidCreateDestinationURL = { _, url in events.withValue { $0.append("destination \(url.lastPathComponent)") } }
            monitor.requestDidValidateRequestResponseFileURLWithResult = { _, _, _, fileURL, _ in
                events.withValue { $0.append("validate \(fileURL?.lastPathComponent ?? "nil")") }
            }
            monitor.requestDidParseDownloadResponse = { _, _ in events.withValue { $0.append("parse") } }
            let session = Session(eventMonitors: [monitor])

            _ = await withCheckedContinuation { continuation in
                session.download(server.url("/bytes/10"), to: { _, _ in (destination, []) })
                    .validate()
                    .response { continuation.resume(returning: $0) }
            }
            #expect(await waitUntil { events.current.contains("parse") })
            #expect(events.current == ["destination body", "validate body", "validate body", "parse"])
            withExtendedLifetime(session) {}
        }

        // MARK: Memory

        /// 256 MiB stream to disk: the body never sits in memory, so the process grows by far less.
        @Test func largeDownloadKeepsResidentMemoryBounded() async throws {
            try await MemoryMeasurement.measuring { try await largeDownloadBody() }
        }

        private func largeDownloadBody() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let size: Int64 = 256 << 20
            // Warm up the connection pool and the code paths first.
            _ = await AF.download(server.url("/bytes/\(1 << 20)"), to: { _, _ in (scratch.file("warm"), [.removePreviousFile]) })
                .serializingDownloadedFileURL().response
            let before = residentMemoryBytes()

            let request = AF.download(server.url("/bytes/\(size)?seed=9"), to: { _, _ in (scratch.file("large"), []) })
            let response = await request.serializingDownloadedFileURL().response
            let after = residentMemoryBytes()

            #expect(response.error == nil)
            #expect(response.value.flatMap { try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? NSNumber }?.int64Value == size)
            if let before, let after {
                print("DownloadRequestTests: 256 MiB download grew resident memory by \((after - before) >> 10) KiB")
                #expect(after - before < 32 << 20)
            }
            #expect(temporaryFilesLeft(by: [request]).isEmpty)
        }
    }
}
