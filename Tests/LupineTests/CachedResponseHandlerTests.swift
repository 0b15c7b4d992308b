import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// `CachedResponseHandler` and `ResponseCacher` decide what is stored: the request's handler,
/// else the Session's, else everything RFC 9111 allows.
@Suite struct CachedResponseHandlerTests {
    private typealias Helpers = HTTPCacheTests

    @Test func sessionDoNotCacheStoresNothing() async throws {
        let server = try await testServer()
        let session = Helpers.session(handler: .doNotCache)
        let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600"])
        _ = await Helpers.fetch(session, resource.url)
        _ = await Helpers.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 2)
    }

    @Test func requestHandlerTakesPrecedenceOverTheSessions() async throws {
        let server = try await testServer()
        let session = Helpers.session(handler: ResponseCacher.doNotCache)
        let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600"])
        _ = await session.request(resource.url).cacheResponse(using: .cache).serializingData().response
        _ = await Helpers.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 1)
        #expect(session.request(resource.url).cacheResponse(using: .doNotCache).cachedResponseHandler is ResponseCacher)
    }

    @Test func modifyStoresWhatItReturnsAndSeesTheHop() async throws {
        let server = try await testServer()
        let seen = Locked<[String]>([])
        let handler = ResponseCacher.modify { task, cached in
            seen.withValue { $0.append("\(task.currentRequest?.url?.path ?? "") \((task.response as? HTTPURLResponse)?.statusCode ?? 0)") }
            return CachedURLResponse(response: cached.response, data: Data("{\"serial\":-1}".utf8),
                                     userInfo: cached.userInfo, storagePolicy: cached.storagePolicy)
        }
        let session = Helpers.session(handler: handler)
        let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600"])
        let first = await Helpers.fetch(session, resource.url)
        let second = await Helpers.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 1)
        #expect(first.value?.serial != -1)
        #expect(second.value?.serial == -1)
        #expect(seen.current == ["\(resource.path) 200"])
    }

    @Test func modifyReturningNilStoresNothing() async throws {
        let server = try await testServer()
        let session = Helpers.session(handler: .modify { _, _ in nil })
        let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600"])
        _ = await Helpers.fetch(session, resource.url)
        _ = await Helpers.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 2)
    }

    @Test func handlerIsNotAskedAboutAResponseThatMayNotBeStored() async throws {
        let server = try await testServer()
        let asked = Locked(0)
        let session = Helpers.session(handler: .modify { _, cached in
            asked.withValue { $0 += 1 }
            return cached
        })
        let resource = Helpers.resource(server, ["Cache-Control": "no-store"])
        _ = await Helpers.fetch(session, resource.url)

        #expect(asked.current == 0)
    }

    // MARK: Alamofire's CachedResponseHandlerTests

    /// Whether `session` holds a response for `url`: asked with `returnCacheDataDontLoad`, which
    /// fails without the network when nothing is stored.
    private static func isStored(_ url: String, in session: Session) async -> Bool {
        await Helpers.fetch(session, url) { $0.cachePolicy = .returnCacheDataDontLoad }.error == nil
    }

    /// As Alamofire's: a response without freshness or validators (its `/get`), handled by the
    /// request's handler, the Session's, or both.
    @Test(arguments: [
        ("request cache", nil, ResponseCacher.cache, true),
        ("request doNotCache", nil, .doNotCache, false),
        ("request modify", nil, .modify { _, cached in
            CachedURLResponse(response: cached.response, data: cached.data, userInfo: ["key": "value"], storagePolicy: .allowed)
        }, true),
        ("session cache", ResponseCacher.cache, nil, true),
        ("session doNotCache", .doNotCache, .doNotCache, false),
        ("session modify", .modify { _, cached in
            CachedURLResponse(response: cached.response, data: cached.data, userInfo: ["key": "value"], storagePolicy: .allowed)
        }, nil, true),
        ("request over session", .cache, .doNotCache, false),
    ] as [(String, ResponseCacher?, ResponseCacher?, Bool)])
    func handlerDecidesWhetherAPlainResponseIsStored(_ name: String, sessionHandler: ResponseCacher?,
                                                     requestHandler: ResponseCacher?, isStored: Bool) async throws {
        let server = try await testServer()
        let cache = Helpers.memoryCache()
        let session = Helpers.session(cache: cache, handler: sessionHandler)
        let resource = Helpers.resource(server, [:])
        var request = session.request(resource.url)
        if let requestHandler { request = request.cacheResponse(using: requestHandler) }
        let response = await request.serializingData().response

        #expect(response.error == nil, "\(name)")
        // Alamofire's own check: whether the URLCache answers for the request. Lupine's store shows
        // the response it stored there (`URLCacheMarker`).
        let urlRequest = try #require(request.request)
        #expect((cache.cachedResponse(for: urlRequest) != nil) == isStored, "\(name)")
        #expect(await Self.isStored(resource.url, in: session) == isStored, "\(name)")
        #expect(server.hits(for: resource.path) == 1, "\(name)")
    }

    /// A handler that answers later, from another queue.
    private struct DeferredHandler: CachedResponseHandler {
        func dataTask(_ task: URLSessionDataTask, willCacheResponse response: CachedURLResponse,
                      completion: @escaping (CachedURLResponse?) -> Void) {
            nonisolated(unsafe) let completion = completion
            DispatchQueue.global().async { completion(response) }
        }
    }

    @Test func handlerMayAnswerAsynchronously() async throws {
        let server = try await testServer()
        let cache = Helpers.memoryCache()
        let session = Helpers.session(cache: cache, handler: DeferredHandler())
        let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600"])
        _ = await Helpers.fetch(session, resource.url)
        let url = try #require(URL(string: resource.url))
        #expect(await waitUntil { cache.cachedResponse(for: URLRequest(url: url)) != nil })
        _ = await Helpers.fetch(session, resource.url)

        #expect(server.hits(for: resource.path) == 1)
    }
}
