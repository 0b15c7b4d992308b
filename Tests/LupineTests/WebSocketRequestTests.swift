import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

@Suite("WebSocketRequest")
struct WebSocketRequestTests {
    @Test func receivesServerMessagesThenTheServersCloseWithoutError() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?messages=3&close-after=3&close-code=1001&reason=bye"))

        let events = await webSocketEvents(of: request)

        #expect(events.map(\.summary) == [
            "connected(nil)", "text:message 1", "text:message 2", "text:message 3", "disconnected(1001,bye)", "completed(nil)",
        ])
        #expect(request.response?.statusCode == 101)
        #expect(events.last?.completion?.response?.statusCode == 101)
        #expect(request.error == nil)
        #expect(request.isFinished)
    }

    @Test func echoesTextAndBinaryMessagesAndClosesWithAHandshake() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))
        let task = request.webSocketTask()
        let received = Locked<[String]>([])

        let events = await webSocketEvents(of: request) { event in
            switch event.kind {
            case .connected:
                try? await task.send(.string("hello"))
                try? await task.send(.data(Data(repeating: 7, count: 5)))
            case let .receivedMessage(message):
                let count = received.withValue { received in
                    received.append(message.summary)
                    return received.count
                }
                if count == 2 { task.close(sending: .normalClosure, reason: Data("done".utf8)) }
            default: break
            }
        }

        #expect(received.current == ["text:hello", "binary:5"])
        #expect(events.map(\.summary).suffix(2).first == "disconnected(1000,nil)")
        // A close ends the request without an error, as in Alamofire.
        #expect(events.last?.summary == "completed(nil)")
        #expect(request.error == nil)
        #expect(request.isCancelled)
    }

    /// Alamofire's `testThatWebSocketsCanSendAndReceiveMessagesAndClose`, through the handler API.
    @Test func closeFromTheEventHandlerCompletesWithoutAnError() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))
        let summaries = Locked<[String]>([])
        let completion = Locked<WebSocketRequest.Completion?>(nil)

        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            _ = request.streamMessageEvents { event in
                switch event.kind {
                case .connected:
                    summaries.withValue { $0.append("connected") }
                    request.send(.string("Echo")) { _ in }
                case .receivedMessage:
                    summaries.withValue { $0.append("message") }
                    event.close(sending: .normalClosure)
                case let .disconnected(code, _):
                    summaries.withValue { $0.append("disconnected(\(code.rawValue))") }
                case let .completed(value):
                    completion.withValue { $0 = value }
                    done.resume()
                }
            }
        }

        #expect(summaries.current == ["connected", "message", "disconnected(1000)"])
        #expect(completion.current != nil)
        #expect(completion.current?.error == nil)
        #expect(request.error == nil)
    }

    @Test func closeBeforeTheConnectionOpensEndsWithoutAnError() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))
        request.close(sending: .goingAway)

        let events = await webSocketEvents(of: request)

        #expect(events.map(\.summary) == ["completed(nil)"])
        #expect(request.error == nil)
        #expect(request.isCancelled)
    }

    @Test func closeAfterCancelKeepsTheCancellationError() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))

        let events = await webSocketEvents(of: request) { event in
            if case .connected = event.kind {
                event.cancel()
                event.close(sending: .normalClosure)
            }
        }

        #expect(events.last?.completion?.error?.isExplicitlyCancelledError == true)
        #expect(request.error?.isExplicitlyCancelledError == true)
    }

    @Test func reassemblesFragmentedMessages() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?fragments=7"))
        let text = String(repeating: "fragmented é ", count: 1_000)

        let events = await webSocketEvents(of: request) { event in
            switch event.kind {
            case .connected: request.send(.string(text)) { _ in }
            case .receivedMessage: event.close(sending: .normalClosure)
            default: break
            }
        }

        #expect(events.compactMap(\.message).map(\.summary) == ["text:\(text)"])
    }

    @Test func negotiatesTheConfiguredSubprotocol() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?close-after=0"),
                                               configuration: .protocol("chat.v2"))

        let events = await webSocketEvents(of: request)

        #expect(events.first?.summary == "connected(chat.v2)")
        #expect(request.performedRequests.isEmpty == false)
    }

    @Test(arguments: [1, 4])
    func closesWithMessageTooBigWhenAMessageExceedsTheLimit(fragments: Int) async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?oversized=4096&fragments=\(fragments)"),
                                               configuration: .maximumMessageSize(1024))

        let events = await webSocketEvents(of: request)

        #expect(events.map(\.summary).dropLast() == ["connected(nil)", "disconnected(1009,nil)"])
        #expect(events.last?.completion?.error?.sessionTaskURLErrorCode == .dataLengthExceedsMaximum)
    }

    @Test func acceptsAMessageExactlyAtTheLimit() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?oversized=1024&fragments=3&close-after=1"),
                                               configuration: .maximumMessageSize(1024))

        let events = await webSocketEvents(of: request)

        #expect(events.map(\.summary) == ["connected(nil)", "binary:1024", "disconnected(1000,nil)", "completed(nil)"])
    }

    @Test func answersPingsWithPongs() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))
        let responses = Locked<[String]>([])

        _ = await webSocketEvents(of: request) { event in
            guard case .connected = event.kind else { return }
            for _ in 0..<3 {
                let response = await withCheckedContinuation { continuation in
                    request.sendPing { continuation.resume(returning: $0) }
                }
                responses.withValue { $0.append(Self.describe(response)) }
            }
            event.close(sending: .normalClosure)
        }

        #expect(responses.current == ["pong", "pong", "pong"])
    }

    @Test func aPingBeforeTheConnectionOpensIsUnsent() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))

        let response = await withCheckedContinuation { continuation in
            request.sendPing { continuation.resume(returning: $0) }
        }

        #expect(Self.describe(response) == "unsent")
        request.cancel()
    }

    @Test func sendsAutomaticPingsAtThePingInterval() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"), configuration: .pingInterval(0.05))
        let task = request.webSocketTask()

        let events = await webSocketEvents(of: request) { event in
            switch event.kind {
            case .connected:
                try? await Task.sleep(for: .milliseconds(400))
                try? await task.send(.string("ping-count"))
            case .receivedMessage: task.close(sending: .normalClosure)
            default: break
            }
        }

        let reply = events.compactMap(\.message).first?.summary ?? ""
        let count = Int(reply.replacingOccurrences(of: "text:pings: ", with: "")) ?? 0
        #expect(count >= 1, "server saw \(reply)")
    }

    @Test func detectsAServerThatStopsAnsweringPings() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?ignore-pings=1"),
                                               configuration: .pingInterval(0.1))

        let events = await webSocketEvents(of: request)

        #expect(events.map(\.summary).first == "connected(nil)")
        #expect(!events.contains { if case .disconnected = $0.kind { true } else { false } })
        #expect(events.last?.completion?.error?.sessionTaskURLErrorCode == .networkConnectionLost)
    }

    @Test func aDroppedConnectionFailsWithNetworkConnectionLost() async throws {
        let server = try await testServer()
        let session = Session()
        // The server echoes one message, then goes away without a close frame.
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?drop-after=1"))

        let events = await webSocketEvents(of: request) { event in
            if case .connected = event.kind { request.send(.string("hello")) { _ in } }
        }

        #expect(events.map(\.summary).prefix(2) == ["connected(nil)", "text:hello"])
        #expect(events.count == 3)
        #expect(events.last?.completion?.error?.sessionTaskURLErrorCode == .networkConnectionLost)
    }

    @Test func cancelDropsTheConnectionWithoutADisconnectedEvent() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))

        let events = await webSocketEvents(of: request) { event in
            if case .connected = event.kind { event.cancel() }
        }

        #expect(events.map(\.summary).count == 2)
        #expect(events.last?.completion?.error?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
    }

    @Test func anAdapterAddsTheTokenToTheOpeningRequest() async throws {
        let server = try await testServer()
        let session = Session()
        let adapter = Adapter { request, _, completion in
            var request = request
            request.headers.add(.authorization(bearerToken: "secret"))
            completion(.success(request))
        }
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?require-bearer=secret&send-header=Authorization&close-after=1"),
                                               interceptor: adapter)

        let events = await webSocketEvents(of: request)

        #expect(events.map(\.summary) == ["connected(nil)", "text:Bearer secret", "disconnected(1000,nil)", "completed(nil)"])
        #expect(request.lastRequest?.headers["Authorization"] == "Bearer secret")
    }

    @Test func aRetrierRetriesARefusedOpeningRequestWithAToken() async throws {
        let server = try await testServer()
        let session = Session()
        let hasToken = Locked(false)
        let interceptor = Interceptor(adaptHandler: { request, _, completion in
            var request = request
            if hasToken.current { request.headers.add(.authorization(bearerToken: "secret")) }
            completion(.success(request))
        }, retryHandler: { request, _, _, completion in
            guard request.response?.statusCode == 401, request.retryCount == 0 else {
                completion(.doNotRetry)
                return
            }
            hasToken.withValue { $0 = true }
            completion(.retry)
        })
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?require-bearer=secret&close-after=0"),
                                               interceptor: interceptor)

        let events = await webSocketEvents(of: request)

        #expect(events.map(\.summary) == ["connected(nil)", "disconnected(1000,nil)", "completed(nil)"])
        #expect(request.retryCount == 1)
        #expect(request.response?.statusCode == 101)
    }

    @Test func aRefusedUpgradeFailsWithTheResponsesStatusCode() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?require-bearer=secret"))

        let events = await webSocketEvents(of: request)

        #expect(events.count == 1)
        #expect(request.response?.statusCode == 401)
        guard case let .responseValidationFailed(reason: .unacceptableStatusCode(code)) = events.last?.completion?.error else {
            Issue.record("unexpected \(String(describing: request.error))")
            return
        }
        #expect(code == 401)
    }

    @Test func anEndpointThatIsNotAWebSocketFailsWithItsStatusCode() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/get"))

        let events = await webSocketEvents(of: request)

        #expect(request.response?.statusCode == 200)
        #expect(events.last?.completion?.error?.responseCode == 200)
        // The connection is not left half-open: the Session still works.
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func messagesSentBeforeTheConnectionOpensAreDelivered() async throws {
        let server = try await testServer()
        let session = Session()
        // The request starts when the events are iterated, after these sends.
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?close-after=2"))
        let results = Locked<[Bool]>([])
        for text in ["first", "second"] {
            request.send(.string(text)) { result in results.withValue { $0.append((try? result.get()) != nil) } }
        }

        let events = await webSocketEvents(of: request)

        #expect(events.compactMap(\.message).map(\.summary) == ["text:first", "text:second"])
        #expect(results.current == [true, true])
    }

    @Test func sendingAfterTheRequestFinishedFails() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?close-after=0"))
        _ = await webSocketEvents(of: request)

        let result = await withCheckedContinuation { continuation in
            request.send(.string("late")) { continuation.resume(returning: $0) }
        }

        #expect((try? result.get()) == nil)
    }

    @Test func decodesJSONMessagesAndReportsThoseThatDoNotDecode() async throws {
        struct Greeting: Decodable, Sendable { let name: String }
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?close-after=2"))
        request.send(.string(#"{"name":"lupine"}"#)) { _ in }
        request.send(.string("not json")) { _ in }
        let kinds = Locked<[String]>([])

        for await event in request.webSocketTask().streamingDecodableEvents(Greeting.self) {
            switch event.kind {
            case let .receivedMessage(greeting): kinds.withValue { $0.append("name:\(greeting.name)") }
            case let .serializerFailed(error):
                let isDecoding = if case .decoding = error as? DecodableWebSocketMessageDecoder<Greeting>.Error { true } else { false }
                kinds.withValue { $0.append("failed:\(isDecoding)") }
            default: break
            }
        }

        #expect(kinds.current == ["name:lupine", "failed:true"])
    }

    @Test func handlerAPIRunsOnTheGivenQueue() async throws {
        let server = try await testServer()
        let session = Session()
        let queue = DispatchQueue(label: "websocket.test.handlers")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let onQueue = Locked<[Bool]>([])

        let messages: [String] = await withCheckedContinuation { continuation in
            let collected = Locked<[String]>([])
            session.webSocketRequest(to: server.webSocketURL("/websocket/echo?messages=2&close-after=2"))
                .streamMessageEvents(on: queue) { event in
                    onQueue.withValue { $0.append(DispatchQueue.getSpecific(key: key) == true) }
                    if let message = event.message { collected.withValue { $0.append(message.summary) } }
                    if case .completed = event.kind { continuation.resume(returning: collected.current) }
                }
        }

        #expect(messages == ["text:message 1", "text:message 2"])
        #expect(onQueue.current.allSatisfy { $0 })
    }

    @Test func aClosedPortFailsWithCannotConnectToHost() async throws {
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let session = Session()
        let request = session.webSocketRequest(to: refusing.url("/websocket/echo", scheme: "ws"))

        let events = await webSocketEvents(of: request)

        #expect(events.count == 1)
        #expect(events.last?.completion?.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
    }

    @Test func wssSpeaksTLS() async throws {
        // The test server speaks plain HTTP: the TLS handshake fails, which shows that wss uses TLS.
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: "wss://127.0.0.1:\(server.port)/websocket/echo")

        let events = await webSocketEvents(of: request)

        #expect(events.last?.completion?.error?.sessionTaskURLErrorCode == .secureConnectionFailed)
    }

    @Test func anUnsupportedSchemeFailsWithUnsupportedURL() async throws {
        let session = Session()
        let request = session.webSocketRequest(to: "ftp://127.0.0.1/websocket")

        let events = await webSocketEvents(of: request)

        #expect(events.last?.completion?.error?.sessionTaskURLErrorCode == .unsupportedURL)
    }

    private static func describe(_ response: WebSocketRequest.PingResponse) -> String {
        switch response {
        case .pong: "pong"
        case let .error(error): "error(\(error))"
        case .unsent: "unsent"
        }
    }
}
