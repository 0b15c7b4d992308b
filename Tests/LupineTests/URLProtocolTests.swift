import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// URLProtocol classes answering requests in place of the network, through Lupine's pipeline.
@Suite struct URLProtocolTests {
    private static let json = Data(#"{"name":"stubbed"}"#.utf8)

    @Test func aConfiguredProtocolAnswersThroughTheWholePipeline() async throws {
        let host = StubURLProtocol.host()
        host.stub("/item", .respond(status: 200, headers: ["Content-Type": "application/json"], chunks: [Self.json.prefix(5), Self.json.dropFirst(5)]))
        let monitor = TaskLoggingMonitor()
        let adapter = Adapter { request, _, completion in
            var request = request
            request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
            completion(.success(request))
        }
        let session = Session(configuration: .stubbed(), interceptor: adapter, eventMonitors: [monitor])
        let request = session.request(host.url("/item"))
        let response = await request.validate().serializingDecodable(StubbedItem.self).response
        #expect(response.value == StubbedItem(name: "stubbed"))
        #expect(response.response?.statusCode == 200)
        let seen = try #require(host.requests.first)
        // The adapter ran; the protocol loaded its canonical request.
        #expect(seen.value(forHTTPHeaderField: "Authorization") == "Bearer token")
        #expect(seen.value(forHTTPHeaderField: "X-Canonical") == "yes")
        // The protocol's task is the request's task.
        #expect(host.protocolTasks.first??.taskIdentifier == request.task?.taskIdentifier)
        #expect(host.protocolTasks.first ?? nil === request.task)
        #expect(await waitUntil { monitor.names.contains("requestDidFinish") })
        #expect(monitor.names.contains("didSendURLRequest"))
        #expect(monitor.names.contains("didCompleteTask(nil)"))
        withExtendedLifetime(session) {}
    }

    @Test func validationAndRetriesApplyToStubbedResponses() async throws {
        let host = StubURLProtocol.host()
        host.stub("/flaky", .respond(status: 503))
        let retrier = Retrier { request, _, _, completion in
            if request.retryCount == 0 { host.stub("/flaky", .respond(status: 200, chunks: [Data("ok".utf8)])) }
            completion(request.retryCount == 0 ? .retry : .doNotRetry)
        }
        let session = Session(configuration: .stubbed(), interceptor: retrier)
        let request = session.request(host.url("/flaky"))
        let response = await request.validate().serializingString().response
        #expect(response.value == "ok")
        #expect(request.retryCount == 1)
        #expect(host.requests.count == 2)

        host.stub("/missing", .respond(status: 404))
        let rejected = await session.request(host.url("/missing")).validate().serializingData().response
        #expect(rejected.error?.responseCode == 404)
        withExtendedLifetime(session) {}
    }

    @Test func requestsTheProtocolDeclinesGoToTheNetwork() async throws {
        let server = try await testServer()
        let host = StubURLProtocol.host()
        let session = Session(configuration: .stubbed())
        let response = await session.request(server.url("/get")).serializingDecodable(HTTPBinResponse.self).response
        #expect(response.response?.statusCode == 200)
        #expect(host.requests.isEmpty)
        withExtendedLifetime(session) {}
    }

    @Test func aRegisteredClassAnswersUntilItIsUnregistered() async throws {
        let host = RegisteredStubURLProtocol.host()
        host.stub("/registered", .respond(status: 201, chunks: [Data("made".utf8)]))
        URLProtocol.registerClass(RegisteredStubURLProtocol.self)
        let session = Session()
        let response = await session.request(host.url("/registered", scheme: "http")).serializingString().response
        #expect(response.response?.statusCode == 201)
        #expect(response.value == "made")
        URLProtocol.unregisterClass(RegisteredStubURLProtocol.self)
        // Back to the network: an unknown host cannot be reached.
        let unstubbed = await session.request(host.url("/registered", scheme: "http")).serializingString().response
        #expect(unstubbed.error?.isSessionTaskError == true)
        #expect(host.requests.count == 1)
        withExtendedLifetime(session) {}
    }

    @Test func theProtocolsErrorIsTheRequestsUnderlyingError() async throws {
        struct StubFailure: Error, Equatable { let code: Int }
        let host = StubURLProtocol.host()
        host.stub("/custom", .fail(StubFailure(code: 7)))
        host.stub("/offline", .fail(URLError(.notConnectedToInternet)))
        let session = Session(configuration: .stubbed())
        let custom = await session.request(host.url("/custom")).serializingData().response
        #expect(custom.error?.isSessionTaskError == true)
        #expect(custom.error?.underlyingError as? StubFailure == StubFailure(code: 7))
        let offline = await session.request(host.url("/offline")).serializingData().response
        #expect(offline.error?.sessionTaskURLErrorCode == .notConnectedToInternet)
        withExtendedLifetime(session) {}
    }

    @Test func redirectsFromTheProtocolAreFollowedAndHandledLikeTheNetworks() async throws {
        let host = StubURLProtocol.host()
        host.stub("/old", .redirect(to: "/new", status: 301))
        host.stub("/new", .respond(status: 200, chunks: [Data("moved".utf8)]))
        let handled = Locked<Int?>(nil)
        let redirector = Redirector.modify { _, request, response in
            handled.withValue { $0 = response.statusCode }
            return request
        }
        let session = Session(configuration: .stubbed())
        let followed = await session.request(host.url("/old")).redirect(using: redirector).serializingString().response
        #expect(followed.value == "moved")
        #expect(followed.response?.url?.path == "/new")
        #expect(handled.current == 301)
        #expect(host.requests.map { $0.url?.path } == ["/old", "/new"])

        let stopped = await session.request(host.url("/old")).redirect(using: .doNotFollow)
            .serializingData(emptyResponseCodes: [301]).response
        #expect(stopped.response?.statusCode == 301)
        withExtendedLifetime(session) {}
    }

    @Test func aStoredResponseIsOfferedToTheProtocolWhichMayDeclareItValid() async throws {
        let host = StubURLProtocol.host()
        host.stub("/cached", .cachedOr(status: 200, headers: ["Cache-Control": "no-cache", "ETag": "\"v1\""], body: Data("first".utf8)))
        let configuration = URLSessionConfiguration.stubbed()
        configuration.urlCache = URLCache(memoryCapacity: 1_000_000, diskCapacity: 0, diskPath: nil)
        let session = Session(configuration: configuration)
        let first = await session.request(host.url("/cached")).serializingString().response
        #expect(first.value == "first")
        let second = await session.request(host.url("/cached")).serializingString().response
        #expect(second.value == "first")
        #expect(host.requests.count == 2)
        #expect(host.cachedResponses.first ?? nil == nil)
        #expect((host.cachedResponses.last ?? nil)?.data == Data("first".utf8))
        // The revalidation was conditional, as it is on the network.
        #expect(host.requests.last?.value(forHTTPHeaderField: "If-None-Match") == "\"v1\"")
        withExtendedLifetime(session) {}
    }

    @Test func anAuthenticationChallengeFailsWithAClearError() async throws {
        let host = StubURLProtocol.host()
        host.stub("/secret", .challenge)
        let session = Session(configuration: .stubbed())
        let response = await session.request(host.url("/secret")).serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .userAuthenticationRequired)
        #expect(response.error?.localizedDescription.contains("authentication") == true)
        withExtendedLifetime(session) {}
    }

