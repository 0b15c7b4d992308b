import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import InMemoryTracing
import Lupine
import LupineTestServer
import Testing
import Tracing

/// One client span per request, with OpenTelemetry's HTTP attributes, the caller's context as its
/// parent, and its own context sent with the request.
@Suite struct TracingTests {
    /// The finished spans of `tracer`, once `count` of them have ended (spans end from the
    /// monitor's queue, after the response reached the caller).
    private func finishedSpans(_ tracer: InMemoryTracer, count: Int = 1) async throws -> [FinishedInMemorySpan] {
        #expect(await waitUntil { tracer.finishedSpans.count >= count }, "spans: \(tracer.finishedSpans.map(\.operationName))")
        return tracer.finishedSpans
    }

    private func session(tracing tracer: InMemoryTracer, interceptor: (any RequestInterceptor)? = nil) -> Session {
        Session(interceptor: interceptor, eventMonitors: [TracingEventMonitor(tracer: tracer)])
    }

    @Test func aRequestMakesOneClientSpanWithHTTPAttributes() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let session = session(tracing: tracer)
        let url = server.url("/get?q=1")
        _ = await session.request(url).serializingData().response

        let span = try #require(try await finishedSpans(tracer).first)
        #expect(tracer.finishedSpans.count == 1)
        #expect(span.operationName == "GET")
        #expect(span.kind == .client)
        #expect(span.parentSpanID == nil)
        let port = try #require(URL(string: url)?.port)
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(span.attributes["url.full"]?.toSpanAttribute() == .string(url))
        #expect(span.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
        #expect(span.attributes["server.port"]?.toSpanAttribute() == .int64(Int64(port)))
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(span.attributes["error.type"] == nil)
        #expect(span.attributes["http.request.resend_count"] == nil)
        #expect(span.status == nil)
        #expect(span.events.map(\.name) == ["lupine.request.sent", "lupine.response.received"])
        withExtendedLifetime(session) {}
    }

    @Test func theSpansParentIsTheCallersContextWhenTheRequestIsMade() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let session = session(tracing: tracer)
        let parent = tracer.startSpan("handle incoming request")
        let task = ServiceContext.withValue(parent.context) {
            session.request(server.url("/get")).serializingData()
        }
        _ = await task.response
        parent.end()

        let spans = try await finishedSpans(tracer, count: 2)
        let child = try #require(spans.first { $0.operationName == "GET" })
        #expect(child.parentSpanID == parent.spanID)
        #expect(child.traceID == parent.traceID)
        withExtendedLifetime(session) {}
    }

    @Test func theSpansContextIsInjectedIntoTheRequestSent() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let session = session(tracing: tracer)
        let request = session.request(server.url("/headers"))
        let echo = try await request.serializingDecodable([String: [String: String]].self).value
        let headers = try #require(echo["headers"])
        let span = try #require(try await finishedSpans(tracer).first)
        let sentTraceID = headers.first { $0.key.lowercased() == InMemoryTracer.traceIDKey }?.value
        let sentSpanID = headers.first { $0.key.lowercased() == InMemoryTracer.spanIDKey }?.value
        #expect(sentTraceID == span.traceID)
        #expect(sentSpanID == span.spanID)
        #expect(request.performedRequests.last?.value(forHTTPHeaderField: InMemoryTracer.traceIDKey) == span.traceID)
        withExtendedLifetime(session) {}
    }

    @Test func redirectHopsAreEventsAndCountAsResends() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let session = session(tracing: tracer)
        let request = session.request(server.url("/redirect/2"))
        let echo = try await request.serializingDecodable(HeadersEcho.self).value
        let span = try #require(try await finishedSpans(tracer).first)
        #expect(span.events.filter { $0.name == "lupine.redirect" }.count == 2)
        #expect(span.events.filter { $0.name == "lupine.request.sent" }.count == 3)
        #expect(span.attributes["http.request.resend_count"]?.toSpanAttribute() == 2)
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        // Every hop carried the context.
        let headers = echo.headers
        #expect(headers.contains { $0.key.lowercased() == InMemoryTracer.spanIDKey && $0.value == span.spanID })
        withExtendedLifetime(session) {}
    }

    @Test func retriesAreEventsOfTheSameSpanAndEachAttemptCarriesItsContext() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let retry = RetryPolicy(retryLimit: 2, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01)
        let session = session(tracing: tracer, interceptor: retry)
        let request = session.request(server.url("/fail/1?key=\(UUID().uuidString)&status=503")).validate()
        let response = await request.serializingData().response
        #expect(response.response?.statusCode == 200)

        let spans = try await finishedSpans(tracer)
        #expect(spans.count == 1)
        let span = try #require(spans.first)
        #expect(span.events.map(\.name) == ["lupine.request.sent", "lupine.response.received", "lupine.retry",
                                            "lupine.request.sent", "lupine.response.received"])
        #expect(span.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(span.attributes["error.type"] == nil)
        #expect(request.performedRequests.count == 2)
        #expect(request.performedRequests.allSatisfy { $0.value(forHTTPHeaderField: InMemoryTracer.spanIDKey) == span.spanID })
        withExtendedLifetime(session) {}
    }

    @Test func aStatusOf400OrMoreIsAnErrorNamedByItsCode() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let session = session(tracing: tracer)
        _ = await session.request(server.url("/status/404")).serializingData().response
        _ = await session.request(server.url("/status/503")).validate().serializingData().response

        let spans = try await finishedSpans(tracer, count: 2)
        for code in [404, 503] {
            let span = try #require(spans.first { $0.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(Int64(code)) })
            #expect(span.attributes["error.type"]?.toSpanAttribute() == .string(String(code)))
            #expect(span.status?.code == .error)
        }
        withExtendedLifetime(session) {}
    }

    @Test func aTransportFailureNamesItsURLErrorCode() async throws {
        let tracer = InMemoryTracer()
        let session = session(tracing: tracer)
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        _ = await session.request(refusing.url("/x")).serializingData().response
        let span = try #require(try await finishedSpans(tracer).first)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "cannotConnectToHost")
        #expect(span.attributes["http.response.status_code"] == nil)
        #expect(span.status?.code == .error)
        #expect(span.errors.count == 1)
        #expect(span.events.contains { $0.name == "lupine.attempt.failed" })
        withExtendedLifetime(session) {}
    }

    @Test func credentialsNeverReachTheURLAttribute() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let session = session(tracing: tracer)
        let port = try #require(URL(string: server.url("/"))?.port)
        _ = await session.request("http://alice:hunter2@127.0.0.1:\(port)/get?sig=abc&page=1").serializingData().response
        let span = try #require(try await finishedSpans(tracer).first)
        #expect(span.attributes["url.full"]?.toSpanAttribute()
            == .string("http://REDACTED:REDACTED@127.0.0.1:\(port)/get?sig=REDACTED&page=1"))
        withExtendedLifetime(session) {}
    }

    @Test func adaptersAndRetriersRunInTheRequestsContext() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let seenByAdapter = Locked<[String]>([])
        let seenByRetrier = Locked<[String]>([])
        let interceptor = Interceptor(adaptHandler: { request, _, completion in
            seenByAdapter.withValue { $0.append(ServiceContext.current?.inMemorySpanContext?.spanID ?? "none") }
            completion(.success(request))
        }, retryHandler: { _, _, _, completion in
            seenByRetrier.withValue { $0.append(ServiceContext.current?.inMemorySpanContext?.spanID ?? "none") }
            completion(.doNotRetry)
        })
        let session = session(tracing: tracer, interceptor: interceptor)
        _ = await session.request(server.url("/status/500")).validate().serializingData().response
        let span = try #require(try await finishedSpans(tracer).first)
        #expect(seenByAdapter.current == [span.spanID])
        // The attempt's failure is asked about in the span; the serializer that passes it on asks
        // again (as Alamofire's does) after the request finished and its span ended.
        #expect(seenByRetrier.current.count == 2)
        #expect(seenByRetrier.current.first == span.spanID)
        withExtendedLifetime(session) {}
    }

    /// An authenticator that refreshes through the same Session, as OAuth clients do.
    private final class RefreshingAuthenticator: Authenticator, @unchecked Sendable {
        let tokenURL: String
        init(tokenURL: String) { self.tokenURL = tokenURL }

        func apply(_ credential: OAuthStyleCredential, to urlRequest: inout URLRequest) {
            urlRequest.headers.add(.authorization(bearerToken: credential.token))
        }

        func refresh(_ credential: OAuthStyleCredential, for session: Session,
                     completion: @escaping @Sendable (Result<OAuthStyleCredential, any Error>) -> Void) {
            session.request(tokenURL).validate().response { response in
                completion(response.error.map { .failure($0) } ?? .success(OAuthStyleCredential(token: "fresh", requiresRefresh: false)))
            }
        }

        func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error) -> Bool {
            response.statusCode == 401
        }

        func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: OAuthStyleCredential) -> Bool {
            urlRequest.headers["Authorization"] == "Bearer \(credential.token)"
        }
    }

    private struct OAuthStyleCredential: AuthenticationCredential, Sendable {
        let token: String
        let requiresRefresh: Bool
    }

    /// The token request of a refresh is traced as a child of the request that needed the refresh,
    /// in the same trace (the refresh runs in that request's context).
    @Test func aRefreshsTokenRequestIsAChildOfTheRequestThatNeededIt() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let tokenURL = server.url("/get?token=1")
        let callURL = server.url("/get?call=1")
        let authenticator = RefreshingAuthenticator(tokenURL: tokenURL)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator,
                                                    credential: OAuthStyleCredential(token: "old", requiresRefresh: true))
        let session = session(tracing: tracer)
        let response = await session.request(callURL, interceptor: interceptor).validate().serializingData().response
        #expect(response.error == nil)

        let spans = try await finishedSpans(tracer, count: 2)
        let call = try #require(spans.first { $0.attributes["url.full"]?.toSpanAttribute() == .string(callURL) })
        let token = try #require(spans.first { $0.attributes["url.full"]?.toSpanAttribute() == .string(tokenURL) })
        #expect(token.parentSpanID == call.spanID)
        #expect(token.traceID == call.traceID)
        withExtendedLifetime(session) {}
    }

    @Test func aSessionMadeWhileATracerIsActiveTracesWithIt() async throws {
        let server = try await testServer()
        let tracer = InMemoryTracer()
        let traced = withTracer(tracer) { Session() }
        let untraced = Session()
        #expect(traced.eventMonitor.monitors.contains { $0 is TracingEventMonitor })
        #expect(!untraced.eventMonitor.monitors.contains { $0 is TracingEventMonitor })

        _ = await traced.request(server.url("/get")).serializingData().response
        _ = await untraced.request(server.url("/get")).serializingData().response
        // Only the traced Session's request makes a span.
        let spans = try await finishedSpans(tracer).filter { $0.events.contains { $0.name == "lupine.request.sent" } }
        #expect(spans.count == 1, "\(tracer.finishedSpans.map(\.operationName))")
        withExtendedLifetime((traced, untraced)) {}
    }

    @Test func aMonitorPassedInIsTheOnlyOne() {
        let tracer = InMemoryTracer()
        let session = withTracer(InMemoryTracer()) { Session(eventMonitors: [TracingEventMonitor(tracer: tracer)]) }
        #expect(session.eventMonitor.monitors.filter { $0 is TracingEventMonitor }.count == 1)
    }
}

/// The header fields an echo endpoint saw.
struct HeadersEcho: Decodable {
    let headers: [String: String]
}
