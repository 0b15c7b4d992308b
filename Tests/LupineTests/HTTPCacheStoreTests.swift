import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// Lupine's own cache store over loopback: keyed by the whole URL, Vary variants side by side,
/// bounded by the configured URLCache's capacities, cleared by its clear calls, and safe against
/// damaged files. `/cached/KEY` counts its real hits per path (the query aside), so two URLs that
/// differ only in their query share one counter.
@Suite struct HTTPCacheStoreTests {
    typealias CachedBody = HTTPCacheTests.CachedBody

    /// A fresh `/cached/...` path; `url(path, headers)` adds the response headers as the query.
    static func newPath() -> String { "/cached/\(UUID().uuidString)" }

    static func url(_ server: LupineTestServer, _ path: String, _ headers: KeyValuePairs<String, String>) -> String {
        let query = headers.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)"
        }.joined(separator: "&")
        return server.url(path + (query.isEmpty ? "" : "?" + query))
    }

    static func fetch(_ session: Session, _ url: String,
                      modifier: Session.RequestModifier? = nil) async -> DataResponse<CachedBody, AFError> {
        await HTTPCacheTests.fetch(session, url, modifier: modifier)
    }

    /// A directory for a disk cache, removed when `body` returns.
    static func withCacheDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }

    static func diskSession(_ directory: URL, memory: Int = 0, disk: Int = 10 << 20) -> Session {
        HTTPCacheTests.session(cache: URLCache(memoryCapacity: memory, diskCapacity: disk, diskPath: directory.path))
    }

    /// The entry files of Lupine's folder in a cache directory.
    static func entryFiles(_ directory: URL) -> [URL] {
        let folder = directory.appendingPathComponent("Lupine")
        return ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.pathExtension == "lupinecache" }
    }

    // MARK: Keyed by the whole URL

    @Test func urlsThatDifferOnlyInTheirQueryNeverShareAResponse() async throws {
        let server = try await testServer()
        let session = HTTPCacheTests.session()
        let path = Self.newPath()
        let first = Self.url(server, path, ["Cache-Control": "max-age=60", "X-Key": "zz3"])
        let second = Self.url(server, path, ["Cache-Control": "max-age=60", "X-Key": "zz4"])

        let a = await Self.fetch(session, first)
        let b = await Self.fetch(session, second)
        #expect(server.hits(for: path) == 2)
        #expect(a.response?.value(forHTTPHeaderField: "X-Key") == "zz3")
        #expect(b.response?.value(forHTTPHeaderField: "X-Key") == "zz4")
        #expect(a.value != b.value)

        // Each is then answered from the cache with its own response.
        let againA = await Self.fetch(session, first)
        let againB = await Self.fetch(session, second)
        #expect(server.hits(for: path) == 2)
        #expect(againA.value == a.value)
        #expect(againB.value == b.value)
        #expect(againB.response?.value(forHTTPHeaderField: "X-Key") == "zz4")
    }

    /// A successful POST removes the URL's file from disk (it looks the key up in the store's index
    /// first), and a POST to a URL the disk never stored removes nothing else.
    @Test func successfulPostRemovesTheStoredFileFromDisk() async throws {
        let server = try await testServer()
        try await Self.withCacheDirectory { directory in
            let path = Self.newPath()
            let stored = Self.url(server, path, ["Cache-Control": "max-age=60", "X-Key": "post1"])
            let other = Self.url(server, path, ["Cache-Control": "max-age=60", "X-Key": "post2"])
            let session = Self.diskSession(directory)
            _ = await Self.fetch(session, stored)
            _ = await Self.fetch(session, other)
            #expect(Self.entryFiles(directory).count == 2)

            _ = await session.request(stored, method: .post).serializingData().response
            #expect(await waitUntil { Self.entryFiles(directory).count == 1 })
            _ = await Self.fetch(session, stored)
            _ = await Self.fetch(session, other)
            #expect(server.hits(for: path) == 4)
            withExtendedLifetime(session) {}
        }
    }

    /// A successful POST invalidates a response the store keeps in memory only while its disk
    /// tier holds other files: the next GET goes to the network, and the disk keeps the others.
    @Test func successfulPostInvalidatesAResponseKeptInMemoryBesideADiskTier() async throws {
        let server = try await testServer()
        try await Self.withCacheDirectory { directory in
            let path = Self.newPath()
            // No freshness and no validators: kept in memory only, usable with returnCacheDataElseLoad.
            let memoryOnly = Self.url(server, path, ["X-Key": "mem1"])
            let onDisk = Self.url(server, path, ["Cache-Control": "max-age=60", "X-Key": "disk1"])
            let session = Self.diskSession(directory, memory: 4 << 20)
            let useStored: Session.RequestModifier = { $0.cachePolicy = .returnCacheDataElseLoad }
            _ = await Self.fetch(session, onDisk)
            let first = await Self.fetch(session, memoryOnly, modifier: useStored)
            let stored = await Self.fetch(session, memoryOnly, modifier: useStored)
            #expect(stored.value == first.value)
            #expect(server.hits(for: path) == 2)

            let posted = await session.request(memoryOnly, method: .post).serializingData().response
            let afterPost = await Self.fetch(session, memoryOnly, modifier: useStored)
            _ = await Self.fetch(session, onDisk)

            #expect(posted.response?.statusCode == 200)
            #expect(afterPost.value != first.value)
            #expect(server.hits(for: path) == 4)
            #expect(Self.entryFiles(directory).count == 1)
            withExtendedLifetime(session) {}
        }
    }

    @Test func urlsThatDifferOnlyInTheirQueryNeverShareAResponseFromDisk() async throws {
        let server = try await testServer()
        try await Self.withCacheDirectory { directory in
            let path = Self.newPath()
            let first = Self.url(server, path, ["Cache-Control": "max-age=60", "X-Key": "zz3"])
            let second = Self.url(server, path, ["Cache-Control": "max-age=60", "X-Key": "zz4"])
            let a = await Self.fetch(Self.diskSession(directory), first)
            // A new Session on the same directory, as another process would be.
            let b = await Self.fetch(Self.diskSession(directory), second)
            #expect(server.hits(for: path) == 2)
            #expect(b.response?.value(forHTTPHeaderField: "X-Key") == "zz4")

            let later = Self.diskSession(directory, memory: 4 << 20)
            let againA = await Self.fetch(later, first)
            let againB = await Self.fetch(later, second)
            #expect(server.hits(for: path) == 2)
            #expect(againA.value == a.value)
            #expect(againB.value == b.value)
            #expect(Self.entryFiles(directory).count == 2)
        }
    }

    @Test func theFragmentIsNotPartOfTheKey() async throws {
        let server = try await testServer()
        let session = HTTPCacheTests.session()
        let path = Self.newPath()
        let url = Self.url(server, path, ["Cache-Control": "max-age=60"])
        let first = await Self.fetch(session, url + "#one")
        let second = await Self.fetch(session, url + "#two")
        #expect(server.hits(for: path) == 1)
        #expect(second.value == first.value)
    }

    // MARK: Vary

    @Test func threeVaryVariantsAreEachAnsweredFromTheCache() async throws {
        let server = try await testServer()
        let session = HTTPCacheTests.session()
        let path = Self.newPath()
        let url = Self.url(server, path, ["Cache-Control": "max-age=3600", "Vary": "Accept-Language"])
        let languages = ["fr", "de", "en"]
        func fetch(_ language: String) async -> DataResponse<CachedBody, AFError> {
            await Self.fetch(session, url) { $0.setValue(language, forHTTPHeaderField: "Accept-Language") }
        }
        var firsts: [String: CachedBody] = [:]
        for language in languages { firsts[language] = await fetch(language).value }
        #expect(server.hits(for: path) == 3)

        for language in languages {
            let again = await fetch(language)
            #expect(again.value == firsts[language])
            #expect(again.value?.varied == language)
        }
        #expect(server.hits(for: path) == 3)
    }

    // MARK: 304 and no-store

    @Test func notModifiedCarryingNoStoreRemovesTheEntry() async throws {
        let server = try await testServer()
        let session = HTTPCacheTests.session()
        let path = Self.newPath()
        // Revalidated on every use; once updated by the 304 it would be fresh by Last-Modified.
        let url = Self.url(server, path, ["Cache-Control": "no-cache", "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"])
        let first = await Self.fetch(session, url)
        let revalidated = await Self.fetch(session, url) {
            $0.setValue("Cache-Control: no-store", forHTTPHeaderField: "X-Cached-Set")
        }
        #expect(server.hits(for: path) == 2)
        #expect(revalidated.value == first.value)
        #expect(revalidated.response?.value(forHTTPHeaderField: "X-Served")?.hasPrefix("304-") == true)

        // The entry is gone: the next request goes to the network, unconditionally.
        let third = await Self.fetch(session, url)
        #expect(server.hits(for: path) == 3)
        #expect(third.response?.value(forHTTPHeaderField: "X-Served")?.hasPrefix("200-") == true)
        #expect(third.value != first.value)
    }

    @Test func aHandlerCannotMakeTheStoreKeepANoStoreResponse() async throws {
        let server = try await testServer()
        let handler = ResponseCacher(behavior: .modify { _, cached in
            guard let response = cached.response as? HTTPURLResponse, let url = response.url,
                  let changed = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                headerFields: ["Cache-Control": "no-store, max-age=3600"]) else { return nil }
            return CachedURLResponse(response: changed, data: cached.data)
        })
        let session = HTTPCacheTests.session(handler: handler)
        let path = Self.newPath()
        let url = Self.url(server, path, ["Cache-Control": "max-age=3600"])
        _ = await Self.fetch(session, url)
        _ = await Self.fetch(session, url)
        #expect(server.hits(for: path) == 2)
    }

    // MARK: Capacity

    @Test func memoryCapacityEvictsTheLeastRecentlyUsedEntry() async throws {
        let server = try await testServer()
        let cache = URLCache(memoryCapacity: 48 << 10, diskCapacity: 0, diskPath: nil)
        let session = HTTPCacheTests.session(cache: cache)
        let store = HTTPCacheStores.store(for: cache)
        let padding = String(repeating: "p", count: 1_000)
        func resource() -> (path: String, url: String) {
            let path = Self.newPath()
            return (path, Self.url(server, path, ["Cache-Control": "max-age=3600", "X-Pad": padding]))
        }
        let a = resource()
        let b = resource()
        _ = await Self.fetch(session, a.url)
        _ = await Self.fetch(session, b.url)
        // A is used again: B is now the least recently used.
        _ = await Self.fetch(session, a.url)
        #expect(server.hits(for: a.path) == 1)
        // New entries until the store has to evict one.
        var added = 0
        while store.memoryUsage.count == added + 2, added < 200 {
            _ = await Self.fetch(session, resource().url)
            added += 1
        }
        #expect(added < 200)
        #expect(store.memoryUsage.bytes <= 48 << 10)

        _ = await Self.fetch(session, a.url)
        _ = await Self.fetch(session, b.url)
        #expect(server.hits(for: a.path) == 1)
        #expect(server.hits(for: b.path) == 2)
    }

    @Test func diskCapacityEvictsTheLeastRecentlyUsedFile() async throws {
        let server = try await testServer()
        try await Self.withCacheDirectory { directory in
            let session = Self.diskSession(directory, disk: 48 << 10)
            let padding = String(repeating: "p", count: 1_000)
            func resource() -> (path: String, url: String) {
                let path = Self.newPath()
                return (path, Self.url(server, path, ["Cache-Control": "max-age=3600", "X-Pad": padding]))
            }
            let a = resource()
            let b = resource()
            _ = await Self.fetch(session, a.url)
            _ = await Self.fetch(session, b.url)
            _ = await Self.fetch(session, a.url)
            #expect(server.hits(for: a.path) == 1)
            var added = 0
            while Self.entryFiles(directory).count == added + 2, added < 200 {
                _ = await Self.fetch(session, resource().url)
                added += 1
            }
            #expect(added < 200)
            let total = Self.entryFiles(directory).reduce(0) { total, file in
                total + ((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
            }
            #expect(total <= 48 << 10)

            _ = await Self.fetch(session, a.url)
            _ = await Self.fetch(session, b.url)
            #expect(server.hits(for: a.path) == 1)
            #expect(server.hits(for: b.path) == 2)
        }
    }

    @Test func aResponseOverFivePercentOfTheCapacityIsNotStored() async throws {
        let server = try await testServer()
        let session = HTTPCacheTests.session(cache: URLCache(memoryCapacity: 16 << 10, diskCapacity: 0, diskPath: nil))
        let path = Self.newPath()
        let url = Self.url(server, path, ["Cache-Control": "max-age=3600", "X-Pad": String(repeating: "p", count: 1_000)])
        _ = await Self.fetch(session, url)
        _ = await Self.fetch(session, url)
        #expect(server.hits(for: path) == 2)
    }

    /// A body from the network shares the connection's receive buffer; the memory store keeps a
    /// copy of its own, so that an entry never holds more than the bytes its cost counts.
    @Test func memoryStoreKeepsNoBufferTheStoredBodyCameIn() throws {
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let store = HTTPCacheStores.store(for: cache)
        let url = try #require(URL(string: "http://127.0.0.1:1/cached/\(UUID().uuidString)"))
        let released = Locked(false)
        do {
            // Stands for a receive buffer: 64 KiB, of which the body is the first 64 bytes.
            let capacity = 64 << 10
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            buffer.initializeMemory(as: UInt8.self, repeating: 0x61, count: capacity)
            let whole = Data(bytesNoCopy: buffer, count: capacity, deallocator: .custom { pointer, _ in
                pointer.deallocate()
                released.withValue { $0 = true }
            })
            let entry = HTTPCacheEntry(statusCode: 200, headerFields: ["Cache-Control": "max-age=60"],
                                       requestTime: Date(), responseTime: Date(), varyValues: [:])
            let body = whole.prefix(64)
            store.store(StoredResponse(entry: entry, data: body, storagePolicy: .allowedInMemoryOnly),
                        for: url, key: HTTPCacheKey(url), requestHeaders: [:])
        }
        #expect(released.withValue { $0 }, "the stored entry still holds the 64 KiB buffer its 64-byte body came in")
        let stored = store.lookUp(url, key: HTTPCacheKey(url), requestHeaders: [:])
        #expect(stored?.data == Data(repeating: 0x61, count: 64))
    }

    // MARK: Clearing through the configured URLCache

    @Test func removeAllCachedResponsesClearsMemoryAndDisk() async throws {
        let server = try await testServer()
        try await Self.withCacheDirectory { directory in
            let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 10 << 20, diskPath: directory.path)
            let session = HTTPCacheTests.session(cache: cache)
            let path = Self.newPath()
            let url = Self.url(server, path, ["Cache-Control": "max-age=3600"])
            _ = await Self.fetch(session, url)
            _ = await Self.fetch(session, url)
            #expect(server.hits(for: path) == 1)
            #expect(Self.entryFiles(directory).count == 1)

            cache.removeAllCachedResponses()
            _ = await Self.fetch(session, url)
            #expect(server.hits(for: path) == 2)

            // From disk, in a new Session: cleared there too.
            cache.removeAllCachedResponses()
            _ = await Self.fetch(Self.diskSession(directory), url)
            #expect(server.hits(for: path) == 3)
        }
    }

    @Test func removeCachedResponseForARequestClearsThatURL() async throws {
        let server = try await testServer()
        let cache = HTTPCacheTests.memoryCache()
        let session = HTTPCacheTests.session(cache: cache)
        let removed = Self.newPath()
        let kept = Self.newPath()
        let removedURL = Self.url(server, removed, ["Cache-Control": "max-age=3600"])
        let keptURL = Self.url(server, kept, ["Cache-Control": "max-age=3600"])
        _ = await Self.fetch(session, removedURL)
        _ = await Self.fetch(session, keptURL)

        cache.removeCachedResponse(for: URLRequest(url: try #require(URL(string: removedURL))))
        _ = await Self.fetch(session, removedURL)
        _ = await Self.fetch(session, keptURL)
        #expect(server.hits(for: removed) == 2)
        #expect(server.hits(for: kept) == 1)
    }

    /// A path whose corelibs key can name a file (base64 without `/`), so that corelibs can
    /// delete the marker files of its group.
    static func pathWithFileableKey(_ server: LupineTestServer) -> String {
        while true {
            let path = newPath()
            if let url = URL(string: server.url(path)), let identifier = HTTPCacheDiskStore.corelibsIdentifier(of: url),
               !identifier.contains("/") { return path }
        }
    }

    static func markerFiles(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".storedcachedurlresponse") }
    }

    @Test func removeCachedResponseReachesAnEntryOnlyOnDisk() async throws {
        let server = try await testServer()
        try await Self.withCacheDirectory { directory in
            let cache = URLCache(memoryCapacity: 0, diskCapacity: 10 << 20, diskPath: directory.path)
            let session = HTTPCacheTests.session(cache: cache)
            let removed = Self.pathWithFileableKey(server)
            let kept = Self.pathWithFileableKey(server)
            let removedURL = Self.url(server, removed, ["Cache-Control": "max-age=3600"])
            let keptURL = Self.url(server, kept, ["Cache-Control": "max-age=3600"])
            _ = await Self.fetch(session, removedURL)
            _ = await Self.fetch(session, keptURL)

            cache.removeCachedResponse(for: URLRequest(url: try #require(URL(string: removedURL))))
            // Also in a new Session, as another process would be.
            _ = await Self.fetch(Self.diskSession(directory, memory: 4 << 20), removedURL)
            _ = await Self.fetch(session, keptURL)
            #expect(server.hits(for: removed) == 2)
            #expect(server.hits(for: kept) == 1)
        }
    }

    @Test func groupMarkerFilesGoWithTheLastFileOfTheirGroup() async throws {
        let server = try await testServer()
        try await Self.withCacheDirectory { directory in
            let session = Self.diskSession(directory)
            let path = Self.pathWithFileableKey(server)
            let first = Self.url(server, path, ["Cache-Control": "max-age=3600", "X-Key": "1"])
            let second = Self.url(server, path, ["Cache-Control": "max-age=3600", "X-Key": "2"])
            _ = await Self.fetch(session, first)
            _ = await Self.fetch(session, second)
            // The store's marker and the group's.
            #expect(Self.markerFiles(directory).count == 2)

            _ = await session.request(first, method: .delete).serializingData().response
            #expect(Self.markerFiles(directory).count == 2)
            _ = await session.request(second, method: .delete).serializingData().response
            #expect(Self.markerFiles(directory).count == 1)
            #expect(Self.entryFiles(directory).isEmpty)
        }
    }

    @Test func markersInTheURLCacheStayWithinItsMemoryCapacity() async throws {
        let server = try await testServer()
        let cache = URLCache(memoryCapacity: 64 << 10, diskCapacity: 0, diskPath: nil)
        let session = HTTPCacheTests.session(cache: cache)
        var last = ""
        var lastPath = ""
        for _ in 0..<300 {
            lastPath = Self.newPath()
            last = Self.url(server, lastPath, ["Cache-Control": "max-age=3600"])
            _ = await Self.fetch(session, last)
        }
        #expect(cache.currentMemoryUsage <= 64 << 10)
        #expect(HTTPCacheStores.store(for: cache).memoryUsage.bytes <= 64 << 10)
        // The newest entries are still answered from memory.
        _ = await Self.fetch(session, last)
        #expect(server.hits(for: lastPath) == 1)
    }

    @Test func aNilURLCacheTurnsCachingOff() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.ephemeral
        configuration.urlCache = nil
        let session = Session(configuration: configuration)
        let path = Self.newPath()
        let url = Self.url(server, path, ["Cache-Control": "max-age=3600"])
        _ = await Self.fetch(session, url)
        _ = await Self.fetch(session, url)
        #expect(server.hits(for: path) == 2)
    }

    // MARK: Damaged files

    @Test(arguments: ["truncated", "corrupt", "empty"])
    func aDamagedDiskEntryIsSkippedAndReplaced(damage: String) async throws {
        let server = try await testServer()
        try await Self.withCacheDirectory { directory in
            let path = Self.newPath()
            let url = Self.url(server, path, ["Cache-Control": "max-age=3600"])
            let first = await Self.fetch(Self.diskSession(directory), url)
            let file = try #require(Self.entryFiles(directory).first)
            var bytes = try Data(contentsOf: file)
            switch damage {
            case "truncated": bytes = bytes.prefix(bytes.count / 2)
            case "corrupt": bytes[bytes.count - 3] ^= 0xFF
            default: bytes = Data()
            }
            try bytes.write(to: file)

            let second = await Self.fetch(Self.diskSession(directory), url)
            #expect(second.error == nil)
            #expect(server.hits(for: path) == 2)
            #expect(second.value != first.value)
            // The damaged file was replaced by the new response.
            let third = await Self.fetch(Self.diskSession(directory), url)
            #expect(server.hits(for: path) == 2)
            #expect(third.value == second.value)
        }
    }

    // MARK: Cost of a hit

    @Test func aHeuristicallyFreshEntryIsAnsweredFromMemoryWithoutReadingTheDisk() async throws {
        let server = try await testServer()
        try await Self.withCacheDirectory { directory in
            let path = Self.newPath()
            let url = Self.url(server, path, ["Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"])
            _ = await Self.fetch(Self.diskSession(directory), url)
            // A new process would find the entry on disk: read once, then kept in memory.
            let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 10 << 20, diskPath: directory.path)
            let session = HTTPCacheTests.session(cache: cache)
            _ = await Self.fetch(session, url)
            #expect(HTTPCacheStores.store(for: cache).memoryUsage.count == 1)
            let file = try #require(Self.entryFiles(directory).first)
            try FileManager.default.removeItem(at: file)
            let third = await Self.fetch(session, url)
            #expect(third.error == nil)
            #expect(server.hits(for: path) == 1)
        }
    }
}