    @Test func aPlainURLResponseBecomesA200WithItsMIMEType() async throws {
        let host = StubURLProtocol.host()
        host.stub("/plain", .plain(mimeType: "text/plain", body: Data("hello".utf8)))
        let session = Session(configuration: .stubbed())
        let response = await session.request(host.url("/plain", scheme: "mock")).validate(contentType: ["text/plain"])
            .serializingString().response
        #expect(response.value == "hello")
        #expect(response.response?.statusCode == 200)
        withExtendedLifetime(session) {}
    }

    @Test func uploadsAndDownloadsAreStubbedToo() async throws {
        let host = StubURLProtocol.host()
        host.stub("/upload", .respond(status: 200))
        host.stub("/file", .respond(status: 200, chunks: [Data("file body".utf8)]))
        let session = Session(configuration: .stubbed())
        _ = await session.upload(Data("sent body".utf8), to: host.url("/upload")).serializingData(emptyResponseCodes: [200]).response
        #expect(host.requests.first?.httpBody == Data("sent body".utf8))
        #expect(host.requests.first?.httpMethod == "POST")

        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let download = await session.download(host.url("/file"), to: { _, _ in (scratch.file("body"), []) })
            .serializingDownloadedFileURL().response
        #expect(contents(of: download.value) == Data("file body".utf8))
        withExtendedLifetime(session) {}
    }

