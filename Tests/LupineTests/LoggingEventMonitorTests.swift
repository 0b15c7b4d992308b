import Foundation
import Logging
import Lupine
import LupineTestServer
import Testing

/// LoggingEventMonitor logs the request line, status, duration and sizes through swift-log, and
/// bodies only when asked.
@Suite struct LoggingEventMonitorTests {
    /// A logger whose lines are kept in `store`.
    private func logger(into store: LogStore, level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "test.lupine") { _ in InMemoryLogHandler(store: store) }
        logger.logLevel = level
        return logger
    }

    @Test func logsTheRequestLineThenTheStatusDurationAndSize() async throws {
        let server = try await testServer()
        let store = LogStore()
        let session = Session(eventMonitors: [LoggingEventMonitor(logger: logger(into: store))])
        let request = session.request(server.url("/bytes/100"))
        _ = await request.serializingData().response
        #expect(await waitUntil { store.messages.contains { $0.hasPrefix("←") } })
        let url = server.url("/bytes/100")
        #expect(store.messages.first == "→ GET \(url)")
        let completion = try #require(store.messages.last)
        #expect(completion.hasPrefix("← 200 GET \(url) ("))
        #expect(completion.hasSuffix("s, 100 bytes)"))
        #expect(store.entries.allSatisfy { $0.level == .info })
        #expect(store.entries.allSatisfy { $0.metadata["lupine.request.id"] == "\(request.id.uuidString)" })
        withExtendedLifetime(session) {}
    }

    @Test func logsNoBodyUnlessAsked() async throws {
        let server = try await testServer()
        let store = LogStore()
        let session = Session(eventMonitors: [LoggingEventMonitor(logger: logger(into: store))])
        _ = await session.request(server.url("/post"), method: .post, parameters: ["secret": "hunter2"],
                                  encoding: JSONEncoding.default).serializingData().response
        #expect(await waitUntil { store.messages.contains { $0.hasPrefix("←") } })
        #expect(store.messages.first?.hasSuffix("(20 bytes)") == true)
        #expect(store.entries.allSatisfy { entry in
            entry.metadata["lupine.request.body"] == nil && entry.metadata["lupine.response.body"] == nil
        })
        #expect(!store.everything.contains("hunter2"))
        withExtendedLifetime(session) {}
    }

    @Test func logsBodiesWhenAskedCutAfterTheMaximumLength() async throws {
        let server = try await testServer()
        let store = LogStore()
        let monitor = LoggingEventMonitor(logger: logger(into: store), logsBodies: true, maximumBodyLength: 64)
        let session = Session(eventMonitors: [monitor])
        let response = await session.request(server.url("/post"), method: .post, parameters: ["secret": "hunter2"],
                                             encoding: JSONEncoding.default).serializingData().response
        #expect(await waitUntil { store.messages.contains { $0.hasPrefix("←") } })
        let sent = try #require(store.entries.first)
        #expect(sent.metadata["lupine.request.body"] == "{\"secret\":\"hunter2\"}")
        let received = try #require(store.entries.last?.metadata["lupine.response.body"])
        let bodyLength = try #require(response.data?.count)
        #expect(bodyLength > 64)
        #expect(received.hasSuffix("… (\(bodyLength) bytes in all)"))
        #expect(received.utf8.count < 64 + 40)
        withExtendedLifetime(session) {}
    }

    @Test func logsAtTheLevelGiven() async throws {
        let server = try await testServer()
        let store = LogStore()
        let monitor = LoggingEventMonitor(logger: logger(into: store), level: .debug)
        let session = Session(eventMonitors: [monitor])
        _ = await session.request(server.url("/get")).serializingData().response
        #expect(await waitUntil { store.messages.contains { $0.hasPrefix("←") } })
        #expect(store.entries.allSatisfy { $0.level == .debug })

        let quiet = LogStore()
        let quietSession = Session(eventMonitors: [LoggingEventMonitor(logger: logger(into: quiet, level: .info), level: .debug)])
        _ = await quietSession.request(server.url("/get")).serializingData().response
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(quiet.entries.isEmpty)
        withExtendedLifetime((session, quietSession)) {}
    }

    @Test func logsValidationFailuresRetriesAndTransportErrors() async throws {
        let server = try await testServer()
        let store = LogStore()
        let session = Session(eventMonitors: [LoggingEventMonitor(logger: logger(into: store))])
        let retryOnce = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
        _ = await session.request(server.url("/status/500"), interceptor: retryOnce).validate().serializingData().response
        #expect(await waitUntil { store.messages.filter { $0.hasPrefix("← 500") }.count == 2 }, "\(store.messages)")
        let url = server.url("/status/500")
        #expect(store.messages.filter { $0 == "→ GET \(url)" }.count == 2)
        #expect(store.messages.contains { $0.hasPrefix("✗ GET \(url) validation failed: ") && $0.contains("500") })
        #expect(store.messages.contains("↻ retrying GET \(url) (retry 1)"))

        let unreachable = "http://127.0.0.1:1/refused"
        _ = await session.request(unreachable).serializingData().response
        #expect(await waitUntil { store.messages.contains { $0.hasPrefix("✗ GET \(unreachable) failed after ") } })
        withExtendedLifetime(session) {}
    }
}


