import LupineTestServer

/// One LupineTestServer for the whole test process, started on first use on a free loopback port.
actor SharedTestServer {
    static let instance = SharedTestServer()

    private var starting: Task<LupineTestServer, any Error>?

    func server() async throws -> LupineTestServer {
        if let starting { return try await starting.value }
        let task = Task { try await LupineTestServer.start() }
        starting = task
        return try await task.value
    }
}

/// The shared test server.
func testServer() async throws -> LupineTestServer {
    try await SharedTestServer.instance.server()
}