    /// The timeout is the longest silence allowed, not the whole load: each callback restarts it.
    /// (One timer now serves the exchange; a timer per callback, cancelled but left queued until
    /// its time, had piled up a gigabyte in the URLProtocol fuzz target.)
    @Test func aProtocolThatKeepsSendingDoesNotTimeOut() async throws {
        let host = StubURLProtocol.host()
        let chunks = (0..<8).map { Data([UInt8($0)]) }
        host.stub("/trickle", .trickle(chunks: chunks, interval: 0.1))
        let session = Session(configuration: .stubbed())
        let response = await session.request(host.url("/trickle"), requestModifier: { $0.timeoutInterval = 0.4 })
            .serializingData().response
        #expect(response.error == nil)
        #expect(response.data == Data(chunks.joined()))
        withExtendedLifetime(session) {}
    }

    @Test func aSilentProtocolTimesOutAndIsStopped() async throws {
        let host = StubURLProtocol.host()
        host.stub("/silent", .silence)
        let session = Session(configuration: .stubbed())
        let response = await session.request(host.url("/silent"), requestModifier: { $0.timeoutInterval = 0.3 })
            .serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(await waitUntil { host.stopCount == 1 })

        let cancelled = session.request(host.url("/silent"))
        cancelled.resume()
        #expect(await waitUntil { host.requests.count == 2 })
        cancelled.cancel()
        let cancelledResponse = await cancelled.serializingData().response
        #expect(cancelledResponse.error?.isExplicitlyCancelledError == true)
        #expect(await waitUntil { host.stopCount == 2 })
        withExtendedLifetime(session) {}
    }

    // MARK: data: URLs

    /// URLSession answers `data:` URLs (RFC 2397) with Foundation's own loader, though no
    /// configuration lists it; so does Lupine, with a loader of its own and no network involved.
    @Test func dataURLsAreAnsweredWithTheirDecodedContent() async throws {
        let base64 = await AF.request("data:text/plain;charset=utf-8;base64,aMOpbGxv").validate().serializingString().response
        #expect(base64.value == "héllo")
        #expect(base64.error == nil)

        let percentEncoded = await AF.request("data:,hi%20there").serializingData().response
        #expect(percentEncoded.value == Data("hi there".utf8))
    }

    @Test func aDataURLCanBeDownloadedToAFile() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("document.json")
        let response = await AF.download("data:application/json,%7B%22name%22%3A%22stubbed%22%7D",
                                         to: { _, _ in (destination, []) })
            .serializingDecodable(StubbedItem.self).response
        #expect(response.value == StubbedItem(name: "stubbed"))
        #expect(response.fileURL == destination)
    }
}

private struct StubbedItem: Decodable, Equatable, Sendable {
    let name: String
}

/// The `data:` loader is picked by the URL's scheme, and only for that scheme: one that merely
/// begins with "data", or is shorter, goes to the transport, which does not speak it.
@Suite struct DataURLSchemeTests {
    @Test func onlyTheDataSchemeGoesToTheDataLoader() async throws {
        let data = await AF.request("data:,hi").serializingData().response
        #expect(data.value == Data("hi".utf8))
        // Schemes are case-insensitive (RFC 3986, section 3.1): corelibs' loader, used before,
        // never answered these, and the request waited for its timeout.
        for string in ["DATA:,hi", "Data:,hi"] {
            let response = await AF.request(string, requestModifier: { $0.timeoutInterval = 10 }).serializingData().response
            #expect(response.value == Data("hi".utf8), "\(string): \(String(describing: response.error))")
        }
        for string in ["database:,hi", "dat:,hi", "datadata:,hi"] {
            let response = await AF.request(string).serializingData().response
            #expect((response.error?.underlyingError as? URLError)?.code == .unsupportedURL, "\(string)")
        }
    }
}