/// What LoggingEventMonitor puts in metadata, and what it keeps out of the log.
@Suite struct LoggingEventMonitorMetadataTests {
    private func logger(into store: LogStore) -> Logger {
        var logger = Logger(label: "test.lupine") { _ in InMemoryLogHandler(store: store) }
        logger.logLevel = .trace
        return logger
    }

    @Test func everyLineCarriesMethodHostStatusDurationAndRequestIDAsMetadata() async throws {
        let server = try await testServer()
        let store = LogStore()
        let session = Session(eventMonitors: [LoggingEventMonitor(logger: logger(into: store))])
        let request = session.request(server.url("/status/201"), method: .put)
        _ = await request.serializingData().response
        #expect(await waitUntil { store.messages.contains { $0.hasPrefix("←") } })
        let sent = try #require(store.entries.first { $0.message.hasPrefix("→") })
        let completed = try #require(store.entries.first { $0.message.hasPrefix("←") })
        for entry in [sent, completed] {
            #expect(entry.metadata["lupine.request.id"] == request.id.uuidString)
            #expect(entry.metadata["lupine.request.method"] == "PUT")
            #expect(entry.metadata["lupine.request.host"] == "127.0.0.1")
            #expect(entry.metadata["lupine.request.url"] == server.url("/status/201"))
        }
        #expect(sent.metadata["lupine.response.status"] == nil)
        #expect(completed.metadata["lupine.response.status"] == "201")
        let duration = try #require(completed.metadata["lupine.request.duration"].flatMap(Double.init))
        #expect(duration >= 0 && duration < 60)
        withExtendedLifetime(session) {}
    }

    @Test func urlCredentialsAndSensitiveQueryValuesAreRedacted() async throws {
        let server = try await testServer()
        let store = LogStore()
        let session = Session(eventMonitors: [LoggingEventMonitor(logger: logger(into: store))])
        let port = try #require(URL(string: server.url("/"))?.port)
        let url = "http://alice:hunter2@127.0.0.1:\(port)/get?access_token=s3cr3t&page=2&API_KEY=k3y"
        _ = await session.request(url).serializingData().response
        #expect(await waitUntil { store.messages.contains { $0.hasPrefix("←") } })
        let everything = store.everything
        for secret in ["alice", "hunter2", "s3cr3t", "k3y"] {
            #expect(!everything.contains(secret), "\(secret) was logged: \(everything)")
        }
        #expect(store.messages.first == "→ GET http://***@127.0.0.1:\(port)/get?access_token=***&page=2&API_KEY=***")
        withExtendedLifetime(session) {}
    }

