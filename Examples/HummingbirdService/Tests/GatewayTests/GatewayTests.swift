import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Gateway
import InMemoryTracing
import Lupine
import Synchronization
import Testing
import Tracing

/// The gateway and a stand-in upstream on loopback. One test at a time: the test of the gateway's
/// own routes while an upstream check blocks measures time, and must not share the machine's
/// cores with the others.
@Suite(.serialized) struct GatewayTests {
    @Test func itsOwnRouteAnswersWithoutCallingTheUpstream() async throws {
        try await GatewayHarness.run { harness in
            let body = try await harness.client.request("\(harness.baseURL)/health").validate().serializingString().value
            #expect(body == "ok")
            #expect(harness.upstream.tokensIssued == 0)
        }
    }

    @Test func anItemComesFromTheUpstreamWithATokenFetchedFirst() async throws {
        try await GatewayHarness.run { harness in
            let item = try await harness.item("42")
            #expect(item == Item(id: "42", name: "Item 42"))
            #expect(harness.upstream.tokensIssued == 1)
            #expect(harness.upstream.itemCalls("42") == 1)
            #expect(harness.upstream.unauthorizedCalls == 0)
        }
    }

    @Test func aFreshResponseIsServedFromTheCache() async throws {
        try await GatewayHarness.run { harness in
            let first = try await harness.item("7")
            let second = try await harness.item("7")
            #expect(first == second)
            #expect(harness.upstream.itemCalls("7") == 1)
        }
    }

    @Test func anUnavailableUpstreamIsRetried() async throws {
        try await GatewayHarness.run { harness in
            harness.upstream.failNextCalls(of: "9", times: 2)
            let item = try await harness.item("9")
            #expect(item.id == "9")
            #expect(harness.upstream.itemCalls("9") == 3)
        }
    }

    @Test func retriesStopAtTheLimitAndTheCallerGetsABadGateway() async throws {
        try await GatewayHarness.run { harness in
            harness.upstream.failNextCalls(of: "5", times: 10)
            #expect(await harness.status(of: "/items/5") == 502)
            // The first call and the RetryPolicy's two retries.
            #expect(harness.upstream.itemCalls("5") == 3)
        }
    }

    @Test func aRevokedTokenIsRefreshedAndTheCallRetried() async throws {
        try await GatewayHarness.run { harness in
            _ = try await harness.item("1")
            harness.upstream.revokeToken()
            let item = try await harness.item("2")
            #expect(item.id == "2")
            #expect(harness.upstream.tokensIssued == 2)
            #expect(harness.upstream.unauthorizedCalls == 1)
            #expect(harness.upstream.itemCalls("2") == 2)
        }
    }

    @Test func theUpstreamsNotFoundIsPassedOn() async throws {
        try await GatewayHarness.run { harness in
            #expect(await harness.status(of: "/items/missing") == 404)
            #expect(harness.upstream.itemCalls("missing") == 1)
        }
    }

    @Test func eachUpstreamCallIsAClientSpanUnderTheIncomingRequestsSpan() async throws {
        let tracer = InMemoryTracer()
        let traceID = "trace-\(UUID().uuidString)"
        try await GatewayHarness.run(tracer: tracer) { harness in
            // The caller's context, as an upstream service of the gateway would send it.
            let headers: HTTPHeaders = [InMemoryTracer.traceIDKey: traceID, InMemoryTracer.spanIDKey: "caller"]
            #expect(await harness.status(of: "/items/3", headers: headers) == 200)
            #expect(harness.upstream.traceIDs == [traceID])
            #expect(await waitUntil { tracer.finishedSpans.filter { $0.traceID == traceID }.count >= 2 },
                    "spans: \(tracer.finishedSpans.map { "\($0.kind) \($0.operationName)" })")
        }
        let spans = tracer.finishedSpans.filter { $0.traceID == traceID }
        let server = try #require(spans.first { $0.kind == .server })
        #expect(server.parentSpanID == "caller")
        #expect(server.operationName == "/items/{id}")
        let call = try #require(spans.first { $0.kind == .client && $0.operationName == "GET" })
        #expect(call.parentSpanID == server.spanID)
        #expect(call.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        // The token request the first call needed is traced too, by the same Session.
        #expect(await waitUntil { tracer.finishedSpans.contains { $0.kind == .client && $0.operationName == "POST" } })
    }

    @Test func itsOwnRoutesAnswerPromptlyWhileAnUpstreamCheckBlocks() async throws {
        let (checkStarted, checkStart) = AsyncStream.makeStream(of: Void.self)
        try await GatewayHarness.run { configuration in
            configuration.responseCheck = { _, _, _ in
                checkStart.yield()
                // A handler that blocks its thread for 2 s: Lupine runs it off the event loops
                // that Hummingbird and Lupine share, so nothing else waits for it.
                Thread.sleep(forTimeInterval: 2)
                return .success(())
            }
        } _: { harness in
            let slowCallDone = Flag()
            let slowCall = Task {
                defer { slowCallDone.set() }
                return try await harness.item("11")
            }
            var started = checkStarted.makeAsyncIterator()
            await started.next()

            // Each on a connection of its own, so that the server's event loops take turns.
            let clock = ContinuousClock()
            let start = clock.now
            for _ in 0..<4 {
                let session = Session()
                let status = await session.request("\(harness.baseURL)/health").serializingData().response.response?.statusCode
                await session.shutdown(gracePeriod: .zero)
                #expect(status == 200)
            }
            let elapsed = clock.now - start
            #expect(elapsed < .seconds(1), "4 health checks took \(elapsed) while an upstream check blocked")
            #expect(!slowCallDone.isSet, "the blocking check ended before the health checks did")
            let slowItem = try await slowCall.value
            #expect(slowItem.id == "11")
        }
    }

    @Test func stoppingTheServiceShutsItsSessionDown() async throws {
        let harness = try await GatewayHarness.run { harness in
            let item = try await harness.item("8")
            #expect(item.id == "8")
        }
        await #expect {
            _ = try await harness.gateway.upstream.item(id: "8")
        } throws: { error in
            guard case .sessionInvalidated = error as? AFError else { return false }
            return true
        }
    }
}

/// A flag set once, read from any thread.
private final class Flag: Sendable {
    private let value = Mutex(false)

    var isSet: Bool { value.withLock { $0 } }

    func set() {
        value.withLock { $0 = true }
    }
}
