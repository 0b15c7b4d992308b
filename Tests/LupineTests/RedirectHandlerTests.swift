import Foundation
import Lupine
import LupineTestServer
import Testing

/// `RedirectHandler` and `Redirector` deciding each hop Lupine follows.
@Suite struct RedirectHandlerTests {
    @Test func doNotFollowReturnsTheRedirectResponseItself() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/redirect/1")).redirect(using: .doNotFollow)
        let response = await request.serializingData(emptyResponseCodes: [302]).response
        #expect(response.response?.statusCode == 302)
        #expect(response.response?.value(forHTTPHeaderField: "Location") == "/get")
        #expect(response.timeline.redirectCount == 0)
    }

    @Test func modifyCanChangeTheNextRequest() async throws {
        let server = try await testServer()
        let sawTask = Locked<(path: String?, status: Int?)>((nil, nil))
        let redirector = Redirector.modify { task, request, response in
            sawTask.withValue { $0 = (task.currentRequest?.url?.path, (task.response as? HTTPURLResponse)?.statusCode) }
            var request = request
            request.setValue("modified", forHTTPHeaderField: "X-Redirected")
            return request
        }
        let echo = try await AF.request(server.url("/redirect/1")).redirect(using: redirector)
            .serializingDecodable(HTTPBinResponse.self).value
        #expect(echo.header("X-Redirected") == "modified")
        #expect(sawTask.current.path == "/redirect/1")
        #expect(sawTask.current.status == 302)
    }

    @Test func sessionHandlerAppliesAndRequestHandlerTakesPrecedence() async throws {
        let server = try await testServer()
        let session = Session(redirectHandler: Redirector.doNotFollow)
        let stopped = await session.request(server.url("/redirect/1")).serializingData(emptyResponseCodes: [302]).response
        #expect(stopped.response?.statusCode == 302)
        let followed = await session.request(server.url("/redirect/1")).redirect(using: .follow).serializingData().response
        #expect(followed.response?.statusCode == 200)
    }

    @Test func handlerAnsweringLaterOnAnotherQueueIsWaitedFor() async throws {
        struct SlowHandler: RedirectHandler {
            func task(_ task: URLSessionTask, willBeRedirectedTo request: URLRequest, for response: HTTPURLResponse,
                      completion: @escaping (URLRequest?) -> Void) {
                nonisolated(unsafe) let completion = completion
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { completion(request) }
            }
        }
        let server = try await testServer()
        let response = await AF.request(server.url("/redirect/2")).redirect(using: SlowHandler()).serializingData().response
        #expect(response.response?.url?.path == "/get")
        #expect(response.timeline.redirectCount == 2)
    }

    @Test func tooManyRedirectsFailEvenWithAHandlerThatFollows() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/redirect/17")).redirect(using: .follow).serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .httpTooManyRedirects)
    }

    /// A decision taken on another queue can reach the transport before the `.pause` it answers:
    /// a lost wake-up would leave requests hanging.
    ///
    /// A stalled request never finishes, so the watchdog gives up once no request has finished
    /// for 15 s, however long the hundred take in all: a bound on the whole run (20 s) came
    /// within a few seconds of it on a loaded machine, where the hundred took up to 14 s.
    @Test func immediateAnswersNeverStallRequests() async throws {
        let server = try await testServer()
        let queue = DispatchQueue(label: "immediate", attributes: .concurrent)
        let finished = Locked(0)
        let codes = await withTaskGroup(of: [Int?]?.self) { race in
            race.addTask {
                await withTaskGroup(of: Int?.self) { group in
                    for index in 0..<100 {
                        group.addTask {
                            let request = index.isMultiple(of: 2)
                                ? AF.request(server.url("/get")).onHTTPResponse(on: queue) { _, completion in completion(.allow) }
                                : AF.request(server.url("/redirect/1")).redirect(using: .follow)
                            let code = await request.serializingData().response.response?.statusCode
                            finished.increment()
                            return code
                        }
                    }
                    var codes: [Int?] = []
                    for await code in group { codes.append(code) }
                    return codes
                }
            }
            race.addTask {
                var seen = -1
                var quietSince = ContinuousClock.now
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(100))
                    let count = finished.current
                    if count != seen {
                        seen = count
                        quietSince = .now
                    } else if ContinuousClock.now - quietSince > .seconds(15) {
                        return nil
                    }
                }
                return nil
            }
            // The watchdog's nil cancels the requests still waiting (their tasks cancel them).
            let first = await race.next() ?? nil
            race.cancelAll()
            return first
        }
        #expect(codes?.count == 100, "requests stalled: \(finished.current) of 100 finished")
        #expect(codes?.allSatisfy { $0 == 200 } == true)
    }
}

@Suite struct RedirectHandlerMisuseTests {
    @Test func settingTheRedirectHandlerTwiceKeepsTheLastInsteadOfTrapping() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/redirect/1"))
            .redirect(using: .follow)
            .redirect(using: .doNotFollow)
            .serializingData(emptyResponseCodes: [302]).response
        #expect(response.response?.statusCode == 302)
    }
}
