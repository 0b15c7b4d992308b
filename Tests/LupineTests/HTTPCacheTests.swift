import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Synchronization
import Testing

/// The HTTP cache over loopback. `/cached/KEY` answers with the headers a test chooses and counts
/// its real hits; its body's `serial` tells a stored response from a new one. Every test has its
/// own URLCache and KEY.
@Suite struct HTTPCacheTests {
    struct CachedBody: Decodable, Equatable {
        let serial: Int
        let varied: String?
    }

    struct Resource {
        let url: String
        let path: String
    }

    static func resource(_ server: LupineTestServer, _ headers: KeyValuePairs<String, String>) -> Resource {
        let path = "/cached/\(UUID().uuidString)"
        let query = headers.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)"
        }.joined(separator: "&")
        return Resource(url: server.url(path + (query.isEmpty ? "" : "?" + query)), path: path)
    }

    static func memoryCache() -> URLCache {
        URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: nil)
    }

    static func session(cache: URLCache = memoryCache(),
                        handler: (any CachedResponseHandler)? = nil,
                        configure: (URLSessionConfiguration) -> Void = { _ in }) -> Session {
        let configuration = URLSessionConfiguration.af.ephemeral
        configuration.urlCache = cache
        configure(configuration)
        return Session(configuration: configuration, cachedResponseHandler: handler)
    }

    static func fetch(_ session: Session, _ url: String,
                      modifier: Session.RequestModifier? = nil) async -> DataResponse<CachedBody, AFError> {
        await session.request(url, requestModifier: modifier).serializingDecodable(CachedBody.self).response
    }

    // MARK: Freshness

    /// A stream request is a data task to URLSession: its response is stored like a data
    /// request's and a fresh one answers the next stream or data request.
    @Test func streamResponseIsStoredAndAnswersTheNextRequests() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        func streamedBody() async -> Data {
            let chunks = Locked<[Data]>([])
            await withCheckedContinuation { continuation in
                session.streamRequest(resource.url).responseStream { stream in
                    if let data = stream.value { chunks.withValue { $0.append(data) } }
                    if stream.completion != nil { continuation.resume() }
                }
            }
            return chunks.current.reduce(Data(), +)
        }

        let first = try JSONDecoder().decode(CachedBody.self, from: await streamedBody())
        let second = try JSONDecoder().decode(CachedBody.self, from: await streamedBody())
        let fetched = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 1)
        #expect(second == first)
        #expect(fetched.value == first)
    }

    @Test func freshResponseIsAnsweredWithoutTheNetwork() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        let first = await Self.fetch(session, resource.url)
        let monitor = RecordingMonitor()
        let request = session.request(resource.url).eventMonitor(monitor)
        let second = await request.serializingDecodable(CachedBody.self).response

        #expect(server.hits(for: resource.path) == 1)
        #expect(second.value == first.value)
        #expect(second.response?.statusCode == 200)
        #expect(second.response?.value(forHTTPHeaderField: "Cache-Control") == "max-age=3600")
        #expect(second.response?.value(forHTTPHeaderField: "Age").flatMap(Int.init) != nil)
        #expect(first.response?.value(forHTTPHeaderField: "Age") == nil)
        // Nothing was sent: no send event and no send time, but a head, a body and a completion.
        #expect(await waitUntil { monitor.names.contains("didParseResponse<Value>") })
        #expect(monitor.names == ["requestDidResume", "didCreateInitialURLRequest", "didCreateURLRequest",
                                  "requestDidResumeExchange", "didReceiveResponse(200)", "didCompleteAttempt(nil)",
                                  "requestDidFinish", "didParseResponse<Value>"])
        #expect(request.timeline.requestSentTime == nil)
        #expect(request.timeline.initialResponseTime != nil)
        #expect(request.timeline.requestCompletedTime != nil)
        #expect(request.downloadProgress.completedUnitCount == Int64(second.data?.count ?? -1))
    }

    @Test func onHTTPResponseHandlerHoldsAndReleasesAStoredResponse() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        let first = await Self.fetch(session, resource.url)
        let statuses = Locked<[Int]>([])
        let allowed = await session.request(resource.url)
            .onHTTPResponse { response, completion in
                statuses.withValue { $0.append(response.statusCode) }
                completion(.allow)
            }
            .serializingDecodable(CachedBody.self).response
        let cancelled = await session.request(resource.url)
            .onHTTPResponse { _, completion in completion(.cancel) }
            .serializingDecodable(CachedBody.self).response

        #expect(server.hits(for: resource.path) == 1)
        #expect(statuses.current == [200])
        #expect(allowed.value == first.value)
        #expect(cancelled.error?.isExplicitlyCancelledError == true)
    }

    @Test func expiresInTheFutureKeepsAResponseFresh() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Expires": "Wed, 21 Oct 2099 07:28:00 GMT"])
        _ = await Self.fetch(session, resource.url)
        _ = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 1)
    }

    @Test func lastModifiedGivesHeuristicFreshness() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"])
        _ = await Self.fetch(session, resource.url)
        _ = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 1)
    }

    @Test func privateResponseIsStoredByThisPrivateCache() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "private, max-age=3600"])
        _ = await Self.fetch(session, resource.url)
        _ = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 1)
    }

    // MARK: Revalidation

    @Test func staleResponseIsRevalidatedWithItsETagAndA304() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=0", "ETag": "\"v1\""])
        let first = await Self.fetch(session, resource.url)
        let second = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 2)
        #expect(second.value == first.value)
        #expect(second.response?.statusCode == 200)
        // The stored response took the 304's header fields.
        #expect(second.response?.value(forHTTPHeaderField: "X-Served")?.hasPrefix("304-") == true)
        #expect(first.response?.value(forHTTPHeaderField: "X-Served")?.hasPrefix("200-") == true)
    }

    @Test func noCacheResponseIsRevalidatedWithLastModifiedEveryTime() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "no-cache", "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"])
        let first = await Self.fetch(session, resource.url)
        let second = await Self.fetch(session, resource.url)
        let third = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 3)
        #expect(second.value == first.value)
        #expect(third.value == first.value)
        #expect(third.response?.value(forHTTPHeaderField: "X-Served")?.hasPrefix("304-") == true)
    }

    @Test func noStoreResponseIsNeverStored() async throws {
        let server = try await testServer()
        let cache = Self.memoryCache()
        let session = Self.session(cache: cache)
        let resource = Self.resource(server, ["Cache-Control": "no-store, max-age=3600"])
        let first = await Self.fetch(session, resource.url)
        let second = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 2)
        #expect(first.value != second.value)
        let url = try #require(URL(string: resource.url))
        #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil)
    }

    @Test func varyKeepsVariantsApart() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600", "Vary": "Accept-Language"])
        let french: Session.RequestModifier = { $0.setValue("fr", forHTTPHeaderField: "Accept-Language") }
        let german: Session.RequestModifier = { $0.setValue("de", forHTTPHeaderField: "Accept-Language") }
        let first = await Self.fetch(session, resource.url, modifier: french)
        let again = await Self.fetch(session, resource.url, modifier: french)
        let other = await Self.fetch(session, resource.url, modifier: german)

        #expect(server.hits(for: resource.path) == 2)
        #expect(again.value == first.value)
        #expect(first.value?.varied == "fr")
        #expect(other.value?.varied == "de")
    }

    @Test func successfulPostInvalidatesTheStoredResponse() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        _ = await Self.fetch(session, resource.url)
        _ = await session.request(resource.url, method: .post).serializingData().response
        _ = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 3)
    }

    @Test func postResponseIsNeitherStoredNorOfferedToTheHandler() async throws {
        let server = try await testServer()
        let offers = Mutex(0)
        let handler = ResponseCacher(behavior: .modify { _, response in
            offers.withLock { $0 += 1 }
            return response
        })
        let session = Self.session(handler: handler)
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        let posted = await session.request(resource.url, method: .post).serializingDecodable(CachedBody.self).response
        let fetched = await Self.fetch(session, resource.url)

        // URLSession stores GET responses only, whatever their freshness.
        #expect(posted.response?.statusCode == 200)
        #expect(server.hits(for: resource.path) == 2)
        #expect(fetched.value != posted.value)
        #expect(offers.withLock { $0 } == 1)
    }

    // MARK: Cache policies

    @Test func reloadIgnoringLocalCacheDataLoadsAndStoresTheNewResponse() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        _ = await Self.fetch(session, resource.url)
        let reloaded = await Self.fetch(session, resource.url) { $0.cachePolicy = .reloadIgnoringLocalCacheData }
        let cached = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 2)
        #expect(cached.value == reloaded.value)
    }

    @Test func returnCacheDataElseLoadUsesAStaleResponse() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=0"])
        let first = await Self.fetch(session, resource.url)
        let second = await Self.fetch(session, resource.url) { $0.cachePolicy = .returnCacheDataElseLoad }

        #expect(server.hits(for: resource.path) == 1)
        #expect(second.value == first.value)
    }

    @Test func returnCacheDataDontLoadFailsWhenNothingIsStored() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        let response = await Self.fetch(session, resource.url) { $0.cachePolicy = .returnCacheDataDontLoad }

        #expect(server.hits(for: resource.path) == 0)
        #expect(response.error?.sessionTaskURLErrorCode == .resourceUnavailable)
    }

    /// `only-if-cached` among the Session's own header fields (which a request without fields of
    /// its own sends alone) answers from the store or fails, as it does in a request's fields.
    @Test func onlyIfCachedInTheSessionsHeadersFailsWhenNothingIsStored() async throws {
        let server = try await testServer()
        let session = Self.session { configuration in
            var headers = configuration.httpAdditionalHeaders ?? [:]
            headers["Cache-Control"] = "only-if-cached"
            configuration.httpAdditionalHeaders = headers
        }
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        let response = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 0)
        #expect(response.error?.sessionTaskURLErrorCode == .resourceUnavailable)
    }

    @Test func onlyIfCachedInTheRequestsHeadersFailsWhenNothingIsStored() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        let response = await Self.fetch(session, resource.url) { $0.setValue("only-if-cached", forHTTPHeaderField: "cache-control") }
        let allowed = await Self.fetch(session, resource.url) { $0.setValue("no-cache", forHTTPHeaderField: "Cache-Control") }

        #expect(server.hits(for: resource.path) == 1)
        #expect(response.error?.sessionTaskURLErrorCode == .resourceUnavailable)
        #expect(allowed.error == nil)
    }

    @Test func configurationCachePolicyAppliesToRequestsWithTheDefaultPolicy() async throws {
        let server = try await testServer()
        let session = Self.session { $0.requestCachePolicy = .reloadIgnoringLocalCacheData }
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        _ = await Self.fetch(session, resource.url)
        _ = await Self.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 2)
    }

    /// The configuration is read when the Session is made, as URLSession copies its configuration:
    /// a policy set on it afterwards changes nothing.
    @Test func configurationChangedAfterTheSessionWasMadeIsNotRead() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.ephemeral
        configuration.urlCache = Self.memoryCache()
        let session = Session(configuration: configuration)
        configuration.requestCachePolicy = .returnCacheDataDontLoad
        configuration.timeoutIntervalForResource = 0.000_001
        let resource = Self.resource(server, ["Cache-Control": "no-store"])
        let response = await Self.fetch(session, resource.url)

        #expect(response.error == nil)
        #expect(server.hits(for: resource.path) == 1)
    }

    // MARK: Alamofire's CacheTests matrix

    /// The `Cache-Control` values of Alamofire's CacheTests, each on a resource without validators.
    static let matrixControls = ["public", "private", "max-age=3600", "max-age=0", "no-cache", "no-store"]

    /// Alamofire's CacheTests: every control is fetched once, then again with `policy`; the second
    /// response is the stored one exactly for the controls listed (a `no-store` one under
    /// `returnCacheDataDontLoad` fails instead).
    @Test(arguments: [
        (URLRequest.CachePolicy.useProtocolCachePolicy, ["max-age=3600"]),
        (.reloadIgnoringLocalCacheData, []),
        (.returnCacheDataElseLoad, ["public", "private", "max-age=3600", "max-age=0", "no-cache"]),
        (.returnCacheDataDontLoad, ["public", "private", "max-age=3600", "max-age=0", "no-cache"]),
    ])
    func cachePolicyMatrix(policy: URLRequest.CachePolicy, storedAnswers: [String]) async throws {
        let server = try await testServer()
        let session = Self.session { $0.requestCachePolicy = .useProtocolCachePolicy }
        var primed: [String: (resource: Resource, serial: Int?)] = [:]
        for control in Self.matrixControls {
            let resource = Self.resource(server, ["Cache-Control": control])
            primed[control] = (resource, await Self.fetch(session, resource.url).value?.serial)
        }
        for control in Self.matrixControls {
            guard let (resource, serial) = primed[control] else { continue }
            #expect(serial != nil, "\(control)")
            let again = await Self.fetch(session, resource.url) { $0.cachePolicy = policy }
            if policy == .returnCacheDataDontLoad, control == "no-store" {
                #expect(again.response == nil)
                #expect(again.error?.sessionTaskURLErrorCode == .resourceUnavailable)
            } else if storedAnswers.contains(control) {
                #expect(again.value?.serial == serial, "\(control) should be answered from the cache")
            } else {
                #expect(again.value != nil && again.value?.serial != serial, "\(control) should be loaded again")
            }
        }
    }

    // MARK: Storage

    @Test func diskStoredResponseServesALaterSession() async throws {
        let server = try await testServer()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        let first = await Self.fetch(Self.session(cache: URLCache(memoryCapacity: 0, diskCapacity: 10 << 20, diskPath: directory.path)),
                                     resource.url)
        let later = Self.session(cache: URLCache(memoryCapacity: 0, diskCapacity: 10 << 20, diskPath: directory.path))
        let second = await Self.fetch(later, resource.url)

        #expect(server.hits(for: resource.path) == 1)
        #expect(second.value == first.value)
    }

    @Test func downloadsBypassTheCache() async throws {
        let server = try await testServer()
        let session = Self.session()
        let resource = Self.resource(server, ["Cache-Control": "max-age=3600"])
        _ = await Self.fetch(session, resource.url)
        let download = await session.download(resource.url).serializingData().response
        if let file = download.fileURL { try? FileManager.default.removeItem(at: file) }

        #expect(download.error == nil)
        #expect(server.hits(for: resource.path) == 2)
    }

    // MARK: What goes to disk

    @Test func responseWithoutFreshnessOrValidatorsIsKeptInMemoryOnly() async throws {
        let server = try await testServer()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = Self.session(cache: URLCache(memoryCapacity: 4 << 20, diskCapacity: 10 << 20, diskPath: directory.path))
        let plain = Self.resource(server, [:])
        let validated = Self.resource(server, ["ETag": "\"v1\""])
        _ = await Self.fetch(session, plain.url)
        _ = await Self.fetch(session, validated.url)

        #expect(HTTPCacheStoreTests.entryFiles(directory).count == 1)
        // Still there for the policies that answer from the cache whatever its age.
        _ = await Self.fetch(session, plain.url) { $0.cachePolicy = .returnCacheDataElseLoad }
        #expect(server.hits(for: plain.path) == 1)
    }

    /// corelibs' URLCache appends a URL to its eviction order on every store, even when the URL is
    /// already held; a later eviction then force-unwraps the second, already removed entry and
    /// the process traps. Storing the same URL twice, then filling the cache, crashed Lupine.
    @Test func restoringAURLThenFillingTheCacheDoesNotCrash() async throws {
        let server = try await testServer()
        let cache = URLCache(memoryCapacity: 16 << 10, diskCapacity: 0, diskPath: nil)
        let session = Self.session(cache: cache)
        let repeated = Self.resource(server, [:])
        _ = await Self.fetch(session, repeated.url)
        _ = await Self.fetch(session, repeated.url)
        #expect(server.hits(for: repeated.path) == 2)
        // Other resources until the cache must evict, several entries at a time.
        for _ in 0..<30 {
            let other = Self.resource(server, [:])
            let response = await Self.fetch(session, other.url)
            #expect(response.error == nil)
        }
        #expect(cache.currentMemoryUsage <= 16 << 10)
    }
}
