import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// What Alamofire's own WebSocket tests expect of the handler API, over loopback.
@Suite("WebSocketRequest, as Alamofire's tests use it")
struct WebSocketAlamofireParityTests {
    /// Every handler added with `streamMessageEvents` sees every event, in order.
    @Test func twoEventHandlersBothSeeTheWholeConversation() async throws {
        let server = try await testServer()
        let session = Session()
        let first = Locked<[String]>([])
        let second = Locked<[String]>([])
        let done = Locked(0)
        session.webSocketRequest(to: server.webSocketURL("/websocket/echo?messages=1&close-after=1&close-code=1001"))
            .streamMessageEvents { event in
                first.withValue { $0.append(event.summary) }
                if case .completed = event.kind { done.withValue { $0 += 1 } }
            }
            .streamMessageEvents { event in
                second.withValue { $0.append(event.summary) }
                if case .completed = event.kind { done.withValue { $0 += 1 } }
            }
        #expect(await waitUntil { done.current == 2 })
        #expect(first.current == ["connected(nil)", "text:message 1", "disconnected(1001,nil)", "completed(nil)"])
        #expect(second.current == first.current)
    }

    /// Alamofire's `testOnePingOnly`: a hundred pings in a row each get their pong, and a close
    /// sent from the last pong's handler ends the request without an error.
    @Test func aHundredPingsEachGetAPongThenTheCloseEndsCleanly() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))
        let pongs = Locked(0)
        let events = Locked<[String]>([])
        let finished = Locked(false)
        request.streamMessageEvents { [request] event in
            events.withValue { $0.append(event.summary) }
            switch event.kind {
            case .connected:
                request.send(.string("Echo")) { _ in }
            case .receivedMessage:
                for count in 0..<100 {
                    request.sendPing { response in
                        if case .pong = response { pongs.withValue { $0 += 1 } }
                        if count == 99 { request.close(sending: .normalClosure) }
                    }
                }
            case .completed:
                finished.withValue { $0 = true }
            default: break
            }
        }
        #expect(await waitUntil { finished.current })
        #expect(pongs.current == 100)
        #expect(events.current == ["connected(nil)", "text:Echo", "disconnected(1000,nil)", "completed(nil)"])
    }

    /// Alamofire's `testThatWebSocketFailsWithTooSmallMaximumMessageSize`.
    @Test func aMessageOverTheMaximumSizeEndsWithAnError() async throws {
        let server = try await testServer()
        let session = Session()
        let completion = Locked<WebSocketRequest.Completion?>(nil)
        session.webSocketRequest(to: server.webSocketURL("/websocket/echo?messages=1"), configuration: .maximumMessageSize(1))
            .streamMessageEvents { event in
                if case let .completed(value) = event.kind { completion.withValue { $0 = value } }
            }
        #expect(await waitUntil { completion.current != nil })
        #expect(completion.current?.error != nil)
    }
}
