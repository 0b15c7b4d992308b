import Foundation
@testable import Lupine
import LupineTestServer
import Testing

/// Bodies of announced length of 8 MiB and more are collected in a mapping of their own
/// (`LargeBodyBuffer`): the caller sees the same bytes and the same value semantics as with any
/// other body.
@Suite struct LargeBodyTests {
    /// 20 MiB: above `LargeBodyBuffer.minimumSize`.
    private static let size = 20 * 1024 * 1024

    @Test func largeBodyOfAnnouncedLengthArrivesWhole() async throws {
        let server = try await testServer()
        // The same bytes, once with Content-Length (the mapped buffer) and once chunked (a Data).
        let announced = try await AF.request(server.url("/bytes/\(Self.size)?seed=7")).validate().serializingData().value
        let chunked = try await AF.request(server.url("/stream-bytes/\(Self.size)?seed=7")).validate().serializingData().value
        #expect(announced.count == Self.size)
        #expect(announced == chunked)
    }

    @Test func copiesOfALargeBodyAreIndependentValues() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/bytes/\(Self.size)?seed=8"))
        let response = await request.serializingData().response
        var changed = try #require(response.data)
        let original = changed[changed.startIndex]
        changed[changed.startIndex] = original &+ 1
        changed.append(contentsOf: [1, 2, 3])
        // The request's body and the response's are the one value the buffer was handed to.
        let requestData = try #require(request.data)
        #expect(requestData.count == Self.size)
        #expect(requestData[requestData.startIndex] == original)
        #expect(response.data?[requestData.startIndex] == original)
        #expect(requestData == response.data)
    }

    /// A server that announces 20 MiB and closes after 10: the request fails as any cut body does,
    /// and its retry collects its own body from the start (not after the first attempt's bytes).
    @Test func largeBodyCutShortFailsAndARetryStartsAfresh() async throws {
        let server = try await testServer()
        let half = Self.size / 2
        let policy = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0, retryableURLErrorCodes: [.networkConnectionLost])
        let request = AF.request(server.url("/fault/close-mid-body?bytes=\(half)"), interceptor: policy)
        let response = await request.serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(request.retryCount == 1)
        #expect((response.data?.count ?? 0) <= half)
    }

    #if os(Linux)
    @Test func bufferRefusesWhatDoesNotFitAndHandsItsBytesOff() throws {
        let capacity = LargeBodyBuffer.minimumSize
        let buffer = try #require(LargeBodyBuffer(capacity: capacity))
        let half = Data(repeating: 0xAB, count: capacity / 2)
        #expect(buffer.append(half))
        #expect(buffer.append(half))
        #expect(!buffer.append(Data([1])))
        #expect(buffer.count == capacity)
        var data = buffer.handOff()
        #expect(data.count == capacity)
        #expect(data.allSatisfy { $0 == 0xAB })
        // The Data owns the mapping: it grows like any other.
        data.append(contentsOf: [1, 2])
        #expect(data.count == capacity + 2)
        #expect(data.suffix(2) == Data([1, 2]))
        // A buffer that handed its bytes off takes no more.
        #expect(!buffer.append(Data([1])))
    }
    #endif

    #if os(Linux)
    /// A released mapping is kept a moment for the next body of about its size, then unmapped.
    @Test func aReleasedMappingServesTheNextBodyOfItsSizeThenGoes() async throws {
        let mappings = LargeBodyMappings(keptFor: .milliseconds(50))
        let size = LargeBodyBuffer.minimumSize
        let first = try #require(mappings.take(size: size))
        first.pointer.storeBytes(of: 0x5A, as: UInt8.self)
        mappings.release(first)
        #expect(mappings.keptMapping?.pointer == first.pointer)
        // The same size (or up to half of it) takes the same pages; a body twice as large may not.
        let second = try #require(mappings.take(size: size - 1))
        #expect(second.pointer == first.pointer)
        #expect(second.pointer.load(as: UInt8.self) == 0x5A)
        #expect(mappings.keptMapping == nil)
        mappings.release(second)
        let larger = try #require(mappings.take(size: size * 2))
        #expect(larger.size == size * 2)
        #expect(mappings.keptMapping == nil)
        mappings.release(larger)
        let smaller = try #require(mappings.take(size: size / 2))
        #expect(smaller.size == size / 2)
        mappings.release(smaller)
        // Nobody takes it: it is unmapped once `keptFor` has passed.
        for _ in 0..<200 where mappings.keptMapping != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(mappings.keptMapping == nil)
    }

    /// Two large bodies in a row: the second is collected in the pages the first one left (its
    /// bytes still there), and the caller sees exactly its own bytes.
    @Test func aLargeBodyAfterAnotherSeesOnlyItsOwnBytes() async throws {
        let server = try await testServer()
        let firstCount = try await AF.request(server.url("/bytes/\(Self.size)?seed=11")).validate().serializingData().value.count
        #expect(firstCount == Self.size)
        // The first body is gone: its mapping waits for this one, a page shorter.
        let second = try await AF.request(server.url("/bytes/\(Self.size - 4096)?seed=12")).validate().serializingData().value
        let expected = try await AF.request(server.url("/stream-bytes/\(Self.size - 4096)?seed=12")).validate().serializingData().value
        #expect(second.count == Self.size - 4096)
        #expect(second == expected)
    }
    #endif

    /// A length that is no multiple of the populating step nor of a page, in parts of every
    /// size: each byte lands where it belongs, twice in a row (the second time in pages the first
    /// body made).
    @Test func oddLengthsArriveWholeInFreshAndReusedPages() async throws {
        let server = try await testServer()
        let size = LargeBodyBuffer.minimumSize + LargeBodyBuffer.populateStep / 2 + 12345
        let expected = try await AF.request(server.url("/stream-bytes/\(size)?seed=13")).validate().serializingData().value
        for _ in 0..<2 {
            let announced = try await AF.request(server.url("/bytes/\(size)?seed=13")).validate().serializingData().value
            #expect(announced.count == size)
            #expect(announced == expected)
        }
    }

    #if os(Linux)
    /// The pages are populated a step ahead of the bytes and never past the buffer; a mapping
    /// taken again remembers how far its pages were made.
    @Test func pagesArePopulatedAheadWithinTheBuffer() throws {
        let mappings = LargeBodyMappings(keptFor: .seconds(5))
        let capacity = LargeBodyBuffer.minimumSize + 4097
        var buffer = try #require(LargeBodyBuffer(capacity: capacity, mappings: mappings))
        #expect(buffer.populatedBytes == 0)
        #expect(buffer.append(Data([7])))
        #expect(buffer.populatedBytes == LargeBodyBuffer.populateStep)
        #expect(buffer.append(Data(repeating: 9, count: capacity - 1)))
        #expect(buffer.populatedBytes == capacity)
        var data: Data? = buffer.handOff()
        #expect(data?.count == capacity && data?.first == 7 && data?.last == 9)
        data = nil
        // The next buffer of about that size takes the same pages, already made.
        #expect(mappings.keptMapping?.backed == capacity)
        buffer = try #require(LargeBodyBuffer(capacity: capacity - 4096, mappings: mappings))
        #expect(buffer.populatedBytes == capacity)
        #expect(buffer.append(Data(repeating: 1, count: capacity - 4096)))
        #expect(buffer.populatedBytes == capacity)
    }
    #endif

    @Test func smallAnnouncedLengthsUseNoMapping() {
        #expect(LargeBodyBuffer(capacity: LargeBodyBuffer.minimumSize - 1) == nil)
        #expect(LargeBodyBuffer(capacity: 0) == nil)
    }
}
