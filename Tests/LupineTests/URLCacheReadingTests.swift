import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// What user code reads from the configured `URLCache` after Lupine stored a response: the
/// stored response with its body and header fields, as on Apple platforms, or nil; never an empty
/// stand-in (`../shared/API.md`, section 0, rows 26-27).
@Suite struct URLCacheReadingTests {
    typealias Helpers = HTTPCacheTests

    /// The response the cache gives user code for `url`, once Lupine has stored one there.
    static func readBack(_ cache: URLCache, _ url: String) async throws -> CachedURLResponse? {
        let request = URLRequest(url: try #require(URL(string: url)))
        _ = await waitUntil { cache.cachedResponse(for: request).map { !$0.data.isEmpty } ?? false }
        return cache.cachedResponse(for: request)
    }

    @Test func cachedResponseForARequestGivesTheStoredBodyAndHeaders() async throws {
        let server = try await testServer()
        let cache = Helpers.memoryCache()
        let session = Helpers.session(cache: cache)
        let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600", "X-Key": "read1"])
        let fetched = await session.request(resource.url).serializingData().response
        let body = try #require(fetched.data)

        let cached = try #require(try await Self.readBack(cache, resource.url))
        #expect(!body.isEmpty)
        #expect(cached.data == body)
        let http = try #require(cached.response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(http.url?.absoluteString == resource.url)
        #expect(http.value(forHTTPHeaderField: "Cache-Control") == "max-age=3600")
        #expect(http.value(forHTTPHeaderField: "X-Key") == "read1")
    }

    /// A response stored again (a reload) is what the cache then gives.
    @Test func aResponseStoredAgainReplacesWhatTheCacheGives() async throws {
        let server = try await testServer()
        let cache = Helpers.memoryCache()
        let session = Helpers.session(cache: cache)
        let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600"])
        let first = await Helpers.fetch(session, resource.url)
        let reload: Session.RequestModifier = { $0.cachePolicy = .reloadIgnoringLocalCacheData }
        let second = await session.request(resource.url, requestModifier: reload).serializingData().response
        #expect(server.hits(for: resource.path) == 2)

        let cached = try #require(try await Self.readBack(cache, resource.url))
        let decoded = try JSONDecoder().decode(Helpers.CachedBody.self, from: cached.data)
        #expect(cached.data == second.data)
        #expect(decoded != first.value)
    }

    /// corelibs matches by host, port and path: for URLs that differ only in their query it gives
    /// the response Lupine stored last among them. Lupine's own look-ups still tell them apart.
    @Test func urlsDifferingOnlyInTheirQueryReadTheLastStoredOfThem() async throws {
        let server = try await testServer()
        let cache = Helpers.memoryCache()
        let session = Helpers.session(cache: cache)
        let path = HTTPCacheStoreTests.newPath()
        let first = HTTPCacheStoreTests.url(server, path, ["Cache-Control": "max-age=3600", "X-Key": "q1"])
        let second = HTTPCacheStoreTests.url(server, path, ["Cache-Control": "max-age=3600", "X-Key": "q2"])
        let a = await session.request(first).serializingData().response
        let b = await session.request(second).serializingData().response

        let forSecond = try #require(try await Self.readBack(cache, second))
        #expect(forSecond.data == b.data)
        let forFirst = try #require(try await Self.readBack(cache, first))
        #expect(forFirst.data == b.data)
        #expect((forFirst.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Key") == "q2")

        // Lupine answers each URL with its own response, from the cache.
        let againA = await session.request(first).serializingData().response
        #expect(againA.data == a.data)
        #expect(server.hits(for: path) == 2)
    }

    /// A successful POST removes the stored response: the cache no longer gives it.
    @Test func anInvalidatedResponseIsNoLongerGiven() async throws {
        let server = try await testServer()
        let cache = Helpers.memoryCache()
        let session = Helpers.session(cache: cache)
        let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600"])
        _ = await Helpers.fetch(session, resource.url)
        let request = URLRequest(url: try #require(URL(string: resource.url)))
        #expect(try await Self.readBack(cache, resource.url) != nil)

        _ = await session.request(resource.url, method: .post).serializingData().response
        #expect(await waitUntil { cache.cachedResponse(for: request) == nil })
        _ = await Helpers.fetch(session, resource.url)
        #expect(server.hits(for: resource.path) == 3)
    }

    /// When a sibling URL of the group (another query) is still held, the cache gives that one
    /// after the response it showed was invalidated, and the sibling is still answered from memory.
    @Test func anInvalidatedResponseLeavesTheSiblingItsGroupHolds() async throws {
        let server = try await testServer()
        let cache = Helpers.memoryCache()
        let session = Helpers.session(cache: cache)
        let path = HTTPCacheStoreTests.newPath()
        let first = HTTPCacheStoreTests.url(server, path, ["Cache-Control": "max-age=3600", "X-Key": "s1"])
        let second = HTTPCacheStoreTests.url(server, path, ["Cache-Control": "max-age=3600", "X-Key": "s2"])
        let a = await session.request(first).serializingData().response
        _ = await session.request(second).serializingData().response
        _ = try await Self.readBack(cache, second)

        _ = await session.request(second, method: .post).serializingData().response
        let request = URLRequest(url: try #require(URL(string: first)))
        #expect(await waitUntil { cache.cachedResponse(for: request)?.data == a.data })
        let againA = await session.request(first).serializingData().response
        #expect(againA.data == a.data)
        #expect(server.hits(for: path) == 3)
    }

    /// A response user code stores in the `URLCache` itself is not seen by Lupine's store: the
    /// request goes to the network (documented on `HTTPCacheStore` and in the migration article).
    @Test func aResponseUserCodeStoresIsNotUsedByLupine() async throws {
        let server = try await testServer()
        let cache = Helpers.memoryCache()
        let session = Helpers.session(cache: cache)
        let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600"])
        let url = try #require(URL(string: resource.url))
        let head = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                headerFields: ["Cache-Control": "max-age=3600"]))
        cache.storeCachedResponse(CachedURLResponse(response: head, data: Data(#"{"serial":-1}"#.utf8)),
                                  for: URLRequest(url: url))

        let fetched = await Helpers.fetch(session, resource.url)
        #expect(server.hits(for: resource.path) == 1)
        #expect(fetched.value?.serial != -1)
        // Lupine then stores its own response there.
        let cached = try #require(try await Self.readBack(cache, resource.url))
        #expect(cached.data == fetched.data)
    }

    /// A cache whose markers show bodies still stays within its memory capacity as corelibs
    /// counts it, and Lupine's newest entries are still answered from memory.
    @Test func bodiesShownStayWithinTheMemoryCapacity() async throws {
        let server = try await testServer()
        let cache = URLCache(memoryCapacity: 32 << 10, diskCapacity: 0, diskPath: nil)
        let session = Helpers.session(cache: cache)
        var stored: [HTTPCacheTests.Resource] = []
        for _ in 0..<80 {
            let resource = Helpers.resource(server, ["Cache-Control": "max-age=3600", "X-Pad": String(repeating: "p", count: 600)])
            _ = await Helpers.fetch(session, resource.url)
            stored.append(resource)
        }
        #expect(cache.currentMemoryUsage <= 32 << 10)
        // No eviction was taken for a clear of the whole cache: the last ten are still in memory.
        for resource in stored.suffix(10).reversed() {
            _ = await Helpers.fetch(session, resource.url)
            #expect(server.hits(for: resource.path) == 1)
        }
        #expect(try await Self.readBack(cache, stored[79].url) != nil)
    }
}