    /// The engine's own connection events go to the logger its configuration names.
    @Test func theEngineLogsConnectionEventsToTheLoggerItWasGiven() async throws {
        let server = try await testServer()
        let store = LogStore()
        let configuration = URLSessionConfiguration.af.default
        var engineLogger = Logger(label: "test.lupine.engine") { _ in InMemoryLogHandler(store: store) }
        engineLogger.logLevel = .debug
        let engine = ConnectionEngine(configuration: .init(sessionConfiguration: configuration, logger: engineLogger))
        let session = Session(transport: engine, configuration: configuration)

        _ = await session.request(server.url("/get")).serializingData().response

        let origin = "127.0.0.1:\(server.port)"
        let opened = try #require(store.entries.first { $0.message == "connection open" })
        #expect(opened.metadata["origin"] == origin)
        #expect(opened.level == .debug)
        withExtendedLifetime(session) {}
    }

    @Test func credentialsInErrorDescriptionsAreRedacted() async throws {
        let store = LogStore()
        let session = Session(eventMonitors: [LoggingEventMonitor(logger: logger(into: store))])
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        _ = await session.request("http://bob:pa55word@127.0.0.1:\(refusing.port)/x?token=t0k3n").serializingData().response
        #expect(await waitUntil { store.messages.contains { $0.hasPrefix("✗") } })
        #expect(!store.everything.contains("pa55word"))
        #expect(!store.everything.contains("t0k3n"))
        withExtendedLifetime(session) {}
    }

    @Test func headersAreLoggedOnlyWhenAskedWithSensitiveValuesMasked() async throws {
        let server = try await testServer()
        let quiet = LogStore()
        let quietSession = Session(eventMonitors: [LoggingEventMonitor(logger: logger(into: quiet))])
        let headers: HTTPHeaders = [.authorization(bearerToken: "b34r3r"), HTTPHeader(name: "X-Trace-Note", value: "visible")]
        // X-Auth-Token, not Set-Cookie: a cookie would land in the shared cookie storage other tests read.
        let url = server.url("/response-headers?X-Auth-Token=r3sp0ns3&X-Served-By=srv-n4me")
        _ = await quietSession.request(url, headers: headers).serializingData().response
        #expect(await waitUntil { quiet.messages.contains { $0.hasPrefix("←") } })
        #expect(quiet.entries.allSatisfy { $0.metadata["lupine.request.headers"] == nil && $0.metadata["lupine.response.headers"] == nil })

        let store = LogStore()
        let session = Session(eventMonitors: [LoggingEventMonitor(logger: logger(into: store), logsHeaders: true,
                                                                  redactedHeaders: LoggingEventMonitor.defaultRedactedHeaders.union(["X-Served-By"]))])
        _ = await session.request(url, headers: headers).serializingData().response
        #expect(await waitUntil { store.messages.contains { $0.hasPrefix("←") } })
        let sent = try #require(store.entries.first { $0.message.hasPrefix("→") }?.metadata["lupine.request.headers"])
        let received = try #require(store.entries.first { $0.message.hasPrefix("←") }?.metadata["lupine.response.headers"])
        #expect(sent.contains("visible"))
        #expect(sent.contains("***"))
        #expect(received.contains("***"))
        // The response token is in the URL asked for (the server echoes it as a header field), so
        // only the logged response header fields are checked for it.
        #expect(!store.everything.contains("b34r3r"), "the bearer token was logged")
        #expect(!received.contains("r3sp0ns3"), "the X-Auth-Token value was logged: \(received)")
        #expect(!received.contains("srv-n4me"), "a header named in redactedHeaders was logged: \(received)")
        withExtendedLifetime((session, quietSession)) {}
    }
}

/// Log lines kept in memory, for tests.
final class LogStore: Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let lines = Locked<[Entry]>([])

    var entries: [Entry] { lines.current }
    var messages: [String] { entries.map(\.message) }
    /// Every message and metadata value, joined.
    var everything: String {
        entries.map { ([$0.message] + $0.metadata.values).joined(separator: " ") }.joined(separator: "\n")
    }

    func append(_ entry: Entry) { lines.withValue { $0.append(entry) } }
}

/// A swift-log handler that appends to a `LogStore`.
struct InMemoryLogHandler: LogHandler {
    let store: LogStore
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        store.append(LogStore.Entry(level: event.level, message: event.message.description,
                                    metadata: merged.mapValues(\.description)))
    }
}
